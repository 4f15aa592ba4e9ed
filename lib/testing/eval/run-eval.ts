import { resolveAgents, type Agents } from '../../authoring/define-agents.js';
import { ConfigError, errorMessage } from '../../core/errors.js';
import type { ModelResolver } from '../../ports/model-client.js';
import { runCandidate } from './eval-world.js';
import { runScore, summarize, type EvalReport, type EvalRunResult } from './eval-report.js';
import { readRecorded } from './recorded-run.js';
import type { ExportedRun } from './run-file.js';
import { builtInScorers, scoreResult, type Scorer } from './scorers.js';

export interface RunEvalOptions {
  /**
   * The candidate: the value of defineAgents (its agents, models, appContext, redaction), or a
   * function that builds it, called once per recorded run so each gets fresh models and fake
   * services. Its agent of the recorded run's name is the one replayed.
   */
  candidate: Agents | (() => Agents | Promise<Agents>);
  /** The candidate version to replay against (default: the latest registered of each recorded agent). */
  version?: string;
  /** Recorded runs, as `logbook runs export` writes them (parseRunFile) or exportRuns reads them from a world. */
  runs: readonly ExportedRun[];
  /** The application's scorers, scored beside the built-ins. */
  scorers?: readonly Scorer[];
  /** Score with the built-in scorers too (builtInScorers()). Default true. */
  builtIns?: boolean;
  /** The overall score (mean over runs) must be at least this. */
  minScore?: number;
  /** Per scorer (by name): its mean over the runs must be at least this. */
  thresholds?: Record<string, number>;
  /**
   * Execute `rerun`-policy tools (read-only by their declaration, no approval) when the recorded
   * run cannot answer the call, instead of answering "not executed". Default false: nothing runs.
   */
  allowReadOnlyTools?: boolean;
  /** Models the candidate's own do not cover (defineAgents' `models` come first): the built-in providers, say. */
  models?: ModelResolver;
  /** Recorded runs evaluated at once (a real model's latency overlaps). Default 4. */
  concurrency?: number;
  /** Steps and sweeps one candidate run may take (default 2000). */
  maxIterations?: number;
  /** Called as each run is done (progress). */
  onRun?: (result: EvalRunResult, done: number, total: number) => void;
}

/**
 * Replay recorded runs against a candidate agent version and score the difference: for each
 * run, its input (and follow-up messages) go to the candidate in an isolated memory world; the
 * candidate's tool calls are answered from the recorded results (same tool, same arguments by
 * canonical JSON, repeats in order) and never executed (a call the log cannot answer is reported
 * as "would call X(args)" and the candidate sees an error result); its model is the candidate's
 * (scripted or real). Each run is then scored by the built-ins and the application's scorers.
 * Workflow runs are skipped by name (not replayed yet).
 */
export async function runEval(options: RunEvalOptions): Promise<EvalReport> {
  const scorers = [...(options.builtIns === false ? [] : builtInScorers()), ...(options.scorers ?? [])];
  checkScorers(scorers, options);
  const total = options.runs.length;
  const results: EvalRunResult[] = new Array<EvalRunResult>(total);
  const versions: Record<string, string> = {};
  let next = 0;
  let done = 0;
  const worker = async () => {
    for (let i = next++; i < total; i = next++) {
      const run = options.runs[i] as ExportedRun;
      const result = await evaluateRun(run, scorers, options, versions).catch((error: unknown): EvalRunResult => ({
        ...empty(run),
        status: 'error',
        reason: { code: 'eval_failed', message: errorMessage(error) },
      }));
      results[i] = result;
      options.onRun?.(result, ++done, total);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency ?? 4, total)) }, worker));
  return summarize(
    results,
    scorers.map((s) => s.name),
    { ...(options.minScore !== undefined ? { minScore: options.minScore } : {}), ...(options.thresholds ? { thresholds: options.thresholds } : {}) },
    versions,
  );
}

function checkScorers(scorers: readonly Scorer[], options: RunEvalOptions): void {
  const names = new Set<string>();
  for (const s of scorers) {
    if (names.has(s.name)) throw new ConfigError(`two scorers are named ${s.name}`);
    names.add(s.name);
  }
  const min = (value: number, what: string) => {
    if (!(value >= 0 && value <= 1)) throw new ConfigError(`${what} must be in [0, 1], got ${value}`);
  };
  if (options.minScore !== undefined) min(options.minScore, 'minScore');
  for (const [name, value] of Object.entries(options.thresholds ?? {})) {
    if (!names.has(name)) throw new ConfigError(`threshold for ${name}: no such scorer (scorers: ${[...names].join(', ')})`);
    min(value, `threshold ${name}`);
  }
}

function empty(run: ExportedRun): EvalRunResult {
  return { runId: run.runId, status: 'evaluated', scores: {}, score: null, calls: { served: 0, notExecuted: 0, executed: 0 }, wouldCall: [] };
}

async function evaluateRun(run: ExportedRun, scorers: readonly Scorer[], options: RunEvalOptions, versions: Record<string, string>): Promise<EvalRunResult> {
  // 1. The recorded run: folded, its payloads resolved; workflow runs refused by name.
  const read = await readRecorded(run);
  if (!('state' in read)) return { ...empty(run), status: read.status, reason: { code: read.code, message: read.message } };
  const base = { ...empty(run), agent: { ...read.side.agent }, recorded: read.side };

  // 2. The candidate agent of the same name (the version asked for, or its latest).
  const agents = await resolveAgents(options.candidate);
  const name = read.side.agent.name;
  const agent = agents?.registry.agent(name, options.version);
  if (!agents || !agent) {
    const known = agents?.registry.agentNames().join(', ') ?? 'none';
    const what = options.version ? `${name}@${options.version}` : name;
    return { ...base, status: 'error', reason: { code: 'candidate_missing', message: `the candidate has no agent ${what} (it has: ${known})` } };
  }
  versions[name] = agent.version;

  // 3. The candidate on the recorded input, in its own world, its calls served from the log.
  const ran = await runCandidate(run, read, {
    agents,
    agent,
    allowReadOnly: options.allowReadOnlyTools === true,
    maxIterations: options.maxIterations ?? 2000,
    ...(options.models ? { models: options.models } : {}),
  });
  if ('problem' in ran) return { ...base, status: 'error', reason: ran.problem };
  const wouldCall = ran.calls.filter((c) => c.outcome === 'not_executed');
  const calls = {
    served: ran.calls.filter((c) => c.outcome === 'served').length,
    notExecuted: wouldCall.length,
    executed: ran.calls.filter((c) => c.outcome === 'executed').length,
  };

  // 4. Scores: each scorer's own failure is the scorer's, reported, never the run's.
  const scores: EvalRunResult['scores'] = {};
  for (const scorer of scorers) {
    try {
      scores[scorer.name] = scoreResult(await scorer.score({ runId: run.runId, recorded: read.side, candidate: ran.side, agent, wouldCall }));
    } catch (error) {
      scores[scorer.name] = { score: 0, error: errorMessage(error) };
    }
  }
  return { ...base, candidate: ran.side, scores, score: runScore(scores), calls, wouldCall };
}
