import { errorCode, errorMessage, StaleLeaseError, StopWorkError, ToolOutcomeUnknownError } from '../core/errors.js';
import type { PinnedTool } from '../core/events.js';
import type { JsonValue } from '../core/json.js';
import type { CallState } from '../core/state.js';
import { rethrowHalt } from './checkpoints.js';
import type { RunSession } from './run-session.js';
import type { ToolContext, ToolDefinition, VerifyOutcome } from '../authoring/types.js';
import { idempotencyKey } from '../core/run-ref.js';
import { openBoundedCall, type BoundCause, type BoundedCallOptions } from './bounded-call.js';

/** Why a call's signal was aborted: each leads to a different record (or none). */
export class ToolAbort extends Error {
  constructor(readonly why: BoundCause) {
    super(`tool aborted: ${why}`);
  }
}

export interface PreparedCall {
  call: CallState;
  attempt: number;
  pinned: PinnedTool;
  impl: ToolDefinition;
  args: unknown;
}

/** How long a tool that ignores its abort signal may keep running before the process must exit. */
const ABORT_GRACE_MS = 2_000;

export function toolContext(session: RunSession, call: Pick<CallState, 'callId'>, attempt: number, signal: AbortSignal, notAfter: number): ToolContext {
  const { tenant, runId } = session.run;
  const staleness = (): string | undefined => {
    if (session.fenced) return 'an append of this worker was rejected';
    const stale = session.lease.staleness();
    if (stale) return stale;
    const now = session.deps.clock.now();
    return now >= notAfter ? `call ${call.callId} is ${now - notAfter} ms past its deadline` : undefined;
  };
  return {
    tenant,
    runId,
    callId: call.callId,
    attempt,
    idempotencyKey: idempotencyKey(session.run, call.callId),
    fencingToken: session.writer.epoch,
    notAfter,
    signal,
    leaseFresh: () => staleness() === undefined,
    assertLeaseFresh: () => {
      const stale = staleness();
      if (stale) throw new StaleLeaseError(session.run, stale);
    },
  };
}

/**
 * Run one started call and record its result. A call whose outcome is unknown (timeout, lost
 * lease, the tool says so, a cancel abort of a keyed write) gets NO result: it stays "started, no
 * result" and its declared policy decides after notAfter + grace.
 */
export async function executeCall(session: RunSession, p: PreparedCall, cancelSignal: AbortSignal): Promise<void> {
  const { deps } = session;
  const cancellable = p.pinned.policy === 'rerun' || p.pinned.policy === 'idempotency_key';
  const bound = openBoundedCall({ ...toolBounds(session, p.pinned), lease: session.lease.signal, ...(cancellable ? { cancel: cancelSignal } : {}) });
  const label = `${p.pinned.name}#${p.call.callId}`;
  const started = deps.clock.now();
  let record: { ok: boolean; output: JsonValue; source: 'tool' | 'cancel'; errorCode?: string } | undefined;
  try {
    await deps.checkpoints?.at('before-tool', label);
    // A worker frozen before this point may have lost its run: never act on a stale lease.
    if (session.lease.lost || session.fenced) throw new ToolAbort('lease_lost');
    session.lease.assertFresh(0, Number.MAX_SAFE_INTEGER);
    const notAfter = p.call.notAfter ?? deps.clock.now() + p.pinned.timeoutMs;
    const ctx = toolContext(session, p.call, p.attempt, bound.signal, notAfter);
    const output = await bound.settle(p.impl.execute(p.args, ctx));
    record = { ok: true, output, source: 'tool' };
  } catch (error) {
    rethrowHalt(error);
    const why = error instanceof ToolAbort ? error.why : (bound.why ?? staleWhy(session, error));
    if (why === 'cancel' && p.pinned.policy === 'rerun') {
      record = { ok: false, output: { error: 'cancelled', message: 'run cancelled while the call was running' }, source: 'cancel', errorCode: 'cancelled' };
    } else if (why !== undefined || error instanceof ToolOutcomeUnknownError) {
      deps.logger?.warn('tool outcome unknown', { callId: p.call.callId, tool: p.pinned.name, why: why ?? 'tool_said_unknown' });
      record = undefined;
    } else {
      const code = errorCode(error);
      record = { ok: false, output: { error: code, message: session.deps.codec.redactText(errorMessage(error)) }, source: 'tool', errorCode: code };
    }
  } finally {
    bound.close();
    deps.metrics?.duration('ToolLatency', deps.clock.now() - started);
  }
  await deps.checkpoints?.at('after-tool', label);
  if (record) {
    await session.append({
      type: 'tool_result',
      callId: p.call.callId,
      ok: record.ok,
      output: { kind: 'inline', value: record.output },
      source: record.source,
      ...(record.errorCode ? { errorCode: record.errorCode } : {}),
    });
  }
}

/**
 * A failure seen by a worker that may have lost its run is not the call's outcome: the tool said
 * its lease was stale, the engine stopped it, or the lease went stale while it ran (a downstream
 * that refused our fencing token is the usual cause). Such a call is left to its policy, decided
 * by whoever holds the run now; a success is still recorded, since it is true whoever writes it.
 */
function staleWhy(session: RunSession, error: unknown): 'lease_lost' | undefined {
  if (error instanceof StaleLeaseError || error instanceof StopWorkError) return 'lease_lost';
  return session.fenced || session.lease.staleness() !== undefined ? 'lease_lost' : undefined;
}

/** Look whether a started verify-policy call landed, and record what verify() saw. */
export async function verifyCall(session: RunSession, p: Omit<PreparedCall, 'attempt'>): Promise<void> {
  const { deps } = session;
  // verify() is bounded by the tool's timeout (a failure on a stale lease is judged below).
  const bound = openBoundedCall(toolBounds(session, p.pinned));
  let outcome: VerifyOutcome;
  const notAfter = deps.clock.now() + p.pinned.timeoutMs;
  try {
    await deps.checkpoints?.at('before-verify', `${p.pinned.name}#${p.call.callId}`);
    const verify = p.impl.verify;
    outcome = verify ? await bound.settle(verify(p.args, toolContext(session, p.call, p.call.attempt, bound.signal, notAfter))) : { status: 'unknown' };
  } catch (error) {
    rethrowHalt(error);
    // A stale worker's failed look proves nothing: stop, and let the run's holder look again.
    if (staleWhy(session, error)) throw new StopWorkError(`verify of ${p.call.callId} failed on a stale lease`);
    outcome = { status: 'unknown' };
  } finally {
    bound.close();
  }
  await deps.checkpoints?.at('after-verify', `${p.pinned.name}#${p.call.callId}`);
  await session.append({ type: 'tool_verified', callId: p.call.callId, status: outcome.status });
  if (outcome.status === 'landed') {
    await session.append({ type: 'tool_result', callId: p.call.callId, ok: true, output: { kind: 'inline', value: outcome.output }, source: 'verify' });
  }
}

/**
 * A tool's bounds: its pinned timeout; its signal aborts with a ToolAbort; a tool that ignores its
 * abort for ABORT_GRACE_MS marks the session dangling (the handler must exit the process rather
 * than return with a call still in flight).
 */
function toolBounds(session: RunSession, pinned: PinnedTool): BoundedCallOptions {
  return {
    clock: session.deps.clock,
    timeoutMs: pinned.timeoutMs,
    reason: (why) => new ToolAbort(why),
    grace: {
      ms: ABORT_GRACE_MS,
      onDangling: () => {
        session.dangling = true;
      },
    },
  };
}
