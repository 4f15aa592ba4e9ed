import { LogbookError } from '../core/errors.js';

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

/** The call awaits no approval, was decided already, or the decision names other arguments. */
export class ApprovalConflictError extends LogbookError {
  readonly code = 'approval_conflict';
  constructor(message: string) {
    super(message);
  }
}

/** No call waits for this signal, the wait timed out, or the call was signalled already. */
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
