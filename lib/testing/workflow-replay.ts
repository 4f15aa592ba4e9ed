import type { Body } from '../core/body.js';
import type { JsonValue } from '../core/json.js';
import type { OpKind } from '../core/workflow-events.js';
import type { OpState } from '../core/workflow-state.js';
import type { RunState } from '../core/state.js';
import type { WorkflowDefinition } from '../authoring/workflow-types.js';
import type { Agents } from '../authoring/define-agents.js';
import { deliveredValue, type BodyReader } from '../engine/workflow/op-results.js';
import type { OpRequest, OpSpec } from '../engine/workflow/op-specs.js';
import { workflowContext } from '../engine/workflow/workflow-context.js';
import { describeOp } from '../engine/workflow/workflow-end.js';
import { plural } from '../core/plural.js';
import { readLog, type StrandReason } from './replay-reasons.js';
import type { RecordedRun } from './replay-check.js';

/** An operation as the check names it. */
export interface OpName {
  kind: OpKind;
  name: string;
}

/**
 * What replaying one recorded workflow log against a definition found.
 * - ok: the code asked for exactly what the log holds, in order. `ends` says where the replay
 *   stopped: `completed`/`threw` (the code settled on recorded results alone), `would_run` (the
 *   first operation the log cannot answer, `wouldRun`: a live worker would act on it there),
 *   `waits` (it waits on operations the log holds with no result yet), `awaits_outside` (it awaits
 *   something that is not an operation: the live run fails with workflow_awaits_outside).
 * - diverged: at operation `op` the code asked for `found` where the log holds `expected`
 *   (`found` absent: the log holds an operation the code did not ask for).
 */
export type WorkflowReplayResult =
  | {
      verdict: 'ok';
      /** Recorded results handed to the code. */
      replayed: number;
      ends: 'completed' | 'threw' | 'would_run' | 'waits' | 'awaits_outside';
      wouldRun?: OpName & { op: number };
      /** What the code returned (ends completed): a determinism check compares it with the recorded output. */
      output?: unknown;
    }
  | { verdict: 'diverged'; replayed: number; op: number; expected: OpName; found?: OpName; message: string };

export interface WorkflowReplayOptions {
  /** Reads a body held by reference (a blob): a run file's blobs, say. Default: inline bodies only. */
  blobs?: ReadonlyMap<string, string>;
  /** How long the code may await something that is not an operation before the replay gives up. Default 200 ms. */
  outsideGraceMs?: number;
}

/** Let the code run until it waits on operations again. */
const drain = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A body reader over a log's inline bodies and, optionally, the blobs of a run file. */
export function bodyReader(blobs?: ReadonlyMap<string, string>): BodyReader {
  return {
    resolve(body: Body): Promise<JsonValue> {
      if (body.kind === 'inline') return Promise.resolve(body.value);
      const text = blobs?.get(body.key);
      if (text === undefined) return Promise.reject(new Error(`blob ${body.key} is not in the recorded run (export the run with its blobs)`));
      return Promise.resolve(JSON.parse(text) as JsonValue);
    },
  };
}

/**
 * Replay a workflow's `run(ctx, input)` over a recorded, folded log, as the replay driver does
 * (operations numbered in the order the code asks for them, results delivered one at a time in
 * the log's order with the code run to quiescence between two), and say whether the code still
 * asks for what the log holds. Nothing is executed: no step function, verify() or child run;
 * recorded results are served, and the first operation the log cannot answer is where the replay
 * stops ("would run").
 */
export async function replayWorkflowState(definition: WorkflowDefinition, state: RunState, options: WorkflowReplayOptions = {}): Promise<WorkflowReplayResult> {
  const wf = state.workflow;
  if (!wf) throw new TypeError(`run ${state.started.runId} is an agent run, not a workflow run`);
  const codec = bodyReader(options.blobs);
  const opAt = (op: number): OpState | undefined => wf.ops[op - 1] ?? undefined;
  const requests = new Map<number, OpRequest>();
  let nextOp = 1;
  let delivered = 0;
  let diverged: Extract<WorkflowReplayResult, { verdict: 'diverged' }> | undefined;
  let settled: { ok: boolean; value?: unknown } | undefined;
  const diverge = (op: number, expected: OpState, found?: OpName) => {
    const what = found
      ? `the code asked for ${describeOp(found)} where the log holds ${describeOp(expected)}`
      : `the log holds ${describeOp(expected)}, which the code did not ask for`;
    diverged ??= {
      verdict: 'diverged',
      replayed: delivered,
      op,
      expected: { kind: expected.kind, name: expected.name },
      ...(found ? { found } : {}),
      message: `operation ${op}: ${what}`,
    };
  };
  const requester = {
    request(kind: OpKind, name: string, spec: OpSpec): Promise<unknown> {
      if (diverged) return new Promise(() => undefined);
      const op = nextOp++;
      const logged = opAt(op);
      if (logged && (logged.kind !== kind || logged.name !== name)) {
        diverge(op, logged, { kind, name });
        return new Promise(() => undefined);
      }
      return new Promise((resolve, reject) => requests.set(op, { op, kind, name, spec, resolve, reject, phase: 'new' }));
    },
  };
  const { started } = state;
  const ctx = workflowContext(requester, { tenant: started.tenant, runId: started.runId, name: definition.name, version: definition.version });
  const input = await codec.resolve(started.input);
  Promise.resolve()
    .then(() => definition.run(ctx, input as never))
    .then(
      (value: unknown) => (settled = { ok: true, value }),
      () => (settled = { ok: false }),
    );
  const graceRounds = Math.max(1, Math.ceil((options.outsideGraceMs ?? 200) / 10));
  let idleRounds = 0;
  for (;;) {
    await drain();
    if (diverged) return diverged;
    if (delivered < wf.resultOrder.length) {
      const n = wf.resultOrder[delivered]!;
      const request = requests.get(n);
      if (!request) {
        diverge(n, opAt(n)!);
        return diverged!;
      }
      delivered++;
      requests.delete(n);
      const outcome = await deliveredValue(codec, request, opAt(n)!);
      if (outcome.ok) request.resolve(outcome.value);
      else request.reject(outcome.error);
      continue;
    }
    if (settled) {
      // The log holds operations past the last one the code asked for.
      const unasked = wf.ops.slice(nextOp - 1).find((o): o is OpState => o !== null);
      if (unasked) {
        diverge(unasked.op, unasked);
        return diverged!;
      }
      return settled.ok
        ? { verdict: 'ok', replayed: delivered, ends: 'completed', output: settled.value }
        : { verdict: 'ok', replayed: delivered, ends: 'threw' };
    }
    const fresh = [...requests.values()].filter((r) => !opAt(r.op)).sort((a, b) => a.op - b.op);
    if (fresh.length > 0) {
      const first = fresh[0]!;
      return { verdict: 'ok', replayed: delivered, ends: 'would_run', wouldRun: { op: first.op, kind: first.kind, name: first.name } };
    }
    if (requests.size > 0) return { verdict: 'ok', replayed: delivered, ends: 'waits' };
    // Neither settled nor asking: it awaits something of its own; give it a moment.
    if (++idleRounds > graceRounds) return { verdict: 'ok', replayed: delivered, ends: 'awaits_outside' };
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Replay a recorded workflow log (raw events, as the API or a run file holds them) against a definition. */
export async function checkWorkflowReplay(
  definition: WorkflowDefinition,
  events: readonly unknown[],
  options: WorkflowReplayOptions = {},
): Promise<WorkflowReplayResult | { verdict: 'unreadable'; reasons: StrandReason[] }> {
  const read = readLog(events);
  if ('reasons' in read) return { verdict: 'unreadable', reasons: read.reasons };
  return replayWorkflowState(definition, read.state, options);
}

/** One recorded workflow run in a report: its verdict against the code checked. */
export type WorkflowRunVerdict = {
  runId: string;
  workflow: { name: string; version: string };
  /** The version replayed (the pinned one, or the one asked for). */
  checkedVersion: string;
  status: string;
} & (
  | WorkflowReplayResult
  | { verdict: 'missing_version'; message: string }
  | { verdict: 'unreadable'; reasons: StrandReason[]; message: string }
  | { verdict: 'replay_failed'; message: string }
);

export interface WorkflowReplayReport {
  runs: WorkflowRunVerdict[];
  ok: number;
  diverged: number;
  missingVersion: number;
  unreadable: number;
}

export interface WorkflowReplayCheckOptions {
  agents: Agents;
  /** Recorded runs (agent runs among them are skipped); a run file's blobs resolve bodies held by reference. */
  logs: readonly (RecordedRun & { blobs?: readonly { key: string; text: string }[] })[];
  /** Replay every run against this version of its workflow instead of the one it pinned (a new version against old runs). */
  version?: string;
  outsideGraceMs?: number;
}

/** Whether a raw log is a workflow run's (its run_started pins a workflow). */
export function isWorkflowLog(events: readonly unknown[]): boolean {
  const first = events[0] as { type?: unknown; workflow?: unknown } | undefined;
  return first?.type === 'run_started' && first.workflow !== undefined && first.workflow !== null;
}

/**
 * `logbook replay-check` for workflow runs: each recorded workflow log replayed against the code
 * registered now (the pinned version, or `version`), executing nothing. A run whose version is
 * not registered is `missing_version` (it would park as missing_workflow_version).
 */
export async function checkWorkflowReplays(options: WorkflowReplayCheckOptions): Promise<WorkflowReplayReport> {
  const runs: WorkflowRunVerdict[] = [];
  for (const [i, log] of options.logs.entries()) {
    if (!isWorkflowLog(log.events)) continue;
    const first = log.events[0] as { runId?: string; agent?: { name?: string; version?: string } };
    const workflow = { name: String(first.agent?.name), version: String(first.agent?.version) };
    const checkedVersion = options.version ?? workflow.version;
    const base = { runId: log.runId ?? first.runId ?? `(log ${i + 1})`, workflow, checkedVersion };
    const read = readLog(log.events);
    if ('reasons' in read) {
      runs.push({ ...base, status: 'unknown', verdict: 'unreadable', reasons: read.reasons, message: read.reasons.map((r) => r.message).join('; ') });
      continue;
    }
    const status = read.state.status;
    const definition = options.agents.registry.workflow(workflow.name, checkedVersion);
    if (!definition) {
      const message = `no code registered for workflow ${workflow.name}@${checkedVersion}: the run would park as missing_workflow_version`;
      runs.push({ ...base, status, verdict: 'missing_version', message });
      continue;
    }
    const blobs = new Map((log.blobs ?? []).map((b) => [b.key, b.text]));
    try {
      const result = await replayWorkflowState(definition, read.state, {
        blobs,
        ...(options.outsideGraceMs !== undefined ? { outsideGraceMs: options.outsideGraceMs } : {}),
      });
      runs.push({ ...base, status, ...result });
    } catch (error) {
      runs.push({ ...base, status, verdict: 'replay_failed', message: error instanceof Error ? error.message : String(error) });
    }
  }
  const count = (v: WorkflowRunVerdict['verdict']) => runs.filter((r) => r.verdict === v).length;
  return {
    runs,
    ok: count('ok'),
    diverged: count('diverged'),
    missingVersion: count('missing_version'),
    unreadable: count('unreadable') + count('replay_failed'),
  };
}

/** A verdict in a few words, for a table cell. */
export function workflowVerdictText(r: WorkflowRunVerdict): string {
  switch (r.verdict) {
    case 'ok':
      return r.ends === 'would_run' && r.wouldRun
        ? `ok (would run ${describeOp(r.wouldRun)} at operation ${r.wouldRun.op})`
        : `ok (${r.ends.replace('_', ' ')})`;
    case 'diverged':
      return `diverged at operation ${r.op}: expected ${describeOp(r.expected)}, found ${r.found ? describeOp(r.found) : 'nothing'}`;
    case 'missing_version':
      return 'missing version';
    default:
      return r.verdict.replace('_', ' ');
  }
}

/** The report as text (for a test's failure message). */
export function formatWorkflowReplayReport(report: WorkflowReplayReport): string {
  const lines = [
    `${plural(report.runs.length, 'workflow run')}: ${report.ok} ok, ${report.diverged} diverged, ${report.missingVersion} missing version, ${report.unreadable} unreadable`,
  ];
  for (const r of report.runs) lines.push(`${r.runId} ${r.workflow.name}@${r.checkedVersion} ${r.status}: ${workflowVerdictText(r)}`);
  return lines.join('\n');
}
