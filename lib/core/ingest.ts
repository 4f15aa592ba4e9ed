import type { InboxItem } from './inbox.js';
import { ingestControlItem, type IngestContext, type IngestResult } from './ingest-control.js';
import type { RunState } from './state.js';
import { opForCallId } from './ingest-ops.js';

export type { IngestContext, IngestResult } from './ingest-control.js';

/**
 * Turn one inbox item into the event the lease holder appends, or say why it is ignored. Each
 * item is ingested once: fold remembers the inbox ids its events carry.
 */
export function ingestItem(state: RunState, item: InboxItem, now: number, ctx: IngestContext): IngestResult {
  if (state.inboxSeen.includes(item.id)) return { ignored: 'already ingested' };
  // A completed run takes follow-up messages; nothing else reaches a finished run.
  const followUp = item.kind === 'message' && state.outcome?.type === 'completed';
  if (state.outcome && !followUp) return { ignored: `run already ${state.outcome.type}` };
  switch (item.kind) {
    case 'cancel':
      if (state.cancel) return { ignored: 'cancel already requested' };
      return {
        event: { type: 'cancel_requested', requestedBy: item.by, inboxId: item.id, ...(item.reason ? { reason: item.reason } : {}) },
      };
    case 'resolve': {
      const open = state.attention.find((a) => a.callId === item.callId);
      if (!open) return { ignored: `no open attention for call ${item.callId} (the first resolution wins)` };
      const call = state.calls[item.callId] ?? opForCallId(state, item.callId);
      if (item.outcome === 'rerun' && call?.notAfter !== undefined && now < call.notAfter + state.started.graceMs) {
        return { ignored: `rerun refused before the call's deadline ${new Date(call.notAfter + state.started.graceMs).toISOString()}` };
      }
      return {
        event: {
          type: 'attention_resolved',
          attentionSeq: open.seq,
          callId: item.callId,
          outcome: item.outcome,
          ...(item.result !== undefined ? { result: { kind: 'inline', value: item.result } } : {}),
          resolvedBy: item.by,
          inboxId: item.id,
        },
      };
    }
    case 'run_action': {
      const open = state.attention.find((a) => a.callId === undefined);
      if (!open) return { ignored: 'no run-level park to retry or fail' };
      return {
        event: { type: 'attention_resolved', attentionSeq: open.seq, outcome: item.action, resolvedBy: item.by, inboxId: item.id },
      };
    }
    case 'approval':
    case 'complete_call':
    case 'message':
      return ingestControlItem(state, item, ctx);
  }
}
