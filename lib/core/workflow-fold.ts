import { CorruptLogError } from './errors.js';
import type { EventOf, ResolutionOutcome, RunEvent } from './events.js';
import type { RunState } from './state.js';
import { opCallId, opOfCallId, type OpKind, type OpWait } from './workflow-events.js';
import type { OpResult, OpState, WorkflowState } from './workflow-state.js';
import { plural } from './plural.js';
import { unhandled } from './unhandled.js';

/**
 * Fold rules of a workflow run's operation events (workflow-events.ts). Pure, like fold.ts, which
 * dispatches here. The order rules mirror a tool call's: a result ends an operation, a started
 * marker counts an attempt, a retry waits for its time, verify looks at a started step; anything
 * else (another kind or name at the same operation, a second result) is corruption.
 */

export type OpEvent = EventOf<'op_started'> | EventOf<'op_result'> | EventOf<'op_retry'> | EventOf<'op_verified'>;

function fail(event: RunEvent, message: string): never {
  throw new CorruptLogError(`${event.type}: ${message}`, event.seq);
}

/** The workflow part of a fresh run's state. */
export function emptyWorkflow(): WorkflowState {
  return { ops: [], resultOrder: [] };
}

function workflowOf(s: RunState, e: RunEvent): WorkflowState {
  if (!s.workflow) fail(e, 'an operation event in an agent run');
  return s.workflow;
}

/** The operation an event names, or undefined when it has none yet; kind and name must match. */
function existing(s: RunState, e: OpEvent): OpState | undefined {
  const wf = workflowOf(s, e);
  if (e.op > s.started.budgets.maxSteps) fail(e, `operation ${e.op} is past the run's ${plural(s.started.budgets.maxSteps, 'step')}`);
  const op = wf.ops[e.op - 1] ?? undefined;
  if (op && (op.kind !== e.kind || op.name !== e.name)) fail(e, `operation ${e.op} is ${op.kind} "${op.name}", not ${e.kind} "${e.name}"`);
  if (op?.status === 'done') fail(e, `operation ${e.op} already has a result`);
  return op;
}

/** A new operation: counted as a step of the run's budget. */
function create(s: RunState, e: OpEvent, kind: OpKind): OpState {
  const wf = s.workflow!;
  const op: OpState = { op: e.op, kind, name: e.name, status: 'started', seq: e.seq, attempt: 0, startedAt: e.at, startedBy: e.by.epoch };
  while (wf.ops.length < e.op - 1) wf.ops.push(null);
  wf.ops[e.op - 1] = op;
  s.usage.steps += 1;
  return op;
}

export function applyOpEvent(s: RunState, e: OpEvent): void {
  switch (e.type) {
    case 'op_started': {
      const op = existing(s, e) ?? create(s, e, e.kind);
      if (e.attempt !== op.attempt + 1) fail(e, `attempt ${e.attempt} after ${op.attempt}`);
      if (op.status === 'started' && op.attempt > 0 && !op.rerunApproved && op.kind !== 'step') fail(e, `operation ${e.op} (${op.kind}) started twice`);
      if ((e.wait === undefined) !== (e.kind === 'step')) fail(e, `a ${e.kind} ${e.wait ? 'with' : 'without'} a wait`);
      if (e.wait && e.wait.kind !== waitKindOf(e.kind)) fail(e, `a ${e.kind} waiting for a ${e.wait.kind}`);
      op.status = 'started';
      op.attempt = e.attempt;
      op.notAfter = e.notAfter;
      if (e.policy) op.policy = e.policy;
      if (e.wait) {
        op.wait = e.wait;
        reserveChild(s, op);
      }
      delete op.retryAt;
      delete op.verified;
      delete op.landedLooks;
      delete op.rerunApproved;
      return;
    }
    case 'op_result': {
      const op = existing(s, e) ?? create(s, e, e.kind);
      checkResultSource(s, e, op);
      if (e.attempt !== undefined) {
        const expected = op.status === 'started' && op.attempt > 0 ? op.attempt : op.attempt + 1;
        if (e.attempt !== expected) fail(e, `result of attempt ${e.attempt}, expected ${expected}`);
        op.attempt = e.attempt;
      }
      reconcileChild(s, e, op);
      if (e.inboxId) s.inboxSeen.push(e.inboxId);
      settleOp(
        s,
        op,
        {
          ok: e.ok,
          output: e.output,
          source: e.source,
          ...(e.errorCode ? { errorCode: e.errorCode } : {}),
          ...(e.void ? { void: true } : {}),
          ...(e.sentBy ? { sentBy: e.sentBy } : {}),
        },
        e.at,
      );
      return;
    }
    case 'op_retry': {
      const op = existing(s, e) ?? create(s, e, e.kind);
      if (e.kind !== 'step') fail(e, `a retry of a ${e.kind}`);
      const expected = op.status === 'started' && op.attempt > 0 ? op.attempt : op.attempt + 1;
      if (e.attempt !== expected) fail(e, `retry of attempt ${e.attempt}, expected ${expected}`);
      op.status = 'retrying';
      op.attempt = e.attempt;
      op.retryAt = e.retryAt;
      op.lastError = { ...e.error };
      delete op.verified;
      delete op.landedLooks;
      delete op.rerunApproved;
      return;
    }
    case 'op_verified': {
      const op = existing(s, e);
      if (!op || op.status !== 'started' || op.kind !== 'step') fail(e, `verify of operation ${e.op}, which is not a started step`);
      op.verified = e.status;
      if (e.status === 'landed') op.landedLooks = (op.landedLooks ?? 0) + 1;
      return;
    }
    default:
      return unhandled(e, 'operation event');
  }
}

/** What each kind of operation waits for (a step and a recorded value: nothing). */
const WAIT_KIND_OF = {
  step: undefined,
  sleep: 'timer',
  signal: 'signal',
  child: 'child',
  approval: 'approval',
  now: undefined,
  random: undefined,
  uuid: undefined,
} as const satisfies Record<OpKind, OpWait['kind'] | undefined>;

function waitKindOf(kind: OpKind): OpWait['kind'] | undefined {
  return WAIT_KIND_OF[kind];
}

/** Which results an operation may take, by how it stands. */
function checkResultSource(s: RunState, e: EventOf<'op_result'>, op: OpState): void {
  const fresh = op.attempt === 0;
  switch (e.source) {
    case 'value':
      if (!fresh || !['now', 'random', 'uuid'].includes(e.kind)) fail(e, `a recorded value for ${e.kind} "${e.name}"`);
      return;
    case 'step':
      if (e.kind !== 'step') fail(e, `a step result for a ${e.kind}`);
      if (e.attempt === undefined) fail(e, 'a step result without its attempt');
      return;
    case 'verify':
      if (op.verified !== 'landed') fail(e, `verify result for operation ${e.op}, not verified`);
      return;
    case 'timer':
    case 'signal':
    case 'child': {
      const want = { timer: 'timer', signal: 'signal', child: 'child' }[e.source];
      if (op.wait?.kind !== want || op.status !== 'started') fail(e, `${e.source} result for operation ${e.op}, which waits for ${op.wait?.kind ?? 'nothing'}`);
      return;
    }
    case 'timeout':
      if (op.status !== 'started' || !op.wait) fail(e, `timeout result for operation ${e.op}, which is not waiting`);
      return;
    case 'human':
      if (op.wait?.kind !== 'approval' || op.status !== 'started') fail(e, `a decision for operation ${e.op}, which awaits no approval`);
      return;
    case 'validation':
    case 'cancel':
      return;
    default:
      return unhandled(e.source, 'operation result source');
  }
}

/** Record an operation's result: it is delivered to the code in this order; its attention closes. */
export function settleOp(s: RunState, op: OpState, result: OpResult, at: number): void {
  op.status = 'done';
  op.result = result;
  op.endedAt = at;
  delete op.retryAt;
  s.workflow!.resultOrder.push(op.op);
  const callId = opCallId(op.op);
  s.attention = s.attention.filter((a) => a.callId !== callId);
}

/** The operation an attention or a resolution names, for fold's checks (undefined: not an operation). */
export function opOfCall(s: RunState, e: RunEvent, callId: string): OpState | undefined {
  const n = opOfCallId(callId);
  if (n === undefined) return undefined;
  const op = s.workflow?.ops[n - 1] ?? undefined;
  if (!op) fail(e, `unknown operation ${callId}`);
  return op;
}

/** A person's answer to an operation's attention: a result, or a rerun of a started step. */
export function resolveOp(s: RunState, e: EventOf<'attention_resolved'>, op: OpState, outcome: ResolutionOutcome): void {
  switch (outcome) {
    case 'succeeded':
    case 'failed': {
      const message = `marked ${outcome} by ${e.resolvedBy}`;
      const value: Record<string, string> = outcome === 'failed' ? { error: 'marked_failed', message } : { message };
      const output = e.result ?? { kind: 'inline' as const, value };
      settleOp(s, op, { ok: outcome === 'succeeded', output, source: 'human', ...(outcome === 'failed' ? { errorCode: 'marked_failed' } : {}) }, e.at);
      return;
    }
    case 'rerun':
      op.rerunApproved = true;
      op.rerunFrom = op.attempt;
      return;
    default:
      fail(e, `${outcome} is for a run-level park`);
  }
}

/** A child run's reservation, spent from the parent when the operation starts (as a child tool call's). */
function reserveChild(s: RunState, op: OpState): void {
  if (op.wait?.kind !== 'child') return;
  const r = op.wait.reserved;
  s.usage.inputTokens += r.inputTokens;
  s.usage.outputTokens += r.outputTokens;
  s.usage.costUsd += r.costUsd;
}

/** A child's answer replaces its reservation with what it really spent, never above it. */
function reconcileChild(s: RunState, e: EventOf<'op_result'>, op: OpState): void {
  if (op.wait?.kind !== 'child' || e.source !== 'child' || !e.childUsage) return;
  const r = op.wait.reserved;
  const u = e.childUsage;
  s.usage.inputTokens += Math.min(u.inputTokens, r.inputTokens) - r.inputTokens;
  s.usage.outputTokens += Math.min(u.outputTokens, r.outputTokens) - r.outputTokens;
  s.usage.costUsd += Math.min(u.costUsd, r.costUsd) - r.costUsd;
}
