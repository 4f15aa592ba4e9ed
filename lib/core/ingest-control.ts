import type { InboxItem } from './inbox.js';
import type { RunState } from './state.js';
import { ingestOpItem, opForCallId } from './ingest-ops.js';
import type { IngestContext, IngestResult } from './ingest-types.js';

export type { IngestContext, IngestResult } from './ingest-types.js';

type ControlItem = Extract<InboxItem, { kind: 'approval' | 'complete_call' | 'message' }>;

/**
 * Approvals, call completions and follow-up messages. The first decision for a call wins (a later
 * one finds no pending approval); an edit replaces the arguments only if they fit the pinned
 * schema; a completion applies only to a call waiting for exactly that.
 */
export function ingestControlItem(state: RunState, item: ControlItem, ctx: IngestContext): IngestResult {
  if (state.workflow) {
    if (item.kind === 'message') return { ignored: 'a workflow run takes signals, not follow-up messages' };
    const op = opForCallId(state, item.callId);
    if (!op) return { ignored: `no operation ${item.callId} in this workflow run` };
    return ingestOpItem(state, item, op, ctx);
  }
  switch (item.kind) {
    case 'approval': {
      const call = state.calls[item.callId];
      const approval = call?.approval;
      if (!call || approval?.status !== 'pending' || call.status !== 'decided') {
        return { ignored: `call ${item.callId} awaits no approval (the first decision wins)` };
      }
      if (item.argsHash !== undefined && item.argsHash !== approval.argsHash) {
        return { ignored: `decision about arguments ${item.argsHash.slice(0, 12)}, but ${item.callId} asks about ${approval.argsHash.slice(0, 12)}` };
      }
      const base = {
        type: 'approval_decided' as const,
        callId: item.callId,
        decidedBy: item.by,
        inboxId: item.id,
        ...(item.comment ? { comment: item.comment } : {}),
      };
      if (item.decision !== 'edit') return { event: { ...base, decision: item.decision, argsHash: approval.argsHash } };
      if (item.args === undefined) return { ignored: `edit of ${item.callId} without arguments` };
      const pinned = state.started.tools.find((t) => t.name === call.name);
      if (!pinned) return { ignored: `tool ${call.name} is not pinned` };
      const problem = ctx.checkArgs(pinned, item.args);
      if (problem) return { ignored: `edited arguments do not fit ${call.name}: ${problem}` };
      return { event: { ...base, decision: 'edit', args: { kind: 'inline', value: item.args }, argsHash: ctx.argsHash(item.args) } };
    }
    case 'complete_call': {
      const call = state.calls[item.callId];
      if (item.via === 'child') {
        const wait = call?.wait;
        if (!call || call.status !== 'started' || wait?.kind !== 'child' || wait.runId !== item.childRunId) {
          return { ignored: `call ${item.callId} does not wait for child run ${item.childRunId}` };
        }
        return {
          event: {
            type: 'tool_result',
            callId: item.callId,
            ok: item.ok,
            output: item.body ?? { kind: 'inline', value: item.output },
            source: 'child',
            inboxId: item.id,
            sentBy: item.by,
            ...(item.usage ? { childUsage: item.usage } : {}),
          },
        };
      }
      if (!call || call.status !== 'started' || call.wait?.kind !== 'signal' || call.wait.signal !== item.signal) {
        return { ignored: `call ${item.callId} does not wait for signal ${item.signal}` };
      }
      const pinned = state.started.tools.find((t) => t.name === call.name);
      const problem = pinned && item.ok ? ctx.checkPayload(pinned, item.output) : undefined;
      if (problem) return { ignored: `payload does not fit signal ${item.signal}: ${problem}` };
      return {
        event: {
          type: 'tool_result',
          callId: item.callId,
          ok: item.ok,
          output: { kind: 'inline', value: item.output },
          source: 'signal',
          inboxId: item.id,
          sentBy: item.by,
        },
      };
    }
    case 'message':
      if (state.outcome && state.outcome.type !== 'completed') return { ignored: `run already ${state.outcome.type}` };
      return { event: { type: 'user_message', input: { kind: 'inline', value: item.input }, sentBy: item.by, inboxId: item.id } };
  }
}
