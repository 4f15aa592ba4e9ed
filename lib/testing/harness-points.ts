import type { RunState } from '../core/state.js';
import { WorkerHalt, type CheckpointName } from '../engine/checkpoints.js';
import { startRun, type StartRunRequest } from '../engine/start-run.js';
import type { RunRef } from '../core/run-ref.js';
import type { PointReport } from './harness-types.js';
import { driveRun, type DriveResult } from './driver.js';
import { checkSettled } from './settled-invariants.js';
import type { WriteMutation } from './write-points.js';
import { checkInvariants, endingOf, staleAppendRejected, type AnyScenario, type Baseline, type Ending } from './harness-invariants.js';
import { spawnWorker, type HarnessPoints, type World, type WorkerProcess } from './world.js';

/** Checkpoints that only record: the labels passed (writes included), and the live state after each append. */
export interface Recorder extends HarnessPoints {
  labels: string[];
  folds: { state: RunState; run: RunRef }[];
}

export function recorder(): Recorder {
  const labels: string[] = [];
  const folds: { state: RunState; run: RunRef }[] = [];
  return {
    labels,
    folds,
    at(point, detail) {
      labels.push(`${point}:${detail}`);
    },
    write(phase, label) {
      labels.push(`${phase}:${label}`);
    },
    appended(run, state) {
      folds.push({ run, state: structuredClone(state) });
    },
  };
}

export function resolverOf(scenario: AnyScenario, world: World) {
  return {
    ...(scenario.resolver ? { resolver: scenario.resolver(world) } : {}),
    ...(scenario.outside ? { outside: scenario.outside(world) } : {}),
  };
}

/** Drive a run and say how it ended, never throwing for the run's own sake. */
export async function driveToEnd(world: World, run: RunRef, options: Parameters<typeof driveRun>[2]): Promise<{ ending: Ending; result?: DriveResult }> {
  let outcome: DriveResult | { error: unknown };
  try {
    outcome = await driveRun(world, run, options);
  } catch (error) {
    outcome = { error };
  }
  return { ending: await endingOf(world, run, outcome), ...('error' in outcome ? {} : { result: outcome }) };
}

/**
 * Checkpoints that halt the process at the n-th point it passes, named checkpoint or write (and
 * keep it dead after).
 */
function crashAt(n: number, base: Recorder): HarnessPoints & { fired: boolean } {
  let count = 0;
  const pass = (label: string) => {
    if (cp.fired) throw new WorkerHalt(`${label} (after crash)`);
    if (count++ === n) {
      cp.fired = true;
      throw new WorkerHalt(label);
    }
  };
  const cp = {
    fired: false,
    at(point: CheckpointName, detail: string) {
      base.at(point, detail);
      pass(`${point}:${detail}`);
    },
    write(phase: 'before-write' | 'after-write', label: string) {
      base.write?.(phase, label);
      pass(`${phase}:${label}`);
    },
    appended: base.appended,
  };
  return cp;
}

/**
 * Create the run as the API or the trigger does, and as a client does on an error: again, with
 * a fresh process, until it answers (a retry redoes whatever a crash left missing).
 */
export async function startWithRetries(request: StartRunRequest, processFor: () => WorkerProcess, tries = 8): Promise<void> {
  for (let i = 0; ; i++) {
    const p = processFor();
    try {
      await startRun(p.deps, request);
      return;
    } catch (error) {
      if (!(error instanceof WorkerHalt) || i >= tries) throw error;
      p.kill();
    }
  }
}

/** One run crashed at each of `crashIndexes` in turn (a successor counts its own checkpoints). */
export async function crashScenario(
  scenario: AnyScenario,
  request: StartRunRequest,
  run: RunRef,
  baseline: Baseline,
  crashIndexes: number[],
  labels: readonly string[],
  mutation?: WriteMutation,
): Promise<PointReport> {
  const world: World = scenario.world();
  const rec = recorder();
  const pending = [...crashIndexes];
  const dead: { worker: WorkerProcess; lastSeq: number }[] = [];
  let current: WorkerProcess | undefined;
  let currentCp: (HarnessPoints & { fired: boolean }) | undefined;
  const workerFor = () => {
    if (current && !current.dead && !currentCp?.fired) return current;
    if (current) {
      current.kill();
      dead.push({ worker: current, lastSeq: rec.folds.at(-1)?.state.lastSeq ?? 1 });
    }
    const next = pending.shift();
    currentCp = next === undefined ? undefined : crashAt(next, rec);
    current = spawnWorker(world, currentCp ?? rec, {}, undefined, mutation);
    return current;
  };
  await startWithRetries(request, workerFor);
  const submitted: string[] = [];
  const { ending, result } = await driveToEnd(world, run, { worker: workerFor, ...resolverOf(scenario, world), onSubmitted: (id) => submitted.push(id) });
  const failures: string[] = [];
  await checkInvariants(scenario, world, run, baseline, rec.folds, ending, failures);
  if (ending.kind !== 'unfinished') await checkSettled(world, run, submitted, failures);
  // A stale worker's late append is rejected.
  for (const d of dead) {
    if (!(await staleAppendRejected(world, run, d.lastSeq))) failures.push(`stale append at seq ${d.lastSeq + 1} was accepted`);
  }
  return {
    kind: crashIndexes.length > 1 ? 'double-crash' : 'crash',
    at: crashIndexes.map((index, k) => ({ index, label: k === 0 ? (labels[index] ?? '') : '(successor)' })),
    held: failures.length === 0,
    failures,
    finalStatus: ending.kind === 'unfinished' ? 'unfinished' : ending.head.status,
    crashes: result?.crashes ?? 0,
    resolutions: result?.resolutions ?? 0,
  };
}

/** Freeze a worker at checkpoint `index`, let its lease lapse, let another finish, then thaw it. */
export async function pauseScenario(
  scenario: AnyScenario,
  request: StartRunRequest,
  run: RunRef,
  baseline: Baseline,
  index: number,
  label: string,
): Promise<PointReport> {
  const world: World = scenario.world();
  const rec = recorder();
  let release!: () => void;
  const frozen = new Promise<void>((r) => (release = r));
  let count = 0;
  let paused = false;
  let reached!: () => void;
  const reachedPause = new Promise<void>((r) => (reached = r));
  let thaw: (() => void) | undefined;
  // Writes count too: `index` is a position among the baseline's labels, writes included.
  const pausing: HarnessPoints = {
    write(phase, label) {
      rec.write?.(phase, label);
      count++;
    },
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
  await startRun(first.deps, request);
  const failures: string[] = [];
  // Phase 1: drive with the first worker until it freezes (or the run ends without reaching it).
  const firstDrive = driveToEnd(world, run, { worker: () => first, ...resolverOf(scenario, world), maxIterations: 50 });
  await Promise.race([reachedPause, firstDrive]);
  let outcome: { ending: Ending; result?: DriveResult };
  if (paused) {
    // Phase 2: the frozen worker's lease lapses; a second worker takes over the run to its end.
    const head = await world.storage.heads.getHead(run);
    await world.clock.advance(Math.max(0, (head?.lease?.until ?? 0) - world.clock.now()) + 1);
    const second = spawnWorker(world, rec);
    await world.storage.queue.enqueue(run, { dedupeId: `${run.runId}:pause-takeover` });
    outcome = await driveToEnd(world, run, { worker: () => second, ...resolverOf(scenario, world) });
    // Phase 3: the first worker wakes up late and carries on where it froze; it must do no harm.
    thaw?.();
    release();
    const late = await firstDrive;
    if (late.ending.kind === 'unfinished') failures.push(`frozen worker failed on resume: ${late.ending.detail}`);
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
  return {
    kind: 'pause',
    at: [{ index, label }],
    held: failures.length === 0,
    failures,
    finalStatus: outcome.ending.kind === 'unfinished' ? 'unfinished' : outcome.ending.head.status,
    crashes: 0,
    resolutions: outcome.result?.resolutions ?? 0,
  };
}
