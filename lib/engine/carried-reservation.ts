import { decide, type DecideContext } from '../core/decide.js';
import { agentPins, type ModelReservation } from '../core/events.js';
import type { RunState } from '../core/state.js';
import type { RunSession } from './run-session.js';

/**
 * The carried reservation: the last tool_result of a turn may carry the next model call's
 * reservation (the fields of a model_started) instead of a model_started of its own, one append
 * fewer per turn. Write before act still holds: the reservation is in the log, on the result,
 * before the model is called, and a crash after it leaves it spent, as any model_started is.
 *
 * Where each piece lives:
 * - the event field: core/events.ts (`tool_result.reservation`, `reservationOf`);
 * - the fold: core/fold.ts opens the model call on such a result exactly as a model_started right
 *   after it would (so decide, budgets and the stall guard see no difference);
 * - the decision: `carriedReservation` below, made on the state the result leaves, as decide()
 *   would make it next;
 * - the attach: RunSession.appendNow asks `session.carryReservation` for each tool_result while
 *   the turn's tools run (run-session.ts);
 * - the call made under it: `carriedCall` below, used by the turn runner once the tools are done.
 */

/**
 * The reservation the tool_result that leaves `after` carries: the one decide would make next,
 * only when decide's next action is that model call and this worker may make it now (the same
 * lease and time checks a model_started is written under). Anything else: no carry, and the next
 * model call writes its own model_started as before.
 */
export function carriedReservation(session: RunSession, after: RunState, ctx: DecideContext): ModelReservation | undefined {
  if (session.cancel.signal.aborted) return undefined;
  try {
    session.lease.assertFresh(session.deps.config.modelTimeoutMs, session.deadlineAt);
  } catch {
    return undefined;
  }
  if (!session.deps.models.resolve(agentPins(after.started).model.id)) return undefined;
  const next = decide(after, ctx);
  if (next.kind !== 'call_model') return undefined;
  return { step: next.step, maxOutputTokens: next.maxOutputTokens, reserved: next.reserved };
}

/**
 * The model call to make now under the reservation the session's last append carried, or
 * undefined: nothing was carried, something was appended after it, or a cancel or a stale lease
 * stops it (the reservation then stays spent, as any model_started with no response does; decide
 * counts it as unanswered). Throws StaleLeaseError when the lease went stale since it was decided.
 */
export function carriedCall(session: RunSession): ModelReservation | undefined {
  const carried = session.carried;
  const last = session.state.lastSeq;
  if (carried?.seq !== last || session.state.openModel?.seq !== last) return undefined;
  // A cancel seen meanwhile is ingested first.
  if (session.cancel.signal.aborted) return undefined;
  // The lease and time checks were made when the reservation was decided; the append took time
  // since, so check again (stale: stop here).
  session.lease.assertFresh(session.deps.config.modelTimeoutMs, session.deadlineAt);
  return carried.reservation;
}
