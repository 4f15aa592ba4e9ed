import type { CallState, RunState } from './state.js';
import { opCallId } from './workflow-events.js';
import type { OpState } from './workflow-state.js';

/**
 * What decide() does with a call that waits for the outside world: an approval (a decided call
 * that may not start yet) or a durable wait (a started call completed by a signal or timer).
 * Neither holds a Lambda: the run waits with its head saying why, and an inbox item or the
 * sweeper (at the earliest deadline) wakes it.
 */
export type ControlStep =
  /** The approval's time ran out: record the expiry, which rejects the call. */
  | { kind: 'expire' }
  /** The wait's time is up: record its timeout (signal) or completion (timer). */
  | { kind: 'complete' }
  /** Keep waiting, until a decision, a signal, or `until`. */
  | { kind: 'await'; until?: number }
  /** Cancelling: nothing will come of it, and nothing is left running. */
  | { kind: 'abandon' };

/** The control rule for one call of the turn, or undefined when the usual rules apply. */
export function controlStep(call: CallState, now: number, cancelling: boolean): ControlStep | undefined {
  if (call.status === 'decided' && call.approval?.status === 'pending') {
    if (cancelling) return { kind: 'abandon' };
    const until = call.approval.expiresAt;
    if (until !== undefined && now >= until) return { kind: 'expire' };
    return until === undefined ? { kind: 'await' } : { kind: 'await', until };
  }
  if (call.status === 'started' && call.wait) {
    if (cancelling) return { kind: 'abandon' };
    if (now >= call.wait.until) return { kind: 'complete' };
    return { kind: 'await', until: call.wait.until };
  }
  return undefined;
}

/** A call of the current turn that waits for a person's approval or for the outside world. */
export interface OpenControl {
  callId: string;
  /** The tool called. */
  tool: string;
  kind: 'approval' | 'signal' | 'timer' | 'child';
  /** seq of the event that opened it (approval_requested, or the call's model_response). */
  seq: number;
  signal?: string;
  /** For a child call: the child run's id (same tenant). */
  childRunId?: string;
  until?: number;
  argsHash?: string;
}

/**
 * A workflow's open waits the head lists (a map of a thousand child runs must not grow the head
 * past DynamoDB's item limit): approvals and signals first, which the API checks requests against.
 */
export const MAX_HEAD_OP_WAITS = 100;

/** Everything the run waits for now, in call order: what the head lists and the API checks. */
export function openControls(state: RunState): OpenControl[] {
  if (state.workflow) return openOpWaits(state.workflow.ops);
  const out: OpenControl[] = [];
  for (const callId of state.turnCalls) {
    const call = state.calls[callId];
    if (!call) continue;
    if (call.status === 'decided' && call.approval?.status === 'pending') {
      out.push({
        callId,
        tool: call.name,
        kind: 'approval',
        seq: call.approval.requestedSeq,
        argsHash: call.approval.argsHash,
        ...(call.approval.expiresAt !== undefined ? { until: call.approval.expiresAt } : {}),
      });
    } else if (call.status === 'started' && call.wait) {
      out.push({
        callId,
        tool: call.name,
        kind: call.wait.kind,
        seq: call.modelSeq,
        until: call.wait.until,
        ...(call.wait.kind === 'signal' ? { signal: call.wait.signal } : {}),
        ...(call.wait.kind === 'child' ? { childRunId: call.wait.runId } : {}),
      });
    }
  }
  return out;
}

const WAIT_CONTROL = { timer: 'timer', signal: 'signal', child: 'child', approval: 'approval' } as const;

function openOpWaits(ops: readonly (OpState | null)[]): OpenControl[] {
  const open: OpenControl[] = [];
  for (const op of ops) {
    const wait = op?.status === 'started' ? op.wait : undefined;
    if (!op || !wait) continue;
    open.push({
      callId: opCallId(op.op),
      tool: op.name,
      kind: WAIT_CONTROL[wait.kind],
      seq: op.seq,
      ...(wait.until !== undefined ? { until: wait.until } : {}),
      ...(wait.kind === 'signal' ? { signal: wait.signal } : {}),
      ...(wait.kind === 'child' ? { childRunId: wait.runId } : {}),
      ...(wait.kind === 'approval' ? { argsHash: wait.argsHash } : {}),
    });
  }
  const asked = open.filter((w) => w.kind === 'approval' || w.kind === 'signal');
  const rest = open.filter((w) => w.kind !== 'approval' && w.kind !== 'signal');
  return [...asked, ...rest].slice(0, MAX_HEAD_OP_WAITS);
}
