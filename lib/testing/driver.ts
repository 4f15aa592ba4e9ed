import type { OpenAttention, RunHead } from '../ports/run-heads.js';
import type { RunRef } from '../core/run-ref.js';
import { sweepEntry } from '../ports/sweep-index.js';
import { RequestConflictError, requestResolution, requestRunAction, type Resolution } from '../engine/requests.js';
import { ResolverAnswerRefusedError } from './harness-errors.js';
import { runStep, type StepResult } from '../engine/step-runner.js';
import { sweep } from '../engine/sweep.js';
import { WorkerHalt } from '../engine/checkpoints.js';
import type { EngineDeps } from '../engine/engine.js';
import type { World, WorkerProcess } from './world.js';

/** A scripted person: answers an open attention, or returns undefined to leave the run parked. */
export type Resolver = (attention: OpenAttention, head: RunHead) => Resolution | 'retry' | 'fail' | undefined;

/**
 * The scripted outside world (people approving, services signalling, customers writing back): it
 * looks at an idle run's head and may send requests through `deps` (the API's engine). Returns
 * whether it sent something. Called only while no inbox item is pending.
 */
export type Outside = (head: RunHead, deps: EngineDeps) => Promise<boolean>;

export interface DriveOptions {
  /** The worker to use for the next step; a new one after a crash. */
  worker: () => WorkerProcess;
  resolver?: Resolver;
  outside?: Outside;
  maxIterations?: number;
  /** Lambda-like time budget per invocation. */
  invocationMs?: number;
  onStep?: (result: StepResult, worker: WorkerProcess) => void;
  /** Each inbox id a resolver's call answer (a resolution) was accepted under. */
  onSubmitted?: (inboxId: string) => void;
}

export interface DriveResult {
  head: RunHead;
  steps: number;
  crashes: number;
  resolutions: number;
}

/**
 * Deliver ticks to workers until the run ends (or stays parked with no answer). When the queue is
 * empty it does what AWS would: time passes, the sweeper wakes due runs, a person answers parks.
 */
export async function driveRun(world: World, run: RunRef, options: DriveOptions): Promise<DriveResult> {
  const { storage, clock } = world;
  let steps = 0;
  let crashes = 0;
  let resolutions = 0;
  const max = options.maxIterations ?? 300;
  // The run and its child runs (agentTool): their ticks are delivered too, the family settles together.
  const family = new Set([run.runId]);
  for (let i = 0; i < max; i++) {
    const message = storage.queue.take();
    if (message) {
      if (!(await inFamily(world, run, family, message.tick.runId))) continue;
      const worker = options.worker();
      try {
        const result = await runStep(worker.deps, message.tick, {
          owner: worker.name,
          deadlineAt: clock.now() + (options.invocationMs ?? 300_000),
        });
        steps++;
        options.onStep?.(result, worker);
        if (result.outcome === 'busy') {
          await clock.advance(result.retryAfterMs ?? 1000);
          await storage.queue.enqueue(message.tick, { dedupeId: `${run.runId}:retry:${i}` });
        }
      } catch (error) {
        if (!(error instanceof WorkerHalt)) throw error;
        crashes++;
        worker.kill(); // the process is gone: its message is redelivered after the visibility timeout
        // As the Lambda handler does, a redelivered tick's load hint is not used (worker-handler.ts).
        await storage.queue.enqueue({ tenant: message.tick.tenant, runId: message.tick.runId }, { dedupeId: `${run.runId}:redeliver:${i}` });
      }
      continue;
    }
    const head = await storage.heads.getHead(run);
    if (!head) throw new Error(`run ${run.runId} has no head`);
    const inboxPending = head.inboxVersion > head.ingestedInboxVersion;
    if (options.outside && !inboxPending) {
      // The process sending the request may die too (between its inbox put and the wake-up).
      const worker = options.worker();
      try {
        if (await options.outside(head, worker.deps)) {
          resolutions++;
          continue;
        }
      } catch (error) {
        if (!(error instanceof WorkerHalt)) throw error;
        crashes++;
        worker.kill();
        continue;
      }
    }
    // A finished run with an inbox item pending (a follow-up whose wake-up was lost) is not done yet.
    if (['completed', 'failed', 'cancelled'].includes(head.status) && !inboxPending) return { head, steps, crashes, resolutions };
    // Waiting for a decision that nobody in this script gives, and nothing expires: stop here.
    if (head.status === 'awaiting_approval' && head.wakeAt === undefined && !inboxPending) return { head, steps, crashes, resolutions };
    // A parked run of the family (the driven run first, then a child run parked for a person)
    // is answered by the resolver, as a person watching them all would.
    const parked = (head.status === 'parked' || head.park) && !inboxPending ? { run, head } : await parkedDescendant(world, run, family);
    if (parked) {
      const answered = await answerPark(world, parked.run, parked.head, options);
      if (answered === 'none') {
        if (parked.run === run) return { head, steps, crashes, resolutions };
      } else {
        if (answered === 'crashed') crashes++;
        else resolutions++;
        continue;
      }
    }
    // Nothing queued: let time pass to the next wake-up (of the run or of a child that still owes
    // something), then sweep as the scheduled sweeper would.
    // An inbox item whose wake-up was lost (a child's answer, say) is found by the next sweep.
    // The index's own rule says when (holds for a queued tick and the sweeper's back-off included).
    const own = sweepEntry(head)?.wakeAt ?? (inboxPending ? head.updatedAt + 1 : Math.max(head.wakeAt ?? 0, head.lease?.until ?? 0, head.updatedAt + 60_000));
    const wakeAt = Math.min(own, ...(await childWakeTimes(world, run, family)));
    await clock.advance(Math.max(1, wakeAt - clock.now() + 1));
    const sweeper = options.worker();
    try {
      await sweep(sweeper.deps);
    } catch (error) {
      if (!(error instanceof WorkerHalt)) throw error;
      crashes++;
      sweeper.kill(); // the next scheduled sweep runs in a fresh process
    }
  }
  const head = await storage.heads.getHead(run);
  throw new Error(`run ${run.runId} did not settle within ${max} iterations (status ${head?.status})`);
}

/** Whether a tick belongs to the driven run or one of its descendants (their heads name the parent). */
async function inFamily(world: World, run: RunRef, family: Set<string>, runId: string): Promise<boolean> {
  if (family.has(runId)) return true;
  const head = await world.storage.heads.getHead({ tenant: run.tenant, runId });
  if (!head?.parent || !family.has(head.parent.runId)) return false;
  family.add(runId);
  return true;
}

/** When each descendant next needs the sweeper (a lost tick, an owed answer, a deadline). */
async function childWakeTimes(world: World, run: RunRef, family: Set<string>): Promise<number[]> {
  const times: number[] = [];
  const queue = [run.runId];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const { runs } = await world.storage.heads.listRuns(run.tenant, { parent: next, limit: 100 });
    for (const child of runs) {
      family.add(child.runId);
      queue.push(child.runId);
      const entry = sweepEntry(child);
      if (entry) times.push(entry.wakeAt);
    }
  }
  return times;
}

/**
 * Answer one parked run with the resolver: 'answered', 'crashed' (the API process died inside the
 * request: the person got an error and asks again once nothing of it is pending), or 'none'
 * (no resolver answer: the run stays parked).
 */
async function answerPark(world: World, run: RunRef, head: RunHead, options: DriveOptions): Promise<'answered' | 'crashed' | 'none'> {
  const { clock } = world;
  const attention = head.attention[0] ?? (head.park ? { seq: 0, reason: 'model_stalled' as const, detail: head.park.detail } : undefined);
  const answer = attention && options.resolver?.(attention, head);
  if (!attention || !answer) return 'none';
  const api = options.worker();
  if (attention.rerunNotBefore !== undefined && clock.now() < attention.rerunNotBefore) {
    await clock.advance(attention.rerunNotBefore - clock.now() + 1);
  }
  try {
    if (answer === 'retry' || answer === 'fail') await requestRunAction(api.deps, run, answer, 'harness-resolver');
    else {
      // Not inside `onSubmitted?.(...)`: an absent callback would skip the request itself.
      const { inboxId } = await requestResolution(api.deps, run, answer, 'harness-resolver');
      options.onSubmitted?.(inboxId);
    }
  } catch (error) {
    if (error instanceof WorkerHalt) {
      api.kill();
      return 'crashed';
    }
    if (!(error instanceof RequestConflictError)) throw error;
    const what = `${attention.reason} on ${attention.callId ? `call ${attention.callId}` : 'the run'}`;
    throw new ResolverAnswerRefusedError(what, JSON.stringify(answer), { cause: error });
  }
  return 'answered';
}

/** A child run of the family that is parked with nothing pending in its inbox, if any. */
async function parkedDescendant(world: World, run: RunRef, family: Set<string>): Promise<{ run: RunRef; head: RunHead } | undefined> {
  for (const runId of family) {
    if (runId === run.runId) continue;
    const child = { tenant: run.tenant, runId };
    const head = await world.storage.heads.getHead(child);
    if (head && (head.status === 'parked' || head.park) && head.inboxVersion <= head.ingestedInboxVersion) return { run: child, head };
  }
  return undefined;
}
