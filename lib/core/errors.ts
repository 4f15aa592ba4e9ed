/**
 * One error class per failure mode, each with a stable string `code`, a `retryable` flag and an
 * optional `cause`. Errors that enter the log (tool errors, run failures) round-trip through JSON
 * as `{code, message}`, so a resumed run sees exactly what the live one saw. Errors about a run
 * carry its RunRef and name it by runName (`<tenant>/<runId>`): never a storage key.
 */
import { plural } from './plural.js';
import { runName, type RunRef } from './run-ref.js';

export abstract class LogbookError extends Error {
  abstract readonly code: string;
  readonly retryable: boolean = false;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
  toJSON(): { code: string; message: string; retryable: boolean } {
    return { code: this.code, message: this.message, retryable: this.retryable };
  }
}

/** A conditional append lost: another writer holds this seq. The loser must stop at once. */
export class AppendConflictError extends LogbookError {
  readonly code = 'append_conflict';
  constructor(
    readonly run: RunRef,
    readonly seq: number,
    options?: { cause?: unknown },
  ) {
    super(`seq ${seq} of ${runName(run)} was already written by another writer`, options);
  }
}

/**
 * The same run id was created before with a different request. The message names the run as the
 * caller named it (its id within the caller's tenant), never the storage key: it reaches clients.
 */
export class RunConflictError extends LogbookError {
  readonly code = 'run_conflict';
  constructor(readonly run: RunRef) {
    super(`run ${run.runId} already exists with a different request`);
  }
}

/** The message names the run as its caller does (its id within the caller's tenant): it reaches clients. */
export class RunNotFoundError extends LogbookError {
  readonly code = 'run_not_found';
  constructor(readonly run: RunRef) {
    super(`run ${run.runId} not found`);
  }
}

/** Another live owner holds the lease. */
export class LeaseHeldError extends LogbookError {
  readonly code = 'lease_held';
  override readonly retryable = true;
  constructor(
    readonly run: RunRef,
    readonly until: number,
  ) {
    super(`lease on ${runName(run)} is held until ${new Date(until).toISOString()}`);
  }
}

/** Our lease was taken over (epoch moved) or expired and could not be renewed. */
export class LeaseLostError extends LogbookError {
  readonly code = 'lease_lost';
  constructor(
    readonly run: RunRef,
    readonly epoch: number,
  ) {
    super(`lease epoch ${epoch} on ${runName(run)} is no longer ours`);
  }
}

/**
 * By the wall clock this worker can no longer be sure it still holds the run: its lease was lost,
 * its last successful renewal is older than the lease minus the safety margin (a frozen or starved
 * process), or the call is past its deadline. Thrown by `ctx.assertLeaseFresh()` right before an
 * irreversible act: nothing was done, and the call's policy decides (another worker may own it).
 */
export class StaleLeaseError extends LogbookError {
  readonly code = 'lease_stale';
  constructor(
    readonly run: RunRef,
    readonly reason: string,
  ) {
    super(`${runName(run)}: ${reason}`);
  }
}

/** The log cannot be folded: invalid event, gap in seq, or impossible order. */
export class CorruptLogError extends LogbookError {
  readonly code = 'corrupt_log';
  constructor(
    message: string,
    readonly seq?: number,
    options?: { cause?: unknown },
  ) {
    super(seq === undefined ? message : `seq ${seq}: ${message}`, options);
  }
}

/** A streamed chunk's slot (run, callSeq, index) was already written by another worker: the loser stops streaming. */
export class StreamChunkConflictError extends LogbookError {
  readonly code = 'stream_chunk_conflict';
  constructor(
    readonly run: RunRef,
    readonly callSeq: number,
    readonly index: number,
  ) {
    super(`chunk ${index} of the model call at seq ${callSeq} of ${runName(run)} was already written by another worker`);
  }
}

export class BlobNotFoundError extends LogbookError {
  readonly code = 'blob_not_found';
  constructor(readonly key: string) {
    super(`blob ${key} not found`);
  }
}

export class BlobIntegrityError extends LogbookError {
  readonly code = 'blob_integrity';
  constructor(
    readonly key: string,
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`blob ${key} has sha256 ${actual}, expected ${expected}`);
  }
}

/** The store throttled us and retries ran out. */
export class ThrottledError extends LogbookError {
  readonly code = 'throttled';
  override readonly retryable = true;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * A start refused because the tenant already has its maximum of unfinished runs (admission.ts).
 * Nothing was written: the same request may be sent again after `retryAfterSeconds`.
 */
export class TooManyRunsError extends LogbookError {
  readonly code = 'too_many_runs';
  override readonly retryable = true;
  constructor(
    readonly limit: number,
    readonly retryAfterSeconds: number,
  ) {
    super(`this tenant already has ${plural(limit, 'unfinished run')} (its limit); start again after ${retryAfterSeconds} s`);
  }
}

/**
 * A read of a run's stream or log that would wait (a long poll, an SSE connection) refused because
 * the tenant already holds its maximum of open ones on this server: nothing waits for it, and the
 * same request may be sent again after `retryAfterSeconds`.
 */
export class TooManyStreamsError extends LogbookError {
  readonly code = 'too_many_streams';
  override readonly retryable = true;
  constructor(
    readonly limit: number,
    readonly retryAfterSeconds: number,
  ) {
    super(`this tenant already has ${limit} open streams and long polls (its limit); retry after ${retryAfterSeconds} s`);
  }
}

/** A request body that did not arrive within the server's deadline for it (a trickling client): 408. */
export class RequestTimeoutError extends LogbookError {
  readonly code = 'request_timeout';
}

/**
 * The client closed its connection before it had sent the whole request body (an abandoned
 * upload): nobody is left to answer, and nothing on the server failed.
 */
export class ClientClosedError extends LogbookError {
  readonly code = 'client_closed';
}

/** A transient store or network failure worth retrying. */
export class TransientStoreError extends LogbookError {
  readonly code = 'store_unavailable';
  override readonly retryable = true;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export class ItemTooLargeError extends LogbookError {
  readonly code = 'item_too_large';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** An upload whose media type is not on the attachment allow-list, or whose bytes are not what its label says. */
export class UnsupportedMediaTypeError extends LogbookError {
  readonly code = 'unsupported_media_type';
}

/** An upload over MAX_ATTACHMENT_BYTES. */
export class AttachmentTooLargeError extends LogbookError {
  readonly code = 'attachment_too_large';
}

/** The model provider failed in a way a retry will not fix (bad request, auth, context length). */
export class ModelError extends LogbookError {
  readonly code: string;
  override readonly retryable: boolean;
  constructor(code: string, message: string, retryable: boolean, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.retryable = retryable;
  }
}

/** Invalid input at an edge (API body, queue message, configuration). */
export class ValidationError extends LogbookError {
  readonly code = 'validation_error';
  constructor(
    message: string,
    readonly issues: readonly { path: string; message: string }[] = [],
  ) {
    super(message);
  }
}

export class ConfigError extends LogbookError {
  readonly code = 'config_error';
  constructor(message: string) {
    super(message);
  }
}

/**
 * Thrown by a tool when it cannot tell whether its side effect happened (a network timeout after
 * the request left). The call stays "started, no result" and its declared policy decides.
 */
export class ToolOutcomeUnknownError extends LogbookError {
  readonly code = 'tool_outcome_unknown';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * The next call needs more time than a whole invocation has (its timeout plus the margin exceeds
 * the time from the claim to the invocation's end), so no later invocation can run it either:
 * the run parks for a person (raise the worker's timeout, or lower the tool's) instead of
 * handing the step on forever.
 */
export class CallDoesNotFitError extends LogbookError {
  readonly code = 'call_does_not_fit';
  constructor(message: string) {
    super(message);
  }
}

/** The worker must stop without acting further: lease too old, or not enough time left. */
export class StopWorkError extends LogbookError {
  readonly code = 'stop_work';
  constructor(readonly reason: string) {
    super(reason);
  }
}

export function errorCode(error: unknown): string {
  if (error instanceof LogbookError) return error.code;
  if (error instanceof Error && error.name) return error.name;
  return 'unknown_error';
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
