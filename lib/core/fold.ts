import { CorruptLogError } from './errors.js';
import { parseEvent, type EventOf, type ModelReservation, type RunEvent } from './events.js';
import { FOLD_VERSION, type CallState, type RunState } from './state.js';
import { repairMessage } from './output.js';
import {
  applyApprovalDecided,
  applyApprovalRequested,
  applyUserMessage,
  checkWaitResult,
  deliverPendingMessages,
  reconcileChild,
  reserveChild,
  settle,
} from './fold-control.js';
import { plural } from './plural.js';
import { applyOpEvent, emptyWorkflow, opOfCall, resolveOp } from './workflow-fold.js';

/** Fold a whole log. Validates every record and the order of events; throws CorruptLogError. */
export function foldLog(records: readonly unknown[]): RunState {
  const [first, ...rest] = records;
  if (first === undefined) throw new CorruptLogError('log is empty: no run_started');
  const state = foldEvent(undefined, parseEvent(first));
  for (const record of rest) applyEvent(state, parseEvent(record));
  return state;
}

/** Continue folding from a state with more raw records (tail read after a snapshot or cache). */
export function foldMore(state: RunState, records: readonly unknown[]): RunState {
  if (records.length === 0) return state;
  // One copy for the whole batch keeps replay linear in the number of events.
  return foldMoreInto(structuredClone(state), records);
}

/**
 * foldMore for a state nobody else holds (one just decoded from a snapshot): folds into it
 * without the copy, which for a long run costs more than the whole tail. On a CorruptLogError the
 * state is half-applied and must be discarded, as with applyEvent.
 */
export function foldMoreInto(owned: RunState, records: readonly unknown[]): RunState {
  for (const record of records) applyEvent(owned, parseEvent(record));
  return owned;
}

/**
 * Apply one event. Pure: the input state is not modified. Impossible orders (a result before its
 * start, a gap in seq, anything after the end) are corruption, never silently skipped.
 */
export function foldEvent(prev: RunState | undefined, event: RunEvent): RunState {
  if (!prev) {
    if (event.type !== 'run_started' || event.seq !== 1) {
      throw new CorruptLogError(`log must begin with run_started at seq 1, found ${event.type}`, event.seq);
    }
    const workflow = event.workflow !== undefined;
    return {
      foldVersion: FOLD_VERSION,
      lastSeq: 1,
      started: event,
      status: 'running',
      // A workflow has no conversation: its code reads the input; its operations are `workflow`.
      messages: workflow ? [] : [{ role: 'user', content: event.input }],
      calls: {},
      turnCalls: [],
      lastText: null,
      answered: false,
      usage: { steps: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 },
      unansweredModelCalls: 0,
      attention: [],
      inboxSeen: [],
      pendingMessages: [],
      ...(workflow ? { workflow: emptyWorkflow() } : {}),
    };
  }
  const s: RunState = structuredClone(prev);
  applyEvent(s, event);
  return s;
}

/**
 * What the state would be after one more tool_result, without touching `state` and without a deep
 * copy of the whole run: only what a tool_result changes is copied (the call it settles, and the
 * lists it appends to). For deciding what that result may carry (the next model reservation).
 */
export function previewToolResult(state: RunState, event: EventOf<'tool_result'>): RunState {
  const call = state.calls[event.callId];
  // The other calls are read through the prototype, not copied: a long run has one per turn.
  const calls: Record<string, CallState> = Object.create(state.calls) as Record<string, CallState>;
  if (call) calls[event.callId] = structuredClone(call);
  const s: RunState = {
    ...state,
    usage: { ...state.usage },
    calls,
    turnCalls: [...state.turnCalls],
    messages: [...state.messages],
    attention: [...state.attention],
    inboxSeen: [...state.inboxSeen],
    pendingMessages: [...state.pendingMessages],
  };
  applyEvent(s, event);
  return s;
}

/**
 * Apply one event to a state the caller owns (mutating it). On a CorruptLogError the state is
 * left half-applied: the caller must discard it.
 */
export function applyEvent(s: RunState, event: RunEvent): void {
  if (event.seq !== s.lastSeq + 1) {
    throw new CorruptLogError(`expected seq ${s.lastSeq + 1}, found ${event.seq} (gap or repeat)`, event.seq);
  }
  // Only a follow-up message may come after the end, and only of a completed run (it reopens it).
  const reopens = event.type === 'user_message' && s.outcome?.type === 'completed';
  if (s.outcome && !reopens) throw new CorruptLogError(`${event.type} after the run ended`, event.seq);
  s.lastSeq = event.seq;
  apply(s, event);
  const outcome = s.outcome as RunState['outcome']; // apply() may have set it
  s.status = outcome ? outcome.type : s.attention.length > 0 && !s.cancel ? 'parked' : 'running';
}

function fail(event: RunEvent, message: string): never {
  throw new CorruptLogError(`${event.type}: ${message}`, event.seq);
}

function callOf(s: RunState, event: RunEvent, callId: string): CallState {
  const call = s.calls[callId];
  if (!call) fail(event, `unknown call ${callId}`);
  return call;
}

function apply(s: RunState, e: RunEvent): void {
  switch (e.type) {
    case 'run_started':
      return fail(e, 'a second run_started');
    case 'model_started':
      if (e.purpose === 'summary') return startSummary(s, e);
      if (e.covers) fail(e, 'covers without purpose summary');
      return startModel(s, e, e);
    case 'model_response': {
      const open = s.openModel;
      if (!open) fail(e, 'response without model_started');
      if ((e.purpose === 'summary') !== (open.summary !== undefined))
        fail(e, `purpose ${e.purpose ?? 'turn'} answers a ${open.summary ? 'summary' : 'turn'} call`);
      // Replace the reservation with what was actually used.
      s.usage.inputTokens += e.usage.inputTokens - open.reserved.inputTokens;
      s.usage.outputTokens += e.usage.outputTokens - open.reserved.outputTokens;
      s.usage.costUsd += e.costUsd - open.reserved.costUsd;
      delete s.openModel;
      delete s.lastModelFailure;
      s.unansweredModelCalls = 0;
      if (open.summary) {
        // Not a turn: the conversation is unchanged, the summary now stands in for its oldest turns.
        if (e.calls.length > 0) fail(e, 'a summary answer with tool calls');
        s.context = { summary: e.text ?? { kind: 'inline', value: '' }, turns: open.summary.turns };
        return;
      }
      s.turnCalls = [];
      e.calls.forEach((c, i) => {
        if (c.callId !== `${e.seq}-${i}`) fail(e, `call ${i} has id ${c.callId}, expected ${e.seq}-${i}`);
        const call: CallState = {
          callId: c.callId,
          providerId: c.providerId,
          name: c.name,
          args: c.args,
          modelSeq: e.seq,
          status: 'decided',
          attempt: 0,
        };
        if (c.argsError !== undefined) call.argsError = c.argsError;
        s.calls[c.callId] = call;
        s.turnCalls.push(c.callId);
      });
      s.lastText = e.text;
      s.answered = e.calls.length === 0;
      s.messages.push({
        role: 'assistant',
        text: e.text,
        calls: e.calls.map((c) => ({ callId: c.callId, providerId: c.providerId, name: c.name, args: c.args })),
      });
      foldAnswerOutput(s, e);
      return;
    }
    case 'model_failed': {
      if (!s.openModel) fail(e, 'failure without model_started');
      delete s.openModel;
      s.lastModelFailure = { code: e.code, message: e.message, retryable: e.retryable };
      return;
    }
    case 'tool_started': {
      const call = callOf(s, e, e.callId);
      if (call.status === 'done') fail(e, `call ${e.callId} already has a result`);
      if (e.attempt !== call.attempt + 1) fail(e, `attempt ${e.attempt} after ${call.attempt}`);
      // The log can never hold a call that ran without the approval it was asked for.
      if (call.approval && call.approval.status !== 'approved') fail(e, `call ${e.callId} started while its approval is ${call.approval.status}`);
      call.status = 'started';
      call.attempt = e.attempt;
      call.notAfter = e.notAfter;
      if (e.wait) call.wait = e.wait;
      else delete call.wait;
      reserveChild(s, call);
      delete call.verified;
      delete call.landedLooks;
      delete call.rerunApproved;
      return;
    }
    case 'tool_result': {
      const call = callOf(s, e, e.callId);
      if (call.status === 'done') fail(e, `call ${e.callId} already has a result`);
      if (call.status === 'decided' && e.source !== 'validation' && e.source !== 'cancel') {
        fail(e, `result for ${e.callId} before it started`);
      }
      if (e.source === 'verify' && call.verified !== 'landed') fail(e, `verify result for ${e.callId} not verified`);
      checkWaitResult(e, call);
      reconcileChild(s, e, call);
      if (e.inboxId) s.inboxSeen.push(e.inboxId);
      settle(s, call, { ok: e.ok, output: e.output, source: e.source, ...(e.errorCode ? { errorCode: e.errorCode } : {}) });
      // A carried reservation: exactly a model_started right after this result.
      if (e.reservation) startModel(s, e, e.reservation);
      return;
    }
    case 'tool_verified': {
      const call = callOf(s, e, e.callId);
      if (call.status !== 'started') fail(e, `verify of ${e.callId} which is ${call.status}`);
      call.verified = e.status;
      if (e.status === 'landed') call.landedLooks = (call.landedLooks ?? 0) + 1;
      return;
    }
    case 'attention_required': {
      if (e.callId !== undefined) {
        const target = opOfCall(s, e, e.callId) ?? callOf(s, e, e.callId);
        if (target.status === 'done') fail(e, `attention for ${e.callId} which has a result`);
      }
      s.attention.push({ seq: e.seq, reason: e.reason, detail: e.detail, ...(e.callId ? { callId: e.callId } : {}) });
      return;
    }
    case 'attention_resolved': {
      const open = s.attention.find((a) => a.seq === e.attentionSeq);
      if (!open) fail(e, `no open attention at seq ${e.attentionSeq}`);
      if (open.callId !== e.callId) fail(e, `attention ${e.attentionSeq} is for ${open.callId ?? 'the run'}`);
      s.attention = s.attention.filter((a) => a !== open);
      s.inboxSeen.push(e.inboxId);
      resolve(s, e, open.callId);
      return;
    }
    case 'cancel_requested':
      if (s.cancel) fail(e, 'cancel requested twice');
      s.cancel = { seq: e.seq, by: e.requestedBy };
      s.inboxSeen.push(e.inboxId);
      return;
    case 'run_completed':
      s.outcome = { type: 'completed', seq: e.seq, answer: e.answer, ...(e.output ? { output: e.output } : {}) };
      return;
    case 'run_failed':
      if (e.inboxId) s.inboxSeen.push(e.inboxId);
      s.outcome = { type: 'failed', seq: e.seq, code: e.code, message: e.message };
      return;
    case 'run_cancelled':
      if (!s.cancel) fail(e, 'run_cancelled without cancel_requested');
      s.outcome = { type: 'cancelled', seq: e.seq, unresolved: e.unresolved };
      return;
    case 'approval_requested':
      return applyApprovalRequested(s, e, callOf(s, e, e.callId));
    case 'approval_decided':
      return applyApprovalDecided(s, e, callOf(s, e, e.callId));
    case 'user_message':
      if (s.workflow) fail(e, 'a follow-up message to a workflow run');
      return applyUserMessage(s, e);
    case 'op_started':
    case 'op_result':
    case 'op_retry':
    case 'op_verified':
      return applyOpEvent(s, e);
    default: {
      // Every event type is folded: a new one that is not fails to compile here.
      const unhandled: never = e;
      fail(unhandled, 'unknown event type');
    }
  }
}

/**
 * An answer under an output schema: its verdict, and for one that does not fit, the repair the
 * model reads next (a user turn right after its answer, built by a pure rule from the log).
 */
function foldAnswerOutput(s: RunState, e: EventOf<'model_response'>): void {
  const pinned = s.started.output;
  if (e.output !== undefined && e.outputError !== undefined) fail(e, 'both output and outputError');
  if (!pinned) {
    if (e.output !== undefined || e.outputError !== undefined) fail(e, 'output verdict without an output schema in run_started');
    return;
  }
  if (e.calls.length > 0) {
    if (e.output !== undefined || e.outputError !== undefined) fail(e, 'output verdict on a response that asks for tools');
    delete s.answerOutput;
    return;
  }
  if (e.output !== undefined) {
    s.answerOutput = { ok: true, output: e.output };
    s.outputRepairs = 0;
    return;
  }
  // A final answer with no verdict cannot come from a writer that knows the schema: treat it as
  // not fitting, so a run never completes with an output nobody checked.
  const error = e.outputError ?? 'the answer was not checked against the output schema';
  s.answerOutput = { ok: false, error, seq: e.seq };
  const repair = (s.outputRepairs ?? 0) + 1;
  s.outputRepairs = repair;
  if (repair <= pinned.maxRepairs) s.messages.push({ role: 'user', content: { kind: 'inline', value: repairMessage(error, repair, pinned.maxRepairs) } });
}

/** A model call's reservation (model_started, or carried by a tool_result): charged now, never refunded. */
function startModel(s: RunState, e: RunEvent, r: ModelReservation): void {
  const unresolved = s.turnCalls.filter((id) => s.calls[id]?.status !== 'done');
  if (unresolved.length > 0) fail(e, `model called while calls ${unresolved.join(',')} have no result`);
  if (r.step !== s.usage.steps + 1) fail(e, `step ${r.step} after ${s.usage.steps}`);
  // An earlier reservation with no response stays spent: the crash never refunds it.
  s.usage.steps = r.step;
  s.usage.inputTokens += r.reserved.inputTokens;
  s.usage.outputTokens += r.reserved.outputTokens;
  s.usage.costUsd += r.reserved.costUsd;
  s.openModel = { seq: e.seq, reserved: { ...r.reserved } };
  s.answered = false;
  deliverPendingMessages(s);
  s.unansweredModelCalls += 1;
}

/**
 * A summary call's reservation (context policy): charged as any model call's and counted as a
 * step, but no turn of the conversation. Follow-up messages wait for the next turn's call. Not
 * tied to the pinned policy: a fork re-pinned to a version that does not summarize copies the
 * summaries its source made, and the fold must take them (the prompt uses one only under a policy).
 */
function startSummary(s: RunState, e: EventOf<'model_started'>): void {
  const covers = e.covers?.turns;
  if (covers === undefined) fail(e, 'a summary call without covers');
  const turns = s.messages.reduce((n, m) => (m.role === 'assistant' ? n + 1 : n), 0);
  if (covers <= (s.context?.turns ?? 0) || covers > turns)
    fail(e, `covers ${plural(covers, 'turn')} of ${turns} (${s.context?.turns ?? 0} already summarized)`);
  const answered = s.answered;
  const pending = s.pendingMessages;
  s.pendingMessages = [];
  startModel(s, e, e);
  s.answered = answered;
  s.pendingMessages = pending;
  s.openModel = { ...s.openModel!, summary: { turns: covers } };
}

function resolve(s: RunState, e: EventOf<'attention_resolved'>, callId: string | undefined): void {
  const op = callId === undefined ? undefined : opOfCall(s, e, callId);
  if (op) return resolveOp(s, e, op, e.outcome);
  const call = callId === undefined ? undefined : s.calls[callId];
  switch (e.outcome) {
    case 'succeeded':
    case 'failed': {
      if (!call) fail(e, `${e.outcome} needs a call`);
      const output = e.result ?? { kind: 'inline', value: `marked ${e.outcome} by ${e.resolvedBy}` };
      settle(s, call, { ok: e.outcome === 'succeeded', output, source: 'human' });
      return;
    }
    case 'rerun':
      if (!call) fail(e, 'rerun needs a call');
      call.rerunApproved = true;
      // The starts a person has looked at: a read's crash limit counts from here.
      call.rerunFrom = call.attempt;
      return;
    case 'retry':
      if (call) fail(e, 'retry is for a run-level park');
      // A person looked: give the model (or the missing version) another chance.
      s.unansweredModelCalls = 0;
      delete s.lastModelFailure;
      return;
    case 'fail':
      if (call) fail(e, 'fail is for a run-level park');
      s.failRequested = { by: e.resolvedBy };
      return;
  }
}
