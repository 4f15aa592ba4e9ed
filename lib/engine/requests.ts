import { LogbookError, RunNotFoundError } from '../core/errors.js';
import type { InboxItem } from '../core/inbox.js';
import type { JsonValue } from '../core/json.js';
import { TERMINAL_STATUSES, type RunHead } from '../ports/run-heads.js';
import { type RunRef } from '../core/run-ref.js';
import type { EngineDeps } from './engine.js';
import { hintedTick } from '../ports/step-queue.js';

/** A request that does not apply to the run as it is (HTTP 409). */
export class RequestConflictError extends LogbookError {
  readonly code = 'request_conflict';
  constructor(message: string) {
    super(message);
  }
}

async function requireHead(deps: EngineDeps, run: RunRef): Promise<RunHead> {
  const head = await deps.heads.getHead(run);
  if (!head) throw new RunNotFoundError(run);
  return head;
}

/** Write an inbox item and wake the run. Only the lease holder turns it into an event. */
async function submit(deps: EngineDeps, run: RunRef, head: RunHead, item: InboxItem): Promise<{ inboxId: string }> {
  await deps.inbox.put(run, item);
  await deps.queue.enqueue(hintedTick(run, head), { dedupeId: `${run.runId}:inbox:${item.id}` });
  return { inboxId: item.id };
}

export async function requestCancel(deps: EngineDeps, run: RunRef, by: string, reason?: string): Promise<{ inboxId: string }> {
  const head = await requireHead(deps, run);
  if (TERMINAL_STATUSES.has(head.status)) throw new RequestConflictError(`run is already ${head.status}`);
  return submit(deps, run, head, { id: deps.ids.inboxId(), kind: 'cancel', by, ...(reason ? { reason } : {}) });
}

export interface Resolution {
  callId: string;
  outcome: 'succeeded' | 'failed' | 'rerun';
  result?: JsonValue;
}

/** Answer an open attention on a call. 409 when none is open for it, or rerun before its deadline. */
export async function requestResolution(deps: EngineDeps, run: RunRef, resolution: Resolution, by: string): Promise<{ inboxId: string }> {
  const head = await requireHead(deps, run);
  const open = head.attention.find((a) => a.callId === resolution.callId);
  if (!open) throw new RequestConflictError(`no open attention for call ${resolution.callId}`);
  if (resolution.outcome === 'rerun' && open.rerunNotBefore !== undefined && deps.clock.now() < open.rerunNotBefore) {
    throw new RequestConflictError(`rerun refused until ${new Date(open.rerunNotBefore).toISOString()}: the call may still be running`);
  }
  return submit(deps, run, head, {
    id: deps.ids.inboxId(),
    kind: 'resolve',
    by,
    callId: resolution.callId,
    outcome: resolution.outcome,
    ...(resolution.result !== undefined ? { result: resolution.result } : {}),
  });
}

/** Retry or fail a run-level park (missing version, stalled model, poisoned, corrupt log). */
export async function requestRunAction(deps: EngineDeps, run: RunRef, action: 'retry' | 'fail', by: string): Promise<{ inboxId: string }> {
  const head = await requireHead(deps, run);
  const runLevel = head.park !== undefined || head.attention.some((a) => a.callId === undefined);
  if (!runLevel) throw new RequestConflictError('run has no run-level park to retry or fail');
  return submit(deps, run, head, { id: deps.ids.inboxId(), kind: 'run_action', by, action });
}
