import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runStep } from '../../../lib/engine/step-runner.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { spawnWorker, type WorkerProcess } from '../../../lib/testing/world.js';

const echo = defineTool({ name: 'echo', version: '1', description: 'e', input: z.object({ n: z.number() }), policy: 'rerun', execute: async ({ n }) => n });

/** Run `turns` one-tool turns, one per step, and record items read by each step. */
async function measure(turns: number, mode: 'warm' | 'cold') {
  const t = scriptedWorld({
    tools: [echo],
    script: [(req) => ({ calls: [{ name: 'echo', args: { n: req.messages.length } }] })],
    budgets: { maxSteps: 1000, maxInputTokens: 50_000_000, maxCostUsd: 500 },
    // Keep each turn to one step so a step is one model call and one tool call.
  });
  await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
  const reads: number[] = [];
  let warm: WorkerProcess = spawnWorker(t.world, undefined, { snapshotEvery: 50 });
  for (let i = 0; i < turns; i++) {
    const msg = t.storage.queue.take();
    if (!msg) throw new Error(`no tick at step ${i}: ${JSON.stringify((await t.storage.heads.getHead(t.run))?.outcome)}`);
    const worker = mode === 'warm' ? warm : spawnWorker(t.world, undefined, { snapshotEvery: 50 });
    const before = t.storage.store.stats.itemsRead;
    // Each invocation has just enough time for one turn, as in a busy Lambda.
    await runStep(worker.deps, msg.tick, { owner: worker.name, deadlineAt: t.world.clock.now() + 300_000, minTurnMs: 300_001 });
    reads.push(t.storage.store.stats.itemsRead - before);
    if (mode === 'warm' && i % 100 === 99) warm = spawnWorker(t.world, undefined, { snapshotEvery: 50 });
  }
  return reads;
}

describe('a step reads a bounded number of items, whatever the run length', () => {
  it('cold workers (snapshot + tail) read no more at step 500 than at step 20', async () => {
    const reads = await measure(500, 'cold');
    const early = Math.max(...reads.slice(15, 25));
    const late = Math.max(...reads.slice(495, 500));
    console.info(`cold items read per step: step20=${reads[19]} step100=${reads[99]} step500=${reads[499]} max=${Math.max(...reads)}`);
    expect(late).toBeLessThanOrEqual(Math.max(early, 60));
    expect(Math.max(...reads)).toBeLessThan(250);
  }, 60_000);

  it('warm workers (cache + tail) read only what others appended', async () => {
    const reads = await measure(500, 'warm');
    console.info(`warm items read per step: step20=${reads[19]} step500=${reads[499]} max=${Math.max(...reads)}`);
    expect(reads[499]).toBeLessThanOrEqual(reads[19]!);
    expect(reads[499]).toBeLessThan(10);
  }, 60_000);
});
