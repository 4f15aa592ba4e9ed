import type { Body } from '../core/body.js';
import { roundUsd } from '../core/money.js';
import { isWorkflowStart, parseEvent, type EventOf, type RunEvent } from '../core/events.js';
import type { EngineDeps } from '../engine/engine.js';
import { TERMINAL_STATUSES, type RunHead } from '../ports/run-heads.js';
import type { RunRef } from '../core/run-ref.js';
import type { RunSummary, RunView } from './schemas.js';

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * A run as listings show it. `workflow`: whether the run runs a workflow; the head names only the
 * definition, so a listing asks the registry (agent and workflow names never collide), and the
 * run view knows it from run_started.
 */
export function runSummary(head: RunHead, workflow = false): RunSummary {
  return {
    runId: head.runId,
    status: head.status,
    kind: workflow ? 'workflow' : 'agent',
    agent: { ...head.agent },
    ...(workflow ? { workflow: { ...head.agent } } : {}),
    createdAt: iso(head.createdAt),
    updatedAt: iso(head.updatedAt),
    lastSeq: head.lastSeq,
    usage: { ...head.usage, costUsd: roundUsd(head.usage.costUsd) },
    ...(head.outcome?.summary ? { summary: head.outcome.summary } : head.park ? { summary: `${head.park.reason}: ${head.park.detail}` } : {}),
    ...(head.parent ? { parent: { ...head.parent } } : {}),
  };
}

/** Most children GET /runs/{id} lists; GET /runs?parent= pages through all of them. */
export const CHILDREN_IN_VIEW = 100;

/**
 * The run's children (from the parent listing, same tenant) and, for each open child call, the
 * child's status read from its head (consistent: a child parked for a person shows here).
 */
export async function withChildren(deps: Pick<EngineDeps, 'heads'>, run: RunRef, view: RunView): Promise<RunView> {
  // Only a run that pinned an agent tool can have children: no index query for any other.
  if (view.pinned && !view.pinned.tools.some((t) => t.wait === 'child')) return view;
  const page = await deps.heads.listRuns(run.tenant, { parent: run.runId, limit: CHILDREN_IN_VIEW });
  const children = page.runs.map((h) => ({
    runId: h.runId,
    callId: h.parent?.callId ?? '',
    status: h.status,
    ...(h.outcome?.summary ? { summary: h.outcome.summary } : {}),
  }));
  if (children.length > 0) view.children = children;
  for (const w of view.waiting ?? []) {
    if (w.kind !== 'child' || !w.childRunId) continue;
    const child = await deps.heads.getHead({ tenant: run.tenant, runId: w.childRunId });
    w.childStatus = child?.status ?? 'starting';
  }
  return view;
}

/** An answer as the API shows it: the inline value, or the blob reference with its summary. */
export function bodyValue(body: Body): unknown {
  return body.kind === 'inline' ? body.value : { blob: body.key, sha256: body.sha256, size: body.size, summary: body.summary };
}

/**
 * The run as GET /runs/{id} shows it: the head (status, usage, attention), what run_started
 * pinned, and the terminal event's answer or failure.
 */
export function runView(head: RunHead, started: EventOf<'run_started'> | undefined, terminal: RunEvent | undefined): RunView {
  // An ended run offers nothing to answer (heads projected before that rule may still list some).
  const ended = TERMINAL_STATUSES.has(head.status);
  const view: RunView = {
    ...runSummary(head, started ? isWorkflowStart(started) : false),
    attention: (ended ? [] : head.attention).map((a) => ({
      seq: a.seq,
      reason: a.reason,
      detail: a.detail,
      ...(a.callId ? { callId: a.callId } : {}),
      ...(a.rerunNotBefore !== undefined ? { rerunNotBefore: iso(a.rerunNotBefore) } : {}),
    })),
  };
  if (head.waits?.length && !ended) {
    view.waiting = head.waits.map((w) => ({
      callId: w.callId,
      tool: w.tool,
      kind: w.kind,
      seq: w.seq,
      ...(w.signal !== undefined ? { signal: w.signal } : {}),
      ...(w.childRunId !== undefined ? { childRunId: w.childRunId } : {}),
      ...(w.until !== undefined ? { until: iso(w.until) } : {}),
      ...(w.argsHash !== undefined ? { argsHash: w.argsHash } : {}),
    }));
  }
  if (started?.forkedFrom) view.forkedFrom = { ...started.forkedFrom };
  if (started?.model && started.prompt) {
    view.pinned = {
      model: started.model.id,
      prompt: { version: started.prompt.version, sha256: started.prompt.sha256 },
      tools: started.tools.map((t) => ({
        name: t.name,
        version: t.version,
        policy: t.policy,
        schemaHash: t.schemaHash,
        ...(t.approval ? { approval: t.approval } : {}),
        ...(t.wait ? { wait: t.wait.kind } : {}),
      })),
      ...(started.output ? { output: { schema: started.output.schema, schemaHash: started.output.schemaHash, maxRepairs: started.output.maxRepairs } } : {}),
    };
  }
  if (started) view.budgets = { ...started.budgets, maxCostUsd: roundUsd(started.budgets.maxCostUsd) };
  if (terminal?.type === 'run_completed') view.result = bodyValue(terminal.answer);
  // Inline here; a large output (a blob) is read by withOutput, as JSON either way.
  if (terminal?.type === 'run_completed' && terminal.output?.kind === 'inline') view.output = terminal.output.value;
  if (terminal?.type === 'run_cancelled' && terminal.unresolved.length > 0) view.unresolved = [...terminal.unresolved];
  if (terminal?.type === 'run_failed') view.failure = { code: terminal.code, message: terminal.message };
  if (!view.failure && head.outcome?.status === 'failed') view.failure = { code: head.outcome.code ?? 'failed', message: head.outcome.summary };
  if (head.park) view.park = { reason: head.park.reason, detail: head.park.detail };
  return view;
}

/** An event as the events endpoint shows it: validated, storage fields dropped. */
export function eventView(raw: unknown): Record<string, unknown> {
  try {
    return parseEvent(raw) as unknown as Record<string, unknown>;
  } catch (error) {
    const seq = (raw as { seq?: unknown } | null)?.seq;
    return { seq: typeof seq === 'number' ? seq : null, type: 'invalid', error: (error as Error).message };
  }
}

/** A completed run's structured output stored as a blob, read whole: the API gives it as JSON. */
export async function withOutput(deps: Pick<EngineDeps, 'codec'>, view: RunView, terminal: RunEvent | undefined): Promise<RunView> {
  if (terminal?.type !== 'run_completed' || terminal.output?.kind !== 'blob') return view;
  return { ...view, output: await deps.codec.resolve(terminal.output) };
}
