import type { RunState } from '../core/state.js';
import type { HeadProjection, OpenAttention, RunOutcome, RunStatus } from '../ports/run-heads.js';
import type { EngineConfig } from './engine.js';

/** The head as the folded log says it should be. */
export function projectHead(
  state: RunState,
  now: number,
  config: EngineConfig,
  waitUntil?: number,
): HeadProjection {
  const grace = state.started.graceMs;
  const attention: OpenAttention[] = state.attention.map((a) => {
    const call = a.callId ? state.calls[a.callId] : undefined;
    return {
      seq: a.seq,
      reason: a.reason,
      detail: a.detail,
      ...(a.callId ? { callId: a.callId } : {}),
      ...(call?.notAfter !== undefined ? { rerunNotBefore: call.notAfter + grace } : {}),
    };
  });
  let status: RunStatus = state.status;
  if (status === 'running' && waitUntil !== undefined) status = 'waiting';
  let outcome: RunOutcome | undefined;
  const o = state.outcome;
  if (o?.type === 'completed') {
    const answer = o.answer.kind === 'inline' ? String(typeof o.answer.value === 'string' ? o.answer.value : JSON.stringify(o.answer.value)) : o.answer.summary;
    outcome = { status: 'completed', seq: o.seq, summary: answer.slice(0, 200) };
  } else if (o?.type === 'failed') {
    outcome = { status: 'failed', seq: o.seq, summary: o.message.slice(0, 200), code: o.code };
  } else if (o?.type === 'cancelled') {
    outcome = { status: 'cancelled', seq: o.seq, summary: `cancelled; unresolved calls: ${o.unresolved.join(', ') || 'none'}` };
  } else if (status === 'parked') {
    const first = state.attention[0];
    outcome = { status: 'parked', seq: first?.seq ?? state.lastSeq, summary: (first?.detail ?? 'needs attention').slice(0, 200), code: first?.reason ?? 'attention' };
  }
  const completedKeep = o?.type === 'completed' ? config.retentionCompletedMs : config.retentionFailedMs;
  const expiresAt = o || status === 'parked' ? now + completedKeep : Math.max(state.started.expiresAt, now + config.retentionFailedMs);
  return {
    status,
    lastSeq: state.lastSeq,
    usage: { ...state.usage },
    attention,
    ...(outcome ? { outcome } : {}),
    ...(waitUntil !== undefined ? { wakeAt: waitUntil } : {}),
    expiresAt,
    updatedAt: now,
  };
}
