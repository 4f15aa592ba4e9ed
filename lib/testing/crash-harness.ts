import type { CheckpointName } from '../engine/checkpoints.js';
import { startRun } from '../engine/start-run.js';
import type { RunRef } from '../core/run-ref.js';
import { BaselineParkedError, BaselineUnfinishedError } from './harness-errors.js';
import { readOutcome, toolOutputsOf, type Baseline } from './harness-invariants.js';
import { crashScenario, driveToEnd, pauseScenario, recorder, resolverOf } from './harness-points.js';
import type { HarnessScenario, PointReport } from './harness-types.js';
import type { WriteMutation } from './write-points.js';
import { lateCallScenario, type LateCallPoint, type LateWake } from './late-calls.js';
import { spawnWorker, type World } from './world.js';
import { plural } from '../core/plural.js';

export type { HarnessScenario, PointReport } from './harness-types.js';
export type { LateWake } from './late-calls.js';

/** Where a worker can be frozen: a checkpoint kind, or inside a tool call (`in-tool`). */
export type PausePoint = CheckpointName | 'in-tool';

const DEFAULT_PAUSE_POINTS: readonly PausePoint[] = [
  'before-tool',
  'after-tool',
  'in-tool',
  'before-model',
  'after-model',
  'before-summary',
  'after-summary',
  'before-step',
  'after-step',
];

export interface HarnessReport {
  scenario: string;
  baseline: Baseline;
  points: PointReport[];
  held: number;
  failed: number;
}

export interface HarnessOptions {
  /** Every n-th pair for double crashes (all pairs grow quadratically). Default 7; 0 skips them. */
  doubleCrashStride?: number;
  /** Pairs of crash indexes to run besides the sampled ones (the first worker dies at i, its successor at j). */
  doubleCrashPairs?: readonly (readonly [number, number])[];
  /**
   * Pause (freeze) points: checkpoint kinds where a worker is frozen mid-call, and `in-tool`: a
   * worker frozen inside every tool call, woken late with its old token (late-calls.ts). Default:
   * all of them; `[]` runs none.
   */
  pausePoints?: PausePoint[];
  /** When an `in-tool` frozen call wakes (default both; see LateWake). */
  lateWakes?: LateWake[];
  onPoint?: (report: PointReport) => void;
  /**
   * A deliberate defect in the order of writes of every process after the uninterrupted run
   * (for the harness's own check that a skipped or swapped write fails points).
   */
  mutation?: WriteMutation;
}

/**
 * The crash-injection harness: run a scripted agent once uninterrupted, then once per crash point
 * (before and after every append, tool execution, model call and blob write), crashing there and
 * resuming with fresh workers; also pairs of crashes, frozen workers whose lease lapses, and
 * workers frozen inside each tool call whose late call reaches the services after a takeover. For
 * every point it checks: same final answer, no non-idempotent side effect twice, budgets never
 * reset, the stale worker's late append rejected, live state equal to the fold of the log.
 *
 * Throws BaselineParkedError or BaselineUnfinishedError when the uninterrupted run itself does
 * not end: no point could be judged against it.
 */
export async function runCrashHarness<W extends World, E>(scenario: HarnessScenario<W, E>, options: HarnessOptions = {}): Promise<HarnessReport> {
  const run: RunRef = { tenant: scenario.request.tenant, runId: scenario.request.runId ?? 'harness-run' };
  const request = { ...scenario.request, runId: run.runId };

  // 1. Baseline: uninterrupted. It must end (complete, fail or cancel) for points to be judged.
  const baseWorld = scenario.world();
  const baseRec = recorder();
  const baseWorker = spawnWorker(baseWorld, baseRec);
  await startRun(baseWorker.deps, request);
  const { ending } = await driveToEnd(baseWorld, run, { worker: () => baseWorker, ...resolverOf(scenario, baseWorld) });
  if (ending.kind === 'unfinished') throw new BaselineUnfinishedError(scenario.name, ending.detail);
  if (ending.kind === 'parked') throw new BaselineParkedError(scenario.name, ending.parks, scenario.resolver !== undefined);
  const { head } = ending;
  const outcome = await readOutcome(baseWorld, run);
  const baseline: Baseline = {
    ...outcome,
    steps: head.usage.steps,
    inputTokens: head.usage.inputTokens,
    outputTokens: head.usage.outputTokens,
    costUsd: head.usage.costUsd,
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
    push(await crashScenario(scenario, request, run, baseline, [i], baseRec.labels, options.mutation));
  }
  // 3. Two crashes in one run: the first worker dies at i, its successor at j.
  const stride = options.doubleCrashStride ?? 7;
  if (stride > 0) {
    for (let i = 0; i < baseline.checkpoints; i += stride) {
      for (let j = i % stride; j < baseline.checkpoints; j += stride) {
        push(await crashScenario(scenario, request, run, baseline, [i, j], baseRec.labels, options.mutation));
      }
    }
  }
  for (const [i, j] of options.doubleCrashPairs ?? []) {
    push(await crashScenario(scenario, request, run, baseline, [i, j], baseRec.labels, options.mutation));
  }
  // 4. Pause points: freeze a worker mid-call, let its lease lapse, let another take over, resume.
  for (const kind of options.pausePoints ?? DEFAULT_PAUSE_POINTS) {
    if (kind === 'in-tool') {
      for (const point of lateCallPoints(baseRec.labels, options.lateWakes ?? ['end', 'before-rerun']))
        push(await lateCallScenario(scenario, request, run, baseline, point));
      continue;
    }
    const indexes = baseRec.labels.map((l, i) => (l.startsWith(`${kind}:`) ? i : -1)).filter((i) => i >= 0);
    for (const index of indexes) push(await pauseScenario(scenario, request, run, baseline, index, baseRec.labels[index] ?? ''));
  }
  const failed = points.filter((p) => !p.held).length;
  return { scenario: scenario.name, baseline, points, held: points.length - failed, failed };
}

/** Every tool call of the uninterrupted run (each `before-tool` it passed), once per wake. */
function lateCallPoints(labels: readonly string[], wakes: readonly LateWake[]): LateCallPoint[] {
  const seen = new Map<string, number>();
  const points: LateCallPoint[] = [];
  for (const l of labels) {
    if (!l.startsWith('before-tool:')) continue;
    const label = l.slice('before-tool:'.length);
    const occurrence = seen.get(label) ?? 0;
    seen.set(label, occurrence + 1);
    for (const wake of wakes) points.push({ label, occurrence, wake });
  }
  return points;
}

/**
 * The report as text for a test's failure message: the counts, then each failed point with its
 * checkpoint and what went wrong (at most `limit` of them).
 */
export function formatHarnessReport(report: HarnessReport, limit = 10): string {
  const kinds = (k: PointReport['kind']) => report.points.filter((p) => p.kind === k).length;
  const lines = [
    `crash harness "${report.scenario}": ${plural(report.points.length, 'point')} (${kinds('crash')} single, ${kinds('double-crash')} double, ` +
      `${kinds('pause')} pause, ${kinds('late-call')} late call): ${report.held} held, ${report.failed} failed`,
  ];
  for (const p of report.points.filter((x) => !x.held).slice(0, limit)) {
    lines.push(`- ${p.kind} at ${p.at.map((a) => `#${a.index}${a.label ? ` ${a.label}` : ''}`).join(' then ')} (ended ${p.finalStatus}):`);
    for (const f of p.failures) lines.push(`    ${f}`);
  }
  if (report.failed > limit) lines.push(`... and ${report.failed - limit} more failed ${report.failed - limit === 1 ? 'point' : 'points'}`);
  return lines.join('\n');
}
