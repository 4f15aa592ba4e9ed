import type { RunState } from '../core/state.js';
import type { Agents } from '../authoring/define-agents.js';
import { missingModel, missingTools, readLog, type StrandReason } from './replay-reasons.js';
import { plural } from '../core/plural.js';
export type { StrandReason } from './replay-reasons.js';

/** One recorded run: its events as GET /runs/{id}/events returns them (all pages, in order). */
export interface RecordedRun {
  runId?: string;
  events: readonly unknown[];
}

export interface ReplayCheckOptions {
  /** The agents about to be deployed (the value of defineAgents). */
  agents: Agents;
  /** Recorded run logs: `{ runId, events }`, or bare arrays of raw events. */
  logs: readonly (RecordedRun | readonly unknown[])[];
  /**
   * The deployed worker's environment, for the built-in providers: `openai:` ids are served only
   * when OPENAI_BASE_URL or OPENAI_API_KEY is set. Default: none set.
   */
  env?: Record<string, string | undefined>;
  /**
   * The model ids the deployed worker may invoke (the Logbook construct's `models`). Default:
   * the ids the agents pin, which is what the construct grants when `models` is not given.
   */
  deployedModelIds?: readonly string[];
}

export interface RunVerdict {
  runId: string;
  agent?: { name: string; version: string };
  /** The status the log folds to (`unknown` when it does not fold). */
  status: string;
  /** ok: this deploy serves it; stranded: it would park (see reasons); finished: nothing left to run. */
  verdict: 'ok' | 'stranded' | 'finished';
  reasons: StrandReason[];
  /** Facts that strand nothing (an agent version no longer offered for new runs, a park this deploy can lift). */
  notes: string[];
}

export interface ReplayReport {
  runs: RunVerdict[];
  ok: number;
  stranded: number;
  finished: number;
}

/**
 * The "will this deploy strand running runs?" check (Temporal's replay of recorded histories
 * plays this part): for each recorded log, whether the agents about to be deployed still serve
 * it. A resumed run uses only what its log pinned, so what can go missing is code: the
 * implementation of a pinned tool contract (name + schema hash) or the pinned model id. A log the
 * new code cannot read at all (corrupt, an unknown event type or schema version) strands it too.
 * Pure over what it is given: no I/O, no clock.
 */
export function checkReplay(options: ReplayCheckOptions): ReplayReport {
  const serving = {
    agents: options.agents,
    env: options.env ?? {},
    deployedModelIds: options.deployedModelIds ?? options.agents.modelIds,
  };
  const runs = options.logs.map((log, i): RunVerdict => {
    const recorded: RecordedRun = Array.isArray(log) ? { events: log } : (log as RecordedRun);
    const read = readLog(recorded.events);
    if ('reasons' in read) {
      const agent = rawAgent(recorded.events[0]);
      return {
        runId: recorded.runId ?? rawRunId(recorded.events[0]) ?? `(log ${i + 1})`,
        ...(agent ? { agent } : {}),
        status: 'unknown',
        verdict: 'stranded',
        reasons: read.reasons,
        notes: [],
      };
    }
    const { state } = read;
    const base = { runId: recorded.runId ?? state.started.runId, agent: { ...state.started.agent }, status: state.status };
    if (state.outcome) return { ...base, verdict: 'finished', reasons: [], notes: [] };
    const model = state.started.model ? missingModel(state.started.model.id, serving) : undefined;
    const reasons = [...missingTools(state, options.agents), ...(model ? [model] : [])];
    return { ...base, verdict: reasons.length > 0 ? 'stranded' : 'ok', reasons, notes: notesFor(state, options.agents, reasons) };
  });
  const count = (v: RunVerdict['verdict']) => runs.filter((r) => r.verdict === v).length;
  return { runs, ok: count('ok'), stranded: count('stranded'), finished: count('finished') };
}

function notesFor(state: RunState, agents: Agents, reasons: StrandReason[]): string[] {
  const notes: string[] = [];
  const { name, version } = state.started.agent;
  if (!agents.registry.agent(name, version)) {
    notes.push(`agent ${name}@${version} is no longer registered: the run goes on with what it pinned, but no new run can start on that version`);
  }
  // A run already parked for a missing version: say when this deploy is what it waits for.
  const lifted = state.attention.filter((a) => (a.reason === 'missing_tool_version' || a.reason === 'missing_model') && a.callId === undefined);
  if (lifted.length > 0 && reasons.length === 0) {
    notes.push(`parked for ${lifted.map((a) => a.reason).join(', ')}; this deploy serves it: resolve with {"action":"retry"}`);
  }
  return notes;
}

function rawRunId(first: unknown): string | undefined {
  const id = (first as { runId?: unknown } | null)?.runId;
  return typeof id === 'string' ? id : undefined;
}

function rawAgent(first: unknown): { name: string; version: string } | undefined {
  const agent = (first as { agent?: { name?: unknown; version?: unknown } } | null)?.agent;
  return typeof agent?.name === 'string' && typeof agent.version === 'string' ? { name: agent.name, version: agent.version } : undefined;
}

/** The report as text, one block per run that is not finished (for a test's failure message). */
export function formatReplayReport(report: ReplayReport): string {
  const lines = [`${plural(report.runs.length, 'run')}: ${report.ok} ok, ${report.stranded} stranded, ${report.finished} finished (skipped)`];
  for (const r of report.runs.filter((x) => x.verdict !== 'finished')) {
    lines.push(`${r.runId} ${r.agent ? `${r.agent.name}@${r.agent.version}` : '?'} ${r.status}: ${r.verdict}`);
    for (const reason of r.reasons) lines.push(`  - ${reason.code}: ${reason.message}`);
    for (const note of r.notes) lines.push(`  note: ${note}`);
  }
  return lines.join('\n');
}
