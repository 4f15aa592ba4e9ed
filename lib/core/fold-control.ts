import { CorruptLogError } from './errors.js';
import type { EventOf, RunEvent } from './events.js';
import type { CallResult, CallState, RunState } from './state.js';

/**
 * Fold rules for the control events (approvals, durable waits, follow-up messages). Kept apart
 * from fold.ts so each file stays readable; fold.ts dispatches here. Pure, like fold.
 */

function fail(event: RunEvent, message: string): never {
  throw new CorruptLogError(`${event.type}: ${message}`, event.seq);
}

/** Record a call's result and the tool message the model will see; any attention on it closes. */
export function settle(s: RunState, call: CallState, result: CallResult): void {
  call.status = 'done';
  call.result = result;
  s.attention = s.attention.filter((a) => a.callId !== call.callId);
  s.messages.push({
    role: 'tool',
    callId: call.callId,
    providerId: call.providerId,
    name: call.name,
    isError: !result.ok,
    content: result.output,
  });
}

export function applyApprovalRequested(s: RunState, e: EventOf<'approval_requested'>, call: CallState): void {
  if (call.status !== 'decided') fail(e, `call ${call.callId} is already ${call.status}`);
  if (call.approval) fail(e, `call ${call.callId} already has an approval ${call.approval.status}`);
  call.approval = { status: 'pending', argsHash: e.argsHash, requestedSeq: e.seq, ...(e.expiresAt !== undefined ? { expiresAt: e.expiresAt } : {}) };
  void s;
}

/**
 * approve binds the call to the hash it names; edit also replaces the arguments, in the call and
 * in the assistant message the model sees next turn; reject and expire settle the call as an
 * error result carrying the comment, so the model can adapt.
 */
export function applyApprovalDecided(s: RunState, e: EventOf<'approval_decided'>, call: CallState): void {
  const approval = call.approval;
  if (!approval || approval.status !== 'pending') fail(e, `call ${call.callId} awaits no approval`);
  if (call.status !== 'decided') fail(e, `call ${call.callId} is already ${call.status}`);
  if (e.inboxId) s.inboxSeen.push(e.inboxId);
  approval.decidedBy = e.decidedBy;
  switch (e.decision) {
    case 'approve':
      if (e.argsHash !== approval.argsHash) fail(e, `approves arguments ${e.argsHash.slice(0, 12)}, requested ${approval.argsHash.slice(0, 12)}`);
      approval.status = 'approved';
      return;
    case 'edit': {
      if (!e.args) fail(e, 'an edit without arguments');
      approval.status = 'approved';
      approval.argsHash = e.argsHash;
      approval.edited = true;
      call.args = e.args;
      // The message is replaced, never changed in place: what is derived from a message (its
      // share of the token estimate, the prompt's resolved copy) is memoized per message object.
      s.messages.forEach((m, i) => {
        if (m.role !== 'assistant' || !m.calls.some((c) => c.callId === call.callId)) return;
        s.messages[i] = { ...m, calls: m.calls.map((c) => (c.callId === call.callId ? { ...c, args: e.args! } : c)) };
      });
      return;
    }
    case 'reject':
    case 'expire': {
      const expired = e.decision === 'expire';
      approval.status = expired ? 'expired' : 'rejected';
      const message = expired
        ? `no approval for ${call.name} was given in time; the call did not run`
        : `${e.decidedBy} rejected this call to ${call.name}; it did not run`;
      settle(s, call, {
        ok: false,
        output: { kind: 'inline', value: { error: expired ? 'approval_expired' : 'rejected', message, ...(e.comment ? { comment: e.comment } : {}) } },
        source: expired ? 'timeout' : 'human',
        errorCode: expired ? 'approval_expired' : 'rejected',
      });
      return;
    }
  }
}

export function applyUserMessage(s: RunState, e: EventOf<'user_message'>): void {
  // A follow-up reopens a completed run: it continues with its history, pins and what is left of its budgets.
  if (s.outcome?.type === 'completed') delete s.outcome;
  s.pendingMessages.push(e.input);
  s.inboxSeen.push(e.inboxId);
}

/** At the next model call, follow-ups join the conversation (never between a call and its result). */
export function deliverPendingMessages(s: RunState): void {
  for (const content of s.pendingMessages) s.messages.push({ role: 'user', content });
  s.pendingMessages = [];
}

/**
 * A child call's reservation is counted as spent when it starts; its answer replaces it with what
 * the child really spent, field by field never above the reservation (the child's own budgets are
 * the reservation, so a larger figure could only be a bug: it must not raise the parent's spend).
 * A child call settled any other way (timeout, cancel, a person) keeps its reservation spent.
 */
export function reserveChild(s: RunState, call: CallState): void {
  if (call.wait?.kind !== 'child') return;
  const r = call.wait.reserved;
  s.usage.inputTokens += r.inputTokens;
  s.usage.outputTokens += r.outputTokens;
  s.usage.costUsd += r.costUsd;
}

export function reconcileChild(s: RunState, e: EventOf<'tool_result'>, call: CallState): void {
  if (call.wait?.kind !== 'child' || e.source !== 'child' || !e.childUsage) return;
  const r = call.wait.reserved;
  const u = e.childUsage;
  s.usage.inputTokens += Math.min(u.inputTokens, r.inputTokens) - r.inputTokens;
  s.usage.outputTokens += Math.min(u.outputTokens, r.outputTokens) - r.outputTokens;
  s.usage.costUsd += Math.min(u.costUsd, r.costUsd) - r.costUsd;
}

/** The signal/timer/child rules of a tool_result: only a waiting call takes one, and vice versa. */
export function checkWaitResult(e: EventOf<'tool_result'>, call: CallState): void {
  if (e.source === 'child' && call.wait?.kind !== 'child') fail(e, `child result for ${call.callId}, which waits for no child`);
  const viaWait = e.source === 'signal' || e.source === 'timer';
  if (viaWait && !call.wait) fail(e, `${e.source} result for ${call.callId}, which waits for nothing`);
  if (e.source === 'signal' && call.wait?.kind !== 'signal') fail(e, `signal result for ${call.callId}, which waits for a ${call.wait?.kind}`);
  if (e.source === 'timer' && call.wait?.kind !== 'timer') fail(e, `timer result for ${call.callId}, which waits for a ${call.wait?.kind}`);
}
