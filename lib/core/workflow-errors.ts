import { LogbookError } from './errors.js';

/**
 * Errors a workflow's code sees (and may catch). Each is rebuilt from what the log recorded, so a
 * replay throws exactly what the live run threw.
 */

/** A step failed for good (after its retries), or a person marked it failed: what it recorded. */
export class StepFailedError extends LogbookError {
  readonly code = 'step_failed';
  constructor(
    /** The step's name and its operation number. */
    readonly step: string,
    readonly op: number,
    /** The failure as recorded: the error's code (`error`) and message. */
    readonly failure: { code: string; message: string },
  ) {
    super(`step "${step}" (op-${op}) failed: ${failure.code}: ${failure.message}`);
  }
}

/** A child run (ctx.agent, ctx.workflow) failed, was cancelled, timed out or could not start. */
export class ChildRunFailedError extends LogbookError {
  readonly code = 'child_run_failed';
  constructor(
    readonly child: string,
    readonly op: number,
    readonly failure: { code: string; message: string; childRunId?: string },
  ) {
    super(`child run ${child} (op-${op}) ${failure.code}: ${failure.message}`);
  }
}

/** ctx.all / ctx.map: some operations failed. Thrown once every one has settled, with each outcome in order. */
export class PartialFailureError extends LogbookError {
  readonly code = 'partial_failure';
  constructor(readonly results: readonly ({ ok: true; value: unknown } | { ok: false; error: Error })[]) {
    const failed = results.filter((r) => !r.ok).length;
    super(`${failed} of ${results.length} operations failed`);
  }
}

/**
 * Throw from a step's function to fail it without retries (any other error is retried as the
 * step's retry options say).
 */
export class NonRetryableError extends LogbookError {
  readonly code: string;
  constructor(message: string, options?: { code?: string; cause?: unknown }) {
    super(message, options);
    this.code = options?.code ?? 'non_retryable';
  }
}

/** A workflow used its context wrongly (an operation inside a step, a bad argument): a bug in its code. */
export class WorkflowUsageError extends LogbookError {
  readonly code = 'workflow_usage';
}
