import { startRun, type StartRunRequest } from '../engine/start-run.js';
import type { RunRef } from '../core/run-ref.js';
import type { PointReport } from './harness-types.js';
import type { DriveResult } from './driver.js';
import { checkInvariants, type AnyScenario, type Baseline, type Ending } from './harness-invariants.js';
import { driveToEnd, recorder, resolverOf } from './harness-points.js';
import { defaultOnceKey } from './side-effects.js';
import { CallTracker, changingKeyFailures, effectKey, effectTarget, type TrackedCall } from './tool-calls.js';
import { spawnWorker, type World, type WorkerProcess } from './world.js';

/**
 * When the frozen worker's late call goes on: after the worker that took the run over finished it
 * (`end`: that worker's own attempt of the call, with a higher fencing token, reached the service
 * first), or right before that worker's own next attempt of the call (`before-rerun`: after its
 * look, a verify() or a person's, said "not landed"; the late request arrives first).
 */
export type LateWake = 'end' | 'before-rerun';

/** A tool call to freeze: the `occurrence`-th execute of `name#callId` in the uninterrupted run. */
export interface LateCallPoint {
  label: string;
  occurrence: number;
  wake: LateWake;
}

/** Thrown at a frozen worker's driver once it woke: its one invocation is all it gets. */
class LateWorkerDone extends Error {
  constructor() {
    super('the late worker is done (harness)');
  }
}

/**
 * Let a woken call run to its end, within a bound: a few turns of the event loop for an in-memory
 * service, then up to a quarter second for one behind real I/O (an MCP server); a tool waiting on
 * the manual clock never ends, and the point goes on without it.
 */
async function settledOrStuck(call: TrackedCall): Promise<void> {
  let done = false;
  void call.settled.then(() => (done = true));
  for (let i = 0; i < 200 && !done; i++) await new Promise((r) => setImmediate(r));
  if (!done) await Promise.race([call.settled, new Promise((r) => setTimeout(r, 250).unref())]);
}

/**
 * A worker frozen INSIDE a tool call: the call started (its tool_started written, its context
 * handed over, the engine's own lease checks passed) and the worker freezes before the tool's own
 * code runs, so none of it has reached a service. Its lease lapses, another worker takes the run
 * over and drives it; then the frozen worker wakes and its call goes on, with its old fencing
 * token and a deadline (notAfter) that has passed. A tool (or service) that ignores both applies
 * the late write: the point fails, saying which call reached which service, with which token and
 * how late (lateFailures); a call whose attempts sent different keys is named too.
 */
export async function lateCallScenario(
  scenario: AnyScenario,
  request: StartRunRequest,
  run: RunRef,
  baseline: Baseline,
  point: LateCallPoint,
): Promise<PointReport> {
  const world: World = scenario.world();
  const rec = recorder();
  const tracker = new CallTracker(() => scenario.sideEffects(world));
  let late: TrackedCall | undefined;
  let seen = 0;
  let thaw: (() => void) | undefined;
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  let reached!: () => void;
  const reachedPause = new Promise<void>((r) => (reached = r));
  let woke: { at: number; tokens: number[]; effects: number } | undefined;
  const first: WorkerProcess = spawnWorker(
    world,
    rec,
    {},
    {
      registry: tracker.registry(world.registry, 'frozen', {
        async beforeExecute(call) {
          if (late || `${call.tool}#${call.callId}` !== point.label || seen++ !== point.occurrence) return;
          late = call;
          tracker.pause(call);
          // The whole process freezes: its heartbeat and storage calls stop, and this call waits.
          thaw = first.freeze();
          reached();
          await gate;
          tracker.resume(call);
        },
      }),
    },
  );
  /** Wake the frozen call and let it reach whatever it reaches, alone. */
  const wake = async () => {
    if (woke || !late) return;
    const call = late;
    // Tokens a newer worker already used on this call (its own attempt or verify ran; one held
    // right before its rerun has not sent anything yet).
    const used = tracker.calls.filter((c) => c.callId === call.callId && c.token > call.token && c.state !== 'paused');
    woke = { at: world.clock.now(), tokens: used.map((c) => c.token), effects: call.effects.length };
    thaw?.();
    open();
    await settledOrStuck(call);
  };
  await startRun(first.deps, request);
  // The frozen worker's driver stops once it froze: when its invocation ends it takes no tick, lets
  // no time pass and answers no park (the other worker's driver does all that meanwhile).
  const queue = world.storage.queue;
  const stopping = new Proxy(queue, {
    get(target, prop) {
      if (prop === 'take') {
        return () => {
          if (late) throw new LateWorkerDone();
          return target.take();
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const firstDrive = driveToEnd({ ...world, storage: { ...world.storage, queue: stopping } }, run, {
    worker: () => {
      if (late) throw new LateWorkerDone();
      return first;
    },
    ...resolverOf(scenario, world),
    maxIterations: 50,
  });
  await Promise.race([reachedPause, firstDrive]);
  const failures: string[] = [];
  let outcome: { ending: Ending; result?: DriveResult };
  if (late) {
    const frozen = late;
    // The frozen worker's lease lapses; another worker takes the run over and drives it to its end.
    const head = await world.storage.heads.getHead(run);
    await world.clock.advance(Math.max(0, (head?.lease?.until ?? 0) - world.clock.now()) + 1);
    const second = spawnWorker(
      world,
      rec,
      {},
      {
        registry: tracker.registry(world.registry, 'successor', {
          async beforeExecute(call) {
            if (point.wake === 'before-rerun' && call.callId === frozen.callId && call.token > frozen.token) await wake();
          },
        }),
      },
    );
    await world.storage.queue.enqueue(run, { dedupeId: `${run.runId}:late-takeover` });
    outcome = await driveToEnd(world, run, { worker: () => second, ...resolverOf(scenario, world) });
    await wake();
    const lateEnd = await firstDrive;
    if (lateEnd.ending.kind === 'unfinished' && !lateEnd.ending.detail.startsWith(new LateWorkerDone().message)) {
      failures.push(`frozen worker failed on resume: ${lateEnd.ending.detail}`);
    }
    tracker.attribute();
    failures.push(...lateFailures(scenario, world, frozen, woke));
  } else {
    outcome = await firstDrive;
  }
  await checkInvariants(
    scenario,
    world,
    run,
    baseline,
    rec.folds.filter((f) => f.state.lastSeq > 0),
    outcome.ending,
    failures,
  );
  failures.push(...changingKeyFailures(tracker.calls));
  return {
    kind: 'late-call',
    at: [
      {
        index: point.occurrence,
        label: `in-tool:${point.label} (woken ${point.wake === 'end' ? 'after the takeover ended the run' : 'before the new worker ran it again'})`,
      },
    ],
    held: failures.length === 0,
    failures,
    finalStatus: outcome.ending.kind === 'unfinished' ? 'unfinished' : outcome.ending.head.status,
    crashes: 0,
    resolutions: outcome.result?.resolutions ?? 0,
  };
}

/**
 * The frozen call's writes that took effect although they arrived late, where that did harm: the
 * write happened twice (its once-key repeats), or the call's effect also landed under another key.
 * A late write the service deduplicated (an idempotency_key service answering the first result
 * again), refused, or that is the only effect of its call, does no harm and is not reported.
 */
export function lateFailures(
  scenario: AnyScenario,
  world: World,
  call: TrackedCall,
  woke: { at: number; tokens: number[]; effects: number } | undefined,
): string[] {
  if (!woke) return [];
  const onceKey = scenario.onceKey ?? defaultOnceKey;
  const all = scenario.sideEffects(world) as readonly unknown[];
  const counts = new Map<string, number>();
  for (const e of all) {
    const k = onceKey(e);
    if (k !== undefined) counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const failures: string[] = [];
  for (const effect of call.effects.slice(woke.effects)) {
    const once = onceKey(effect);
    if (once === undefined) continue; // a read, or a write the service deduplicated or refused
    const twice = (counts.get(once) ?? 0) > 1;
    const elsewhere = all.some(
      (e) => e !== effect && onceKey(e) !== undefined && effectTarget(e) === effectTarget(effect) && effectKey(e) !== effectKey(effect) && sameCall(e, call),
    );
    if (!twice && !elsewhere) continue;
    const higher = Math.max(...woke.tokens, -Infinity);
    const clauses = [
      `with fencing token ${call.token}${higher > call.token ? ` after token ${higher} was used` : ''}`,
      ...(woke.at > call.notAfter ? [`${woke.at - call.notAfter} ms after its notAfter`] : []),
    ];
    failures.push(
      `call ${call.callId} reached ${effectTarget(effect)} ${clauses.join(', ')}, and it was applied (${twice ? `${once} happened twice` : 'its effect landed under another key too'}): ` +
        `a worker woken past its lease must not land. Have the service refuse a fencing token below the highest it saw for the key and a ` +
        `request past its deadline (pass ctx.fencingToken and ctx.notAfter), or call ctx.assertLeaseFresh() in ${call.tool} right before the write`,
    );
  }
  return failures;
}

/** An effect of the same call id (its key names the call), whatever attempt sent it. */
function sameCall(effect: unknown, call: TrackedCall): boolean {
  const key = effectKey(effect);
  return key !== undefined && key.includes(`:${call.callId}`);
}
