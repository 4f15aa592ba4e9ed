import { LogbookError } from '../core/errors.js';
import { TERMINAL_STATUSES, type RunStatus } from '../ports/run-heads.js';

/**
 * Errors of the control requests (approve, signal, message, fork). Each names the state that
 * refused the request; the API answers 409 for the *_conflict codes and 404 for call_not_found.
 */

/** No model_response of the run holds this call id. */
export class CallNotFoundError extends LogbookError {
  readonly code = 'call_not_found';
  constructor(
    readonly runId: string,
    readonly callId: string,
  ) {
    super(`run ${runId} has no call ${callId}`);
  }
}

/**
 * No call or operation of the run waits for this signal (now): the signal is not kept for later.
 * Its own code, apart from signal_conflict, so a sender can tell "nobody listens" from "too late".
 */
export class SignalNotAwaitedError extends LogbookError {
  readonly code = 'signal_not_awaited';
  constructor(message: string) {
    super(message);
  }
}

/** The call awaits no approval, was decided already, or the decision names other arguments. */
export class ApprovalConflictError extends LogbookError {
  readonly code = 'approval_conflict';
  constructor(message: string) {
    super(message);
  }
}

/** The wait for this signal timed out, or the call was signalled already. */
export class SignalConflictError extends LogbookError {
  readonly code = 'signal_conflict';
  constructor(message: string) {
    super(message);
  }
}

/** The run cannot take a follow-up message: it failed, was cancelled, or a budget is used up. */
export class MessageConflictError extends LogbookError {
  readonly code = 'message_conflict';
  constructor(message: string) {
    super(message);
  }
}

/** The fork point is not a turn boundary, or the new version does not fit the copied calls. */
export class ForkConflictError extends LogbookError {
  readonly code = 'fork_conflict';
  constructor(message: string) {
    super(message);
  }
}

/**
 * The run has ended (completed, failed or cancelled): nothing more runs in it, so no approval,
 * signal, resolution, retry or cancel can apply (the worker would drop it). A follow-up message
 * to a completed run is the one request that still applies: it reopens the run.
 */
export class RunEndedError extends LogbookError {
  readonly code = 'run_ended';
  constructor(
    readonly runId: string,
    readonly status: string,
    what: string,
  ) {
    super(`run ${runId} is ${status}: ${what}`);
  }
}

/** What an ended run says to each request it refuses (the message names what to do instead). */
const ENDED_HINTS = {
  approval: 'it takes no approvals; nothing more runs in an ended run (fork it to continue)',
  signal: 'it takes no signals; nothing waits in an ended run (fork it to continue)',
  resolution: 'it takes no resolutions; a call a cancel left unresolved is listed under `unresolved`, to check by hand',
  run_action: 'there is nothing to retry or fail (fork it to continue)',
  cancel: 'it has already ended',
} as const;

/** Refuse a control request to an ended run (409 run_ended), naming what the run is. */
export function refuseIfEnded(run: { runId: string }, status: RunStatus, request: keyof typeof ENDED_HINTS): void {
  if (TERMINAL_STATUSES.has(status)) throw new RunEndedError(run.runId, status, ENDED_HINTS[request]);
}

/** A request that only a workflow run takes (its operations, a fork from an operation) named an agent run. */
export class NotWorkflowRunError extends LogbookError {
  readonly code = 'not_workflow_run';
  constructor(
    readonly runId: string,
    what: string,
  ) {
    super(`run ${runId} is an agent run: ${what}`);
  }
}
