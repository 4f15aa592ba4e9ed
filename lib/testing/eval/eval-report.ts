import type { EvalSide } from './eval-side.js';
import type { ScoreResult } from './scorers.js';
import type { ServedCall } from './served-tools.js';

/** One recorded run in an eval report. */
export interface EvalRunResult {
  runId: string;
  agent?: { name: string; version: string };
  /** evaluated; skipped (a workflow run, for now); error (its log, payloads or the candidate could not be used: see `reason`). */
  status: 'evaluated' | 'skipped' | 'error';
  reason?: { code: string; message: string };
  recorded?: EvalSide;
  candidate?: EvalSide;
  /** By scorer name; `error` when the scorer threw (the score is then 0). */
  scores: Record<string, ScoreResult & { error?: string }>;
  /** The mean of this run's scores that apply (null: none does). */
  score: number | null;
  calls: { served: number; notExecuted: number; executed: number };
  /** The candidate's calls the recorded run could not answer: not executed. */
  wouldCall: ServedCall[];
}

export interface EvalThreshold {
  /** `score` (the overall score) or a scorer's name (its mean over the runs). */
  name: string;
  min: number;
  actual: number | null;
  passed: boolean;
}

export const EVAL_REPORT_FORMAT = 'logbook.eval-report';
export const EVAL_REPORT_VERSION = 1;

/** What runEval returns and `logbook eval --json` prints (and writes with --report). */
export interface EvalReport {
  format: typeof EVAL_REPORT_FORMAT;
  v: typeof EVAL_REPORT_VERSION;
  /** The candidate version the runs were replayed against, per agent name. */
  candidate: Record<string, string>;
  runs: EvalRunResult[];
  /** Each scorer's mean over the runs it applies to, in table order. */
  scorers: { name: string; mean: number | null; scored: number }[];
  /** The mean of the evaluated runs' scores. */
  score: number | null;
  thresholds: EvalThreshold[];
  counts: { runs: number; evaluated: number; skipped: number; errors: number; scorerErrors: number; served: number; notExecuted: number; executed: number };
  /** Thresholds met, no run in error, no scorer threw, and at least one run evaluated. */
  passed: boolean;
  /** Why it did not pass, one sentence each. */
  failures: string[];
}

const mean = (xs: number[]) => (xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length);

/** The mean of a run's scores that apply. */
export function runScore(scores: EvalRunResult['scores']): number | null {
  return mean(Object.values(scores).flatMap((s) => (s.score === null ? [] : [s.score])));
}

/** The report over per-run results: means, counts, thresholds and the verdict. */
export function summarize(
  runs: EvalRunResult[],
  scorerNames: readonly string[],
  gates: { minScore?: number; thresholds?: Record<string, number> },
  candidate: Record<string, string>,
): EvalReport {
  const evaluated = runs.filter((r) => r.status === 'evaluated');
  const scorers = scorerNames.map((name) => {
    const xs = evaluated.flatMap((r) => {
      const s = r.scores[name]?.score;
      return s === undefined || s === null ? [] : [s];
    });
    return { name, mean: mean(xs), scored: xs.length };
  });
  const score = mean(evaluated.flatMap((r) => (r.score === null ? [] : [r.score])));
  const thresholds: EvalThreshold[] = [];
  const gate = (name: string, min: number, actual: number | null) => thresholds.push({ name, min, actual, passed: actual !== null && actual >= min });
  if (gates.minScore !== undefined) gate('score', gates.minScore, score);
  for (const [name, min] of Object.entries(gates.thresholds ?? {})) gate(name, min, scorers.find((s) => s.name === name)?.mean ?? null);
  const sum = (f: (r: EvalRunResult) => number) => runs.reduce((n, r) => n + f(r), 0);
  const counts = {
    runs: runs.length,
    evaluated: evaluated.length,
    skipped: runs.filter((r) => r.status === 'skipped').length,
    errors: runs.filter((r) => r.status === 'error').length,
    scorerErrors: sum((r) => Object.values(r.scores).filter((s) => s.error !== undefined).length),
    served: sum((r) => r.calls.served),
    notExecuted: sum((r) => r.calls.notExecuted),
    executed: sum((r) => r.calls.executed),
  };
  const failures = [
    ...thresholds
      .filter((t) => !t.passed)
      .map((t) => (t.actual === null ? `${t.name}: no run was scored (threshold ${t.min})` : `${t.name} ${t.actual.toFixed(3)} is under ${t.min}`)),
    ...(counts.errors > 0 ? [`${counts.errors} run(s) could not be evaluated`] : []),
    ...(counts.scorerErrors > 0 ? [`a scorer threw ${counts.scorerErrors} time(s)`] : []),
    ...(runs.length > 0 && evaluated.length === 0 && counts.errors === 0 ? ['no run was evaluated'] : []),
    ...(runs.length === 0 ? ['no recorded run was given'] : []),
  ];
  return { format: EVAL_REPORT_FORMAT, v: EVAL_REPORT_VERSION, candidate, runs, scorers, score, thresholds, counts, passed: failures.length === 0, failures };
}
