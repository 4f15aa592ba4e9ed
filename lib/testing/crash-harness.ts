import { AppendConflictError } from '../core/errors.js';
import { foldLog } from '../core/fold.js';
import type { RunState } from '../core/state.js';
import { WorkerHalt, type CheckpointName, type Checkpoints } from '../engine/checkpoints.js';
import type { StartRunRequest } from '../engine/start-run.js';
import { startRun } from '../engine/start-run.js';
import type { RunRef } from '../ports/run-ref.js';
import type { RunHead } from '../ports/run-heads.js';
import { driveRun, type Outside, type Resolver } from './driver.js';
import { spawnWorker, type World, type WorkerProcess } from './world.js';
import { canonicalJson } from '../core/json.js';

/**
 * A side effect as the default duplicate check reads it: `key` is the idempotency key the tool
 * passed (plus `op` when one call makes several kinds of effect); `applied: false` marks a write
 * the service deduplicated, `readOnly: true` a read. Any other shape needs `onceKey`.
 */
export interface SideEffectRecord {
  key: string;
  op?: string;
  applied?: boolean;
  readOnly?: boolean;
}

/** A scripted agent and the world it runs in, built fresh for every point. */
export interface HarnessScenario<W extends World = World, E = SideEffectRecord> {
  name: string;
  /** A fresh world (storage, clock, registry, models) and the fake services its tools call. */
  world(): W;
  request: StartRunRequest;
  /** Every side effect the world's services performed so far, in order. */
  sideEffects(world: W): readonly E[];
  /**
   * The identity of an effect that must happen at most once, or undefined for one that may repeat
   * (reads, writes the service deduplicated). Default: `op:key` of a SideEffectRecord that was
   * applied and is not read-only.
   */
  onceKey?: (effect: E) => string | undefined;
  /** The scripted person who answers parks; without one, a run that parks fails the point. */
  resolver?: (world: W) => Resolver;
  /**
   * The scripted outside world for runs that wait on it: approvals, signals, follow-up messages.
   * Its requests pass the inbox checkpoints, so the harness crashes there too.
   */
  outside?: (world: W) => Outside;
}

function defaultOnceKey(effect: unknown): string | undefined {
  const e = effect as Partial<SideEffectRecord>;
  if (typeof e.key !== 'string') throw new Error('side effect without a string `key`: give the scenario an onceKey()');
  if (e.readOnly || e.applied === false) return undefined;
  return `${e.op ?? 'effect'}:${e.key}`;
}

/** Effects that happened more than once under the same once-key: what must never happen. */
export function repeatedEffects<E>(effects: readonly E[], onceKey: (effect: E) => string | undefined = defaultOnceKey): { key: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const e of effects) {
    const k = onceKey(e);
    if (k === undefined) continue;
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return [...counts.entries()].filter(([, n]) => n > 1).map(([key, count]) => ({ key, count }));
}

export interface PointReport {
  kind: 'crash' | 'double-crash' | 'pause';
  /** Checkpoint indexes (in the order the uninterrupted run passes them) and their labels. */
  at: { index: number; label: string }[];
  held: boolean;
  failures: string[];
  finalStatus: string;
  crashes: number;
  resolutions: number;
}

export interface HarnessReport {
  scenario: string;
  baseline: {
    answer: string;
    status: string;
    steps: number;
    inputTokens: number;
    outputTokens: number;
    costUsd: number;
    sideEffects: number;
    checkpoints: number;
    /** What the tools answered, in order: a run that saw the same can only have spent more. */
    toolOutputs: string;
  };
  points: PointReport[];
  held: number;
  failed: number;
}

export interface HarnessOptions {
  /** Every n-th pair for double crashes (all pairs grow quadratically). Default 7; 0 skips them. */
  doubleCrashStride?: number;
  /** Pause (freeze) points: checkpoint kinds where a worker is frozen mid-call. */
  pausePoints?: CheckpointName[];
  onPoint?: (report: PointReport) => void;
}

interface Recorder extends Checkpoints {
  labels: string[];
  folds: { state: RunState; run: RunRef }[];
}

function recorder(): Recorder {
  const labels: string[] = [];
  const folds: { state: RunState; run: RunRef }[] = [];
  return {
    labels,
    folds,
    at(point, detail) {
      labels.push(`${point}:${detail}`);
    },
    appended(run, state) {
      folds.push({ run, state: structuredClone(state) });
    },
  };
}

/** Checkpoints that halt the worker at the n-th point it passes (and keep it dead after). */
function crashAt(n: number, base: Recorder): Checkpoints & { fired: boolean } {
  let count = 0;
  const cp = {
    fired: false,
    at(point: CheckpointName, detail: string) {
      base.at(point, detail);
      if (cp.fired) throw new WorkerHalt(`${point}:${detail} (after crash)`);
      if (count++ === n) {
        cp.fired = true;
        throw new WorkerHalt(`${point}:${detail}`);
      }
    },
    appended: base.appended,
  };
  return cp;
}

/**
 * The crash-injection harness: run a scripted agent once uninterrupted, then once per crash point
 * (before and after every append, tool execution, model call and blob write), crashing there and
 * resuming with fresh workers; also pairs of crashes and frozen workers whose lease lapses. For
 * every point it checks: same final answer, no non-idempotent side effect twice, budgets never
 * reset, the stale worker's late append rejected, live state equal to the fold of the log.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyScenario = HarnessScenario<any, any>;

export async function runCrashHarness<W extends World, E>(scenario: HarnessScenario<W, E>, options: HarnessOptions = {}): Promise<HarnessReport> {
  const run: RunRef = { tenant: scenario.request.tenant, runId: scenario.request.runId ?? 'harness-run' };
  const request = { ...scenario.request, runId: run.runId };

  // 1. Baseline: uninterrupted.
  const baseWorld = scenario.world();
  const baseRec = recorder();
  const baseWorker = spawnWorker(baseWorld, baseRec);
  await startRun(baseWorker.deps, request);
  const base = await driveRun(baseWorld, run, { worker: () => baseWorker, ...resolverOf(scenario, baseWorld) });
  const baseline = {
    answer: await answerOf(baseWorld, run),
    status: base.head.status,
    steps: base.head.usage.steps,
    inputTokens: base.head.usage.inputTokens,
    outputTokens: base.head.usage.outputTokens,
    costUsd: base.head.usage.costUsd,
    sideEffects: scenario.sideEffects(baseWorld).length,
    checkpoints: baseRec.labels.length,
    toolOutputs: toolOutputsOf((await baseWorld.storage.log.read(run, { afterSeq: 0 })).events),
  };
  const points: PointReport[] = [];
  const push = (p: PointReport) => {
    points.push(p);
    options.onPoint?.(p);
  };

  // 2. One crash at every point.
  for (let i = 0; i < baseline.checkpoints; i++) {
    push(await crashScenario(scenario, request, run, baseline, [i]));
  }
  // 3. Two crashes in one run: the first worker dies at i, its successor at j.
  const stride = options.doubleCrashStride ?? 7;
  if (stride > 0) {
    for (let i = 0; i < baseline.checkpoints; i += stride) {
      for (let j = i % stride; j < baseline.checkpoints; j += stride) {
        push(await crashScenario(scenario, request, run, baseline, [i, j]));
      }
    }
  }
  // 4. Pause points: freeze a worker mid-call, let its lease lapse, let another take over, resume.
  for (const kind of options.pausePoints ?? ['before-tool', 'after-tool', 'before-model', 'after-model']) {
    const indexes = baseRec.labels.map((l, i) => (l.startsWith(`${kind}:`) ? i : -1)).filter((i) => i >= 0);
    for (const index of indexes) push(await pauseScenario(scenario, request, run, baseline, index, baseRec.labels[index] ?? ''));
  }
  const failed = points.filter((p) => !p.held).length;
  return { scenario: scenario.name, baseline, points, held: points.length - failed, failed };
}

function resolverOf(scenario: AnyScenario, world: World) {
  return {
    ...(scenario.resolver ? { resolver: scenario.resolver(world) } : {}),
    ...(scenario.outside ? { outside: scenario.outside(world) } : {}),
  };
}

async function answerOf(world: World, run: RunRef): Promise<string> {
  const page = await world.storage.log.read(run, { afterSeq: 0 });
  const state = foldLog(page.events);
  if (state.outcome?.type !== 'completed') return `(${state.outcome?.type ?? state.status})`;
  const body = state.outcome.answer;
  return body.kind === 'inline' ? canonicalJson(body.value) : body.sha256;
}

async function crashScenario(
  scenario: AnyScenario,
  request: StartRunRequest,
  run: RunRef,
  baseline: HarnessReport['baseline'],
  crashIndexes: number[],
): Promise<PointReport> {
  const world = scenario.world();
  const rec = recorder();
  // The first crash counts checkpoints of the uninterrupted run; a second one counts within the
  // successor worker (which starts by re-reading the log).
  const pending = [...crashIndexes];
  const dead: { worker: WorkerProcess; lastSeq: number }[] = [];
  let current: WorkerProcess | undefined;
  let currentCp: (Checkpoints & { fired: boolean }) | undefined;
  const workerFor = () => {
    if (current && !current.dead && !currentCp?.fired) return current;
    if (current) {
      current.kill();
      dead.push({ worker: current, lastSeq: rec.folds.at(-1)?.state.lastSeq ?? 1 });
    }
    const next = pending.shift();
    currentCp = next === undefined ? undefined : crashAt(next, rec);
    current = spawnWorker(world, currentCp ?? rec);
    return current;
  };
  const first = workerFor();
  await startRun(first.deps, request);
  const failures: string[] = [];
  let result;
  try {
    result = await driveRun(world, run, { worker: workerFor, ...resolverOf(scenario, world) });
  } catch (error) {
    failures.push(`did not finish: ${String(error)}`);
  }
  await checkInvariants(scenario, world, run, baseline, rec, failures);
  // A stale worker's late append is rejected.
  for (const d of dead) {
    const stale = await staleAppendRejected(world, run, d.lastSeq);
    if (!stale) failures.push(`stale append at seq ${d.lastSeq + 1} was accepted`);
  }
  return {
    kind: crashIndexes.length > 1 ? 'double-crash' : 'crash',
    at: crashIndexes.map((index, k) => ({ index, label: k === 0 ? '' : '(successor)' })),
    held: failures.length === 0,
    failures,
    finalStatus: result?.head.status ?? 'unfinished',
    crashes: result?.crashes ?? 0,
    resolutions: result?.resolutions ?? 0,
  };
}

async function staleAppendRejected(world: World, run: RunRef, lastSeq: number): Promise<boolean> {
  const page = await world.storage.log.read(run, { afterSeq: lastSeq, limit: 1 });
  if (page.events.length === 0) return true; // nothing after it: no successor wrote there
  try {
    await world.storage.log.append(run, {
      v: 1,
      seq: lastSeq + 1,
      at: 0,
      by: { epoch: 1, nonce: 'stale-worker' },
      type: 'cancel_requested',
      requestedBy: 'stale',
      inboxId: 'stale',
    });
    return false;
  } catch (error) {
    return error instanceof AppendConflictError;
  }
}

async function checkInvariants(scenario: AnyScenario, world: World, run: RunRef, baseline: HarnessReport['baseline'], rec: Recorder, failures: string[]): Promise<void> {
  const page = await world.storage.log.read(run, { afterSeq: 0 });
  let state: RunState;
  try {
    state = foldLog(page.events);
  } catch (error) {
    failures.push(`log does not fold: ${String(error)}`);
    return;
  }
  const answer = await answerOf(world, run);
  if (answer !== baseline.answer) failures.push(`answer ${answer} differs from ${baseline.answer}`);
  const dups = repeatedEffects(scenario.sideEffects(world), scenario.onceKey);
  if (dups.length > 0) failures.push(`side effects repeated: ${JSON.stringify(dups)}`);
  const modelStarts = page.events.filter((e) => (e as { type: string }).type === 'model_started').length;
  if (state.usage.steps !== modelStarts) failures.push(`steps ${state.usage.steps} != ${modelStarts} model_started events (budget reset)`);
  if (state.usage.steps < baseline.steps) failures.push(`steps ${state.usage.steps} below the uninterrupted ${baseline.steps}`);
  // Recompute spend from the raw log, independently of fold: a model call's actual usage when it
  // answered, its reservation when it did not (a crash never refunds it).
  const expected = usageFromLog(page.events);
  for (const k of ['inputTokens', 'outputTokens', 'costUsd'] as const) {
    if (Math.abs(state.usage[k] - expected[k]) > 1e-9) failures.push(`${k} ${state.usage[k]} != ${expected[k]} recomputed from the log (budget refunded or reset)`);
  }
  // A crash can only add spend (an orphaned reservation stays spent), never take it back: when the
  // model saw what it saw uninterrupted. (After a crash a tool may answer differently, e.g. a
  // deduplicated write says so, and a shorter conversation costs fewer tokens.)
  if (toolOutputsOf(page.events) === baseline.toolOutputs) {
    for (const k of ['inputTokens', 'outputTokens', 'costUsd'] as const) {
      if (state.usage[k] < baseline[k] - 1e-9) failures.push(`${k} ${state.usage[k]} below the uninterrupted ${baseline[k]} (budget reset)`);
    }
  }
  // After every append, the worker's live state equalled the fold of the log up to that seq.
  for (const f of rec.folds) {
    const prefix = page.events.filter((e) => (e as { seq: number }).seq <= f.state.lastSeq);
    const replayed = foldLog(prefix);
    if (canonicalJson(replayed) !== canonicalJson(f.state)) {
      failures.push(`live state at seq ${f.state.lastSeq} differs from the fold of the log`);
      break;
    }
  }
}

async function pauseScenario(
  scenario: AnyScenario,
  request: StartRunRequest,
  run: RunRef,
  baseline: HarnessReport['baseline'],
  index: number,
  label: string,
): Promise<PointReport> {
  const world = scenario.world();
  const rec = recorder();
  let release!: () => void;
  const frozen = new Promise<void>((r) => (release = r));
  let count = 0;
  let paused = false;
  let reached!: () => void;
  const reachedPause = new Promise<void>((r) => (reached = r));
  let thaw: (() => void) | undefined;
  const pausing: Checkpoints = {
    async at(point, detail) {
      rec.at(point, detail);
      if (count++ === index) {
        paused = true;
        // The whole process freezes: its heartbeat and storage calls stop too.
        thaw = first.freeze();
        reached();
        await frozen;
      }
    },
    appended: rec.appended,
  };
  const first: WorkerProcess = spawnWorker(world, pausing);
  let second: WorkerProcess | undefined;
  await startRun(first.deps, request);
  const failures: string[] = [];
  // Drive with the first worker until it freezes.
  const firstDrive = driveRun(world, run, { worker: () => first, ...resolverOf(scenario, world), maxIterations: 50 }).catch((e: unknown) => e);
  await Promise.race([reachedPause, firstDrive]);
  let result: { head: RunHead; crashes: number; resolutions: number } | undefined;
  if (paused) {
    // The frozen worker's lease lapses; a second worker takes over the run to its end.
    const head = await world.storage.heads.getHead(run);
    await world.clock.advance(Math.max(0, (head?.lease?.until ?? 0) - world.clock.now()) + 1);
    second = spawnWorker(world, rec);
    await world.storage.queue.enqueue(run, { dedupeId: `${run.runId}:pause-takeover` });
    try {
      result = await driveRun(world, run, { worker: () => second!, ...resolverOf(scenario, world) });
    } catch (error) {
      failures.push(`takeover did not finish: ${String(error)}`);
    }
    // The first worker wakes up late and carries on where it froze.
    thaw?.();
    release();
    const late = await firstDrive;
    if (late instanceof Error) failures.push(`frozen worker failed on resume: ${String(late)}`);
  } else {
    const r = await firstDrive;
    if (r instanceof Error) failures.push(String(r));
  }
  await checkInvariants(scenario, world, run, baseline, { ...rec, folds: rec.folds.filter((f) => f.state.lastSeq > 0) }, failures);
  return {
    kind: 'pause',
    at: [{ index, label }],
    held: failures.length === 0,
    failures,
    finalStatus: result?.head.status ?? 'unknown',
    crashes: 0,
    resolutions: result?.resolutions ?? 0,
  };
}

function toolOutputsOf(events: unknown[]): string {
  return canonicalJson(events.filter((e) => (e as { type?: string }).type === 'tool_result').map((e) => (e as { output?: unknown }).output));
}

interface LoggedModelEvent {
  type: string;
  reserved?: { inputTokens: number; outputTokens: number; costUsd: number };
  usage?: { inputTokens: number; outputTokens: number };
  costUsd?: number;
}

function usageFromLog(events: unknown[]): { inputTokens: number; outputTokens: number; costUsd: number } {
  const total = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
  let open: LoggedModelEvent['reserved'];
  const settle = () => {
    if (!open) return;
    total.inputTokens += open.inputTokens;
    total.outputTokens += open.outputTokens;
    total.costUsd += open.costUsd;
    open = undefined;
  };
  for (const raw of events as LoggedModelEvent[]) {
    if (raw.type === 'model_started') {
      settle();
      open = raw.reserved;
    } else if (raw.type === 'model_response') {
      open = undefined;
      total.inputTokens += raw.usage?.inputTokens ?? 0;
      total.outputTokens += raw.usage?.outputTokens ?? 0;
      total.costUsd += raw.costUsd ?? 0;
    }
  }
  settle();
  return total;
}
