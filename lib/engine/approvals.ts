import type { PinnedTool } from '../core/events.js';
import type { JsonValue } from '../core/json.js';
import type { CallState } from '../core/state.js';
import { hashJson } from '../support/hash.js';
import type { RunSession } from './run-session.js';
import type { ToolDefinition } from '../authoring/types.js';

/**
 * Approval before a tool runs. For a tool pinned with `approval`, the first start of a call is
 * preceded by `approval_requested {callId, argsHash}` (unless its predicate says no), and the run
 * waits (status `awaiting_approval`) until a decision arrives through the inbox or the request
 * expires. Right before the call starts, the hash of the arguments it will run on is compared with
 * the approved one again: an approval never covers other arguments, and an edit counts only for
 * the exact arguments it wrote. A rejection is an error result (fold settles it), so a rejected call
 * can never reach tool_started (fold refuses that order too).
 */
export type ApprovalGate = 'run' | 'requested' | 'refused';

/** The approval rule for one call about to start: run it, ask for approval, or refuse it. */
export async function approvalGate(
  session: RunSession,
  call: CallState,
  pinned: PinnedTool,
  impl: ToolDefinition,
  rawArgs: JsonValue,
  args: unknown,
): Promise<ApprovalGate> {
  // The pinned rule decides, so a deploy cannot add or remove approval under a running run.
  if (!pinned.approval) return 'run';
  const argsHash = hashJson(rawArgs);
  const approval = call.approval;
  if (approval?.status === 'approved') {
    if (approval.argsHash === argsHash) return 'run';
    const message = `arguments ${argsHash.slice(0, 12)} are not the approved ${approval.argsHash.slice(0, 12)}; the call did not run`;
    await session.append({
      type: 'tool_result',
      callId: call.callId,
      ok: false,
      output: { kind: 'inline', value: { error: 'approval_mismatch', message } },
      source: 'validation',
      errorCode: 'approval_mismatch',
    });
    return 'refused';
  }
  if (approval) return 'refused'; // pending, rejected or expired: decide never starts these
  // A later attempt of a call that started without approval: its predicate said no back then.
  if (call.attempt > 0) return 'run';
  if (!(await approvalNeeded(session, call, pinned, impl, args))) return 'run';
  // Never past the run's deadline: after it the run could not use the approval anyway.
  const deadlineAt = session.state.started.budgets.deadlineAt;
  const timeout = pinned.approvalTimeoutMs;
  const expiresAt = timeout === undefined ? deadlineAt : Math.min(session.deps.clock.now() + timeout, deadlineAt);
  await session.append({ type: 'approval_requested', callId: call.callId, argsHash, expiresAt });
  return 'requested';
}

async function approvalNeeded(session: RunSession, call: CallState, pinned: PinnedTool, impl: ToolDefinition, args: unknown): Promise<boolean> {
  const rule = impl.approval;
  if (pinned.approval === 'always' || typeof rule !== 'function') return true;
  try {
    return await rule(args, { tenant: session.run.tenant, runId: session.run.runId, callId: call.callId });
  } catch (error) {
    // When the rule cannot say, a person decides.
    session.deps.logger?.warn('approval predicate failed: asking for approval', { ...session.run, callId: call.callId, error: String(error) });
    return true;
  }
}

/** Approvals nobody gave in time: each is recorded as an expiry, which rejects the call. */
export async function expireApprovals(session: RunSession, callIds: string[]): Promise<void> {
  for (const callId of callIds) {
    const approval = session.state.calls[callId]?.approval;
    if (approval?.status !== 'pending') continue;
    await session.append({ type: 'approval_decided', callId, decision: 'expire', argsHash: approval.argsHash, decidedBy: 'logbook:expiry' });
  }
}
