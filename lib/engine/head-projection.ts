import { openControls } from '../core/control.js';
import type { RunState } from '../core/state.js';
import type { HeadProjection, OpenAttention, RunOutcome, RunStatus } from '../ports/run-heads.js';
import type { EngineConfig } from './engine.js';

/** The head as the folded log says it should be. */
export function projectHead(
  state: RunState,
  now: number,
  config: EngineConfig,
  waitUntil?: number,
  /** The step ended waiting (for a deadline, an approval, a signal or a timer). */
  waiting: boolean = waitUntil !== undefined,
): HeadProjection {
  const grace = state.started.graceMs;
  // An ended run lists nothing to answer: no resolution, approval or signal could apply to it (a
  // cancelled run's unresolved calls stay in its run_cancelled, shown as `unresolved`).
  const open = state.outcome ? [] : state.attention;
  const attention: OpenAttention[] = open.map((a) => {
    const call = a.callId ? state.calls[a.callId] : undefined;
    return {
      seq: a.seq,
      reason: a.reason,
      detail: a.detail,
      ...(a.callId ? { callId: a.callId } : {}),
      ...(call?.notAfter !== undefined ? { rerunNotBefore: call.notAfter + grace } : {}),
    };
  });
  const waits = openControls(state);
  const approvals = waits.filter((w) => w.kind === 'approval');
  let status: RunStatus = state.status;
  if (status === 'running' && waiting) status = approvals.length > 0 ? 'awaiting_approval' : 'waiting';
  let outcome: RunOutcome | undefined;
  const o = state.outcome;
  if (o?.type === 'completed') {
    const answer = o.answer.kind === 'inline' ? String(typeof o.answer.value === 'string' ? o.answer.value : JSON.stringify(o.answer.value)) : o.answer.summary;
    outcome = { status: 'completed', seq: o.seq, summary: answer.slice(0, 200) };
  } else if (o?.type === 'failed') {
    outcome = { status: 'failed', seq: o.seq, summary: o.message.slice(0, 200), code: o.code };
  } else if (o?.type === 'cancelled') {
    outcome = { status: 'cancelled', seq: o.seq, summary: `cancelled; unresolved calls: ${o.unresolved.join(', ') || 'none'}` };
  } else if (status === 'awaiting_approval') {
    // Notified once per request seq: a second call asking later is a new notice.
    const last = approvals.reduce((a, b) => (b.seq > a.seq ? b : a));
    const summary = approvals.map((a) => `${a.tool} (${a.callId})`).join(', ');
    outcome = { status: 'awaiting_approval', seq: last.seq, summary: `awaits approval: ${summary}`.slice(0, 200), code: 'approval_required' };
  } else if (status === 'parked') {
    const first = state.attention[0];
    outcome = {
      status: 'parked',
      seq: first?.seq ?? state.lastSeq,
      summary: (first?.detail ?? 'needs attention').slice(0, 200),
      code: first?.reason ?? 'attention',
    };
  }
  const completedKeep = o?.type === 'completed' ? config.retentionCompletedMs : config.retentionFailedMs;
  const expiresAt = o || status === 'parked' ? now + completedKeep : Math.max(state.started.expiresAt, now + config.retentionFailedMs);
  return {
    status,
    lastSeq: state.lastSeq,
    usage: { ...state.usage },
    attention,
    waits,
    ...(outcome ? { outcome } : {}),
    ...(waitUntil !== undefined ? { wakeAt: waitUntil } : {}),
    expiresAt,
    updatedAt: now,
  };
}
