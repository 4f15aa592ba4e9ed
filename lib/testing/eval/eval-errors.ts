import { LogbookError } from '../../core/errors.js';

/** A run file (`logbook runs export`) that cannot be read: not JSON, not the schema, a payload that does not hash to its sha256. */
export class RunFileError extends LogbookError {
  readonly code = 'run_file_invalid';
}

/**
 * What the candidate of an eval sees for a tool call the recorded run cannot answer (no recorded
 * call of that tool with these arguments left): the call is not executed, and the run goes on
 * with this error as the call's result, as it would after any tool error.
 */
export class NotExecutedUnderEvalError extends LogbookError {
  readonly code = 'not_executed_under_eval';
  constructor(
    readonly tool: string,
    readonly argsText: string,
  ) {
    super(`not executed under eval: the recorded run has no result for this call; would call ${tool}(${argsText})`);
  }
}

/**
 * A recorded error result served back to the candidate: the tool result it writes is
 * `{error: code, message}`, what the recorded call's result was (a tool's own error, a rejected
 * approval, a validation error).
 */
export class RecordedToolError extends LogbookError {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}
