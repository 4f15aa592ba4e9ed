import type { RunRef } from '../../../lib/core/run-ref.js';
import { runStep, type StepResult } from '../../../lib/engine/step-runner.js';
import type { WorkerProcess, World } from '../../../lib/testing/world.js';
import { sweep } from '../../../lib/engine/sweep.js';

/** Deliver every queued tick of the run to `worker`, as the Lambda poller would; returns the results. */
export async function drain(world: World, worker: WorkerProcess, max = 50): Promise<StepResult[]> {
  const results: StepResult[] = [];
  for (let i = 0; i < max; i++) {
    const next = world.storage.queue.take();
    if (!next) return results;
    results.push(await runStep(worker.deps, next.tick, { owner: worker.name, deadlineAt: world.clock.now() + 300_000 }));
  }
  throw new Error(`still ticking after ${max} steps`);
}

/** Let time pass, then run the sweeper once (as the scheduled sweeper would) and drain. `_round` names the pass in the test only. */
export async function later(world: World, worker: WorkerProcess, ms: number, _round: number): Promise<{ woken: number; results: StepResult[] }> {
  await world.clock.advance(ms);
  const { woken } = await sweep(worker.deps);
  return { woken, results: await drain(world, worker) };
}

export async function headOf(world: World, run: RunRef) {
  const head = await world.storage.heads.getHead(run);
  if (!head) throw new Error('no head');
  return head;
}
