import { decideStarted, type Action } from './decide.js';
import type { AttentionReason } from './events.js';
import { opCallId } from './workflow-events.js';
import type { OpState } from './workflow-state.js';

/**
 * What a workflow does with an operation its code asked for that has an event in the log: the
 * same rules as decide() applies to a tool call, per operation. Pure: same operation, time and
 * context, same answer, live and on resume.
 *
 * Priority, first match wins:
 * 1. it has a result → `deliver` it to the code;
 * 2. a person must answer its attention → `blocked` (abandoned once a cancel is recorded);
 * 3. a wait (sleep, signal, child run, approval): cancelling → `abandon`; its time is up →
 *    `complete` (the timer fires, the signal / child / approval times out); else `wait`;
 * 4. a failed attempt waiting for its retry: cancelling → `abandon`; before retryAt → `wait`; else `run` the next attempt;
 * 5. a started step with no result (its worker died inside it, or it timed out): a person's rerun → `run`;
 *    cancelling aborts rerun and idempotency_key steps (`abandon`); before notAfter + grace → `wait`;
 *    cancelling → `abandon` (unresolved); then its policy, as a tool's (decideStarted): `run` again,
 *    `verify`, or `attention`.
 */
export type OpAction =
  | { kind: 'deliver' }
  | { kind: 'run'; attempt: number }
  | { kind: 'verify' }
  | { kind: 'attention'; reason: AttentionReason; detail: string }
  | { kind: 'blocked' }
  | { kind: 'wait'; until?: number }
  | { kind: 'complete' }
  | { kind: 'abandon'; unresolved: boolean };

export interface OpDecideContext {
  now: number;
  graceMs: number;
  cancelling: boolean;
  /** An attention on this operation is open. */
  attentionOpen: boolean;
  maxToolAttempts: number;
  maxCrashedToolAttempts?: number;
}

export function decideOp(op: OpState, ctx: OpDecideContext): OpAction {
  if (op.status === 'done') return { kind: 'deliver' };
  if (ctx.attentionOpen) return ctx.cancelling ? { kind: 'abandon', unresolved: true } : { kind: 'blocked' };
  if (op.wait) {
    if (ctx.cancelling) return { kind: 'abandon', unresolved: false };
    const until = op.wait.until;
    if (until !== undefined && ctx.now >= until) return { kind: 'complete' };
    return until === undefined ? { kind: 'wait' } : { kind: 'wait', until };
  }
  if (op.status === 'retrying') {
    if (ctx.cancelling) return { kind: 'abandon', unresolved: false };
    if (op.retryAt !== undefined && ctx.now < op.retryAt) return { kind: 'wait', until: op.retryAt };
    return { kind: 'run', attempt: op.attempt + 1 };
  }
  const policy = op.policy ?? 'escalate';
  if (op.rerunApproved && !ctx.cancelling) return { kind: 'run', attempt: op.attempt + 1 };
  if (ctx.cancelling && (policy === 'rerun' || policy === 'idempotency_key')) return { kind: 'abandon', unresolved: policy === 'idempotency_key' };
  const readyAt = (op.notAfter ?? 0) + ctx.graceMs;
  if (ctx.now < readyAt) return { kind: 'wait', until: readyAt };
  if (ctx.cancelling) return { kind: 'abandon', unresolved: true };
  const out = { starts: [] as { callId: string; attempt: number }[], attentions: [] as Action[], verifies: [] as string[], pinnedOk: true };
  decideStarted({ callId: opCallId(op.op), name: `step "${op.name}"`, attempt: op.attempt, ...started(op) }, policy, ctx, out);
  const start = out.starts[0];
  if (start) return { kind: 'run', attempt: start.attempt };
  if (out.verifies.length > 0) return { kind: 'verify' };
  const attention = out.attentions[0];
  if (attention?.kind === 'attention') return { kind: 'attention', reason: attention.reason, detail: attention.detail };
  return { kind: 'blocked' };
}

function started(op: OpState): { rerunFrom?: number; verified?: OpState['verified']; landedLooks?: number } {
  return {
    ...(op.rerunFrom !== undefined ? { rerunFrom: op.rerunFrom } : {}),
    ...(op.verified !== undefined ? { verified: op.verified } : {}),
    ...(op.landedLooks !== undefined ? { landedLooks: op.landedLooks } : {}),
  };
}

/** The interval before a step's next attempt after `attempt` failed (retry options, defaults applied). */
export function retryDelayMs(attempt: number, retry: { initialIntervalSeconds: number; backoffCoefficient: number; maxIntervalSeconds: number }): number {
  const seconds = retry.initialIntervalSeconds * retry.backoffCoefficient ** Math.max(0, attempt - 1);
  return Math.round(Math.min(seconds, retry.maxIntervalSeconds) * 1000);
}
