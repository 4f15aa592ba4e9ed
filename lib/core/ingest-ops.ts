import type { InboxItem } from './inbox.js';
import type { IngestContext, IngestResult } from './ingest-types.js';
import type { RunState } from './state.js';
import { opOfCallId } from './workflow-events.js';
import type { OpState } from './workflow-state.js';

/**
 * Inbox items addressed to a workflow's operation (call id `op-<n>`): a person's decision on an
 * approval, a signal, a child run's end. Each completes exactly the operation that waits for it,
 * with a payload or edit that fits the schema the operation pinned; anything else is ignored with
 * the reason (the API refused it before it got here, unless the run moved on meanwhile).
 */
export function ingestOpItem(state: RunState, item: Extract<InboxItem, { kind: 'approval' | 'complete_call' }>, op: OpState, ctx: IngestContext): IngestResult {
  const base = { type: 'op_result' as const, op: op.op, kind: op.kind, name: op.name, inboxId: item.id, sentBy: item.by };
  const wait = op.wait;
  if (op.status !== 'started' || !wait) return { ignored: `operation ${item.callId} waits for nothing (it already has its result)` };
  if (item.kind === 'approval') {
    if (wait.kind !== 'approval') return { ignored: `operation ${item.callId} awaits no approval` };
    if (item.argsHash !== undefined && item.argsHash !== wait.argsHash) {
      return { ignored: `decision about arguments ${item.argsHash.slice(0, 12)}, but ${item.callId} asks about ${wait.argsHash.slice(0, 12)}` };
    }
    const comment: Record<string, string> = item.comment ? { comment: item.comment } : {};
    if (item.decision === 'edit') {
      if (item.args === undefined) return { ignored: `edit of ${item.callId} without arguments` };
      if (!wait.argsSchema) return { ignored: `approval ${item.callId} takes no edits (its workflow gave no schema)` };
      const problem = ctx.checkJsonSchema(wait.argsSchema, item.args);
      if (problem) return { ignored: `edited arguments do not fit ${op.name}: ${problem}` };
      return {
        event: { ...base, ok: true, source: 'human', output: { kind: 'inline', value: { decision: 'edit', args: item.args, by: item.by, ...comment } } },
      };
    }
    const ok = item.decision === 'approve';
    return {
      event: {
        ...base,
        ok,
        source: 'human',
        ...(ok ? {} : { errorCode: 'rejected' }),
        output: { kind: 'inline', value: { decision: item.decision, by: item.by, ...comment } },
      },
    };
  }
  if (item.via === 'child') {
    if (wait.kind !== 'child' || wait.runId !== item.childRunId) return { ignored: `operation ${item.callId} does not wait for child run ${item.childRunId}` };
    return {
      event: {
        ...base,
        ok: item.ok,
        source: 'child',
        output: item.body ?? { kind: 'inline', value: item.output },
        ...(item.usage ? { childUsage: item.usage } : {}),
        ...(item.ok ? {} : { errorCode: childErrorCode(item.output) }),
      },
    };
  }
  if (wait.kind !== 'signal' || wait.signal !== item.signal) return { ignored: `operation ${item.callId} does not wait for signal ${item.signal}` };
  const problem = item.ok ? ctx.checkJsonSchema(wait.payloadSchema, item.output) : undefined;
  if (problem) return { ignored: `payload does not fit signal ${item.signal}: ${problem}` };
  return { event: { ...base, ok: item.ok, source: 'signal', output: { kind: 'inline', value: item.output } } };
}

function childErrorCode(output: unknown): string {
  const code = output !== null && typeof output === 'object' ? (output as { error?: unknown }).error : undefined;
  return typeof code === 'string' ? code : 'child_failed';
}

/** The operation a call id names in this run, if it is one. */
export function opForCallId(state: RunState, callId: string): OpState | undefined {
  const n = opOfCallId(callId);
  return n === undefined ? undefined : (state.workflow?.ops[n - 1] ?? undefined);
}
