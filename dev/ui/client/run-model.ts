import type { LogEvent } from './types.js';

/**
 * What the run page shows, folded from the log as events arrive: each model step with its tokens,
 * cost and duration, each tool call with its policy, attempts and result, and the calls started
 * with no result. Pure (no DOM, no clock): the page folds every event once, tests fold fixtures.
 */
export interface ModelStep {
  step: number;
  startedSeq: number;
  startedAt: number;
  endedAt?: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** model_failed code, when the call failed. */
  failed?: string;
}

export interface ToolAttempt {
  seq: number;
  attempt: number;
  startedAt: number;
  notAfter: number;
  /** A workflow step attempt that threw and is retried (op_retry): when, and its error code. */
  threw?: { at: number; code: string };
}

/** What a workflow operation waits for, from its op_started (the page's forms read the schemas here). */
export interface OpWait {
  kind: 'timer' | 'signal' | 'child' | 'approval';
  until?: number;
  signal?: string;
  payloadSchema?: Record<string, unknown>;
  childRunId?: string;
  child?: { kind: string; name: string; version: string };
  /** For an approval: the arguments asked about (a body) and the schema an edit must fit. */
  args?: unknown;
  argsSchema?: Record<string, unknown>;
}

export interface ToolCall {
  callId: string;
  name: string;
  policy?: string;
  /** For a workflow operation (callId `op-<n>`): its number and kind, and what it waits for. */
  op?: { n: number; kind: string; wait?: OpWait };
  attempts: ToolAttempt[];
  result?: { seq: number; at: number; ok: boolean; source: string; errorCode?: string };
  verified?: string;
  /** A workflow step's last retried error code (op_retry). */
  lastError?: string;
}

export interface RunModel {
  lastSeq: number;
  startedAt?: number;
  graceMs: number;
  policies: Map<string, string>;
  steps: ModelStep[];
  calls: Map<string, ToolCall>;
  /** Open attention as the log says it (the head's list is what the API acts on). */
  openAttention: Map<number, { seq: number; reason: string; callId?: string; detail: string }>;
  /** The event that ingested each inbox item (a resolution or cancel sent from anywhere). */
  ingested: Map<string, LogEvent>;
  /** run_completed, run_failed or run_cancelled, once logged. */
  terminal?: LogEvent;
  /** `at` of the event before each seq: the timeline's "time since the previous event". */
  previousAt: Map<number, number>;
  lastAt?: number;
}

export function emptyModel(): RunModel {
  return {
    lastSeq: 0,
    graceMs: 0,
    policies: new Map(),
    steps: [],
    calls: new Map(),
    openAttention: new Map(),
    ingested: new Map(),
    previousAt: new Map(),
  };
}

const num = (v: unknown, fallback = 0): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Fold one event (in seq order; a repeat is ignored). */
export function foldEvent(m: RunModel, e: LogEvent): void {
  if (e.seq <= m.lastSeq) return;
  if (m.lastAt !== undefined) m.previousAt.set(e.seq, m.lastAt);
  m.lastSeq = e.seq;
  m.lastAt = e.at;
  // Any event that took in an inbox item (a decision, a signal's result, a message, a resolution, a cancel).
  remember(m, e);
  switch (e.type) {
    case 'run_started': {
      m.startedAt = e.at;
      m.graceMs = num(e.graceMs);
      for (const t of (e.tools as { name?: string; policy?: string }[] | undefined) ?? []) if (t.name && t.policy) m.policies.set(t.name, t.policy);
      return;
    }
    case 'model_started':
      m.steps.push({ step: num(e.step, m.steps.length + 1), startedSeq: e.seq, startedAt: e.at, inputTokens: 0, outputTokens: 0, costUsd: 0 });
      return;
    case 'model_response': {
      const step = openStep(m);
      const usage = (e.usage as { inputTokens?: number; outputTokens?: number } | undefined) ?? {};
      if (step) Object.assign(step, { endedAt: e.at, inputTokens: num(usage.inputTokens), outputTokens: num(usage.outputTokens), costUsd: num(e.costUsd) });
      for (const c of (e.calls as { callId?: string; name?: string }[] | undefined) ?? []) {
        if (!c.callId) continue;
        const name = c.name ?? '?';
        const policy = m.policies.get(name);
        m.calls.set(c.callId, { callId: c.callId, name, attempts: [], ...(policy ? { policy } : {}) });
      }
      return;
    }
    case 'model_failed': {
      const step = openStep(m);
      if (step) Object.assign(step, { endedAt: e.at, failed: str(e.code) ?? 'failed' });
      return;
    }
    case 'tool_started': {
      const call = callOf(m, e);
      call.attempts.push({ seq: e.seq, attempt: num(e.attempt, call.attempts.length + 1), startedAt: e.at, notAfter: num(e.notAfter) });
      delete call.result;
      return;
    }
    case 'tool_result': {
      const errorCode = str(e.errorCode);
      callOf(m, e).result = { seq: e.seq, at: e.at, ok: e.ok === true, source: str(e.source) ?? 'tool', ...(errorCode ? { errorCode } : {}) };
      // The result that resolved its turn may carry the next model call's reservation: that step starts here.
      const reservation = e.reservation as { step?: number } | undefined;
      if (reservation) m.steps.push({ step: num(reservation.step, m.steps.length + 1), startedSeq: e.seq, startedAt: e.at, inputTokens: 0, outputTokens: 0, costUsd: 0 });
      return;
    }
    case 'tool_verified':
      callOf(m, e).verified = str(e.status) ?? 'unknown';
      return;
    case 'op_started': {
      const call = opOf(m, e);
      const policy = str(e.policy);
      if (policy) call.policy = policy;
      const wait = opWait(e.wait);
      if (call.op && wait) call.op.wait = wait;
      call.attempts.push({ seq: e.seq, attempt: num(e.attempt, call.attempts.length + 1), startedAt: e.at, notAfter: num(e.notAfter) });
      delete call.result;
      return;
    }
    case 'op_result': {
      const errorCode = str(e.errorCode);
      opOf(m, e).result = { seq: e.seq, at: e.at, ok: e.ok === true, source: str(e.source) ?? 'step', ...(errorCode ? { errorCode } : {}) };
      return;
    }
    case 'op_retry': {
      const error = (e.error as { code?: string } | undefined) ?? {};
      const call = opOf(m, e);
      call.lastError = str(error.code) ?? 'error';
      const attempt = call.attempts.at(-1);
      if (attempt) attempt.threw = { at: e.at, code: call.lastError };
      return;
    }
    case 'op_verified':
      opOf(m, e).verified = str(e.status) ?? 'unknown';
      return;
    case 'attention_required': {
      const callId = str(e.callId);
      m.openAttention.set(e.seq, { seq: e.seq, reason: str(e.reason) ?? '', detail: str(e.detail) ?? '', ...(callId ? { callId } : {}) });
      return;
    }
    case 'attention_resolved': {
      m.openAttention.delete(num(e.attentionSeq));
      remember(m, e);
      // A person's "succeeded" or "failed" is the call's result (fold settles it the same way).
      const callId = str(e.callId);
      if (callId && (e.outcome === 'succeeded' || e.outcome === 'failed')) {
        callOf(m, e).result = { seq: e.seq, at: e.at, ok: e.outcome === 'succeeded', source: 'human' };
      }
      return;
    }
    case 'cancel_requested':
      remember(m, e);
      return;
    case 'run_completed':
    case 'run_failed':
    case 'run_cancelled':
      m.terminal = e;
      remember(m, e);
      return;
    default:
  }
}

function openStep(m: RunModel): ModelStep | undefined {
  const last = m.steps.at(-1);
  return last && last.endedAt === undefined ? last : undefined;
}

function callOf(m: RunModel, e: LogEvent): ToolCall {
  const callId = str(e.callId) ?? '?';
  let call = m.calls.get(callId);
  if (!call) {
    call = { callId, name: '?', attempts: [] };
    m.calls.set(callId, call);
  }
  return call;
}

/** The call id a workflow operation goes by (`op-<n>`), for an op_* event. */
export function opCallIdOf(e: LogEvent): string | undefined {
  return e.type.startsWith('op_') && typeof e.op === 'number' ? `op-${e.op}` : undefined;
}

/** A workflow operation as a call: `op-<n>`, named by its kind and name (a sleep's name is its kind). */
function opOf(m: RunModel, e: LogEvent): ToolCall {
  const callId = opCallIdOf(e) ?? '?';
  let call = m.calls.get(callId);
  if (!call) {
    const kind = str(e.kind) ?? '?';
    const name = str(e.name) ?? kind;
    call = { callId, name: name === kind ? kind : `${kind} ${name}`, attempts: [], op: { n: num(e.op), kind } };
    m.calls.set(callId, call);
  }
  return call;
}

function opWait(raw: unknown): OpWait | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const w = raw as Record<string, unknown>;
  const kind = w.kind;
  if (kind !== 'timer' && kind !== 'signal' && kind !== 'child' && kind !== 'approval') return undefined;
  const record = (v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
  const until = typeof w.until === 'number' ? w.until : undefined;
  const definition = record(w.definition);
  const payloadSchema = record(w.payloadSchema);
  const argsSchema = record(w.argsSchema);
  const signal = str(w.signal);
  const childRunId = str(w.runId);
  return {
    kind,
    ...(until !== undefined ? { until } : {}),
    ...(signal ? { signal } : {}),
    ...(payloadSchema ? { payloadSchema } : {}),
    ...(childRunId ? { childRunId } : {}),
    ...(definition ? { child: { kind: str(definition.kind) ?? '?', name: str(definition.name) ?? '?', version: str(definition.version) ?? '?' } } : {}),
    ...(w.args !== undefined ? { args: w.args } : {}),
    ...(argsSchema ? { argsSchema } : {}),
  };
}

function remember(m: RunModel, e: LogEvent): void {
  const inboxId = str(e.inboxId);
  if (inboxId) m.ingested.set(inboxId, e);
}

/** Calls whose latest attempt started and has no result: what a crash leaves behind. */
export function pendingCalls(m: RunModel): (ToolCall & { last: ToolAttempt; appliesAt: number })[] {
  const out: (ToolCall & { last: ToolAttempt; appliesAt: number })[] = [];
  for (const call of m.calls.values()) {
    const last = call.attempts.at(-1);
    // A workflow's wait (sleep, signal, child, approval) is open by design, not cut off.
    if (!last || call.result || call.op?.wait || last.threw) continue;
    out.push({ ...call, last, appliesAt: last.notAfter + m.graceMs });
  }
  return out;
}

export interface Span {
  kind: 'model' | 'tool';
  label: string;
  start: number;
  /** Undefined while running: drawn up to now. */
  end?: number;
  ok: boolean;
  /** How long it really ran is unknown (cut off by a crash): drawn dashed. */
  unknown?: boolean;
  /** For a call with no result: its deadline, past which it cannot still be running. */
  notAfter?: number;
}

/** Model calls and tool attempts as time spans, for the duration strip. */
export function spans(m: RunModel): Span[] {
  const out: Span[] = m.steps.map((s) => ({
    kind: 'model' as const,
    label: `model step ${s.step}${s.failed ? ` (${s.failed})` : ''}`,
    start: s.startedAt,
    ...(s.endedAt !== undefined ? { end: s.endedAt } : {}),
    ok: !s.failed,
  }));
  for (const call of m.calls.values()) {
    // A workflow's waits are not work: the waterfall draws them, the duration strip does not.
    if (call.op?.wait) continue;
    call.attempts.forEach((a, i) => {
      const label = `${call.name} (${call.callId}) attempt ${a.attempt}`;
      const last = i === call.attempts.length - 1;
      if (a.threw) {
        out.push({ kind: 'tool', label: `${label}, threw ${a.threw.code} (retried)`, start: a.startedAt, end: a.threw.at, ok: false });
      } else if (last && call.result && call.result.source !== 'human') {
        out.push({ kind: 'tool', label, start: a.startedAt, end: call.result.at, ok: call.result.ok });
      } else if (last && !call.result) {
        // Still running, or cut off: it cannot have run past its deadline.
        out.push({ kind: 'tool', label: `${label}, no result yet`, start: a.startedAt, ok: true, unknown: true, notAfter: a.notAfter });
      } else {
        // Superseded by a later attempt or answered by a person: cut off by a crash somewhere
        // before its deadline; how long it ran is unknown.
        const end = Math.min(a.notAfter, last ? (call.result?.at ?? a.notAfter) : (call.attempts[i + 1]?.startedAt ?? a.notAfter));
        out.push({ kind: 'tool', label: `${label}, cut off (outcome unknown)`, start: a.startedAt, end, ok: true, unknown: true });
      }
    });
  }
  return out.sort((a, b) => a.start - b.start);
}

/** The columns of one timeline row that depend on earlier events (tool name, policy, tokens). */
export function facts(m: RunModel, e: LogEvent): { tool?: string; policy?: string; attempt?: number; tokens?: string; costUsd?: number; ok?: boolean; notAfter?: number } {
  const callId = str(e.callId) ?? opCallIdOf(e);
  const call = callId ? m.calls.get(callId) : undefined;
  const base = call ? { tool: `${call.name} (${call.callId})`, ...(call.policy ? { policy: call.policy } : {}) } : {};
  switch (e.type) {
    case 'model_response': {
      const usage = (e.usage as { inputTokens?: number; outputTokens?: number } | undefined) ?? {};
      const calls = ((e.calls as { name?: string }[] | undefined) ?? []).map((c) => c.name ?? '?');
      return { ...(calls.length ? { tool: calls.join(', ') } : {}), tokens: `${num(usage.inputTokens)} in / ${num(usage.outputTokens)} out`, costUsd: num(e.costUsd) };
    }
    case 'model_started': {
      const reserved = (e.reserved as { costUsd?: number } | undefined) ?? {};
      return { tokens: `≤ ${num(e.maxOutputTokens)} out reserved`, costUsd: num(reserved.costUsd) };
    }
    case 'tool_started':
    case 'op_started':
      return { ...base, attempt: num(e.attempt), notAfter: num(e.notAfter) };
    case 'tool_result':
    case 'op_result':
      return { ...base, ok: e.ok === true };
    case 'op_retry':
      return { ...base, attempt: num(e.attempt), ok: false };
    case 'model_failed':
      return { ok: false };
    case 'run_failed':
      return { ok: false };
    default:
      return base;
  }
}
