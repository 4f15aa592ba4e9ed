import { ToolAbort } from '../engine/tool-runner.js';
import type { ToolContext } from '../engine/tools.js';

/** Why the engine aborts a running call: its timeout, a cancel of the run, or a lost lease. */
export type ToolAbortReason = ToolAbort['why'];

export interface ToolTestContextOptions {
  tenant?: string;
  runId?: string;
  /** `<seq of the model_response>-<index>`; default `3-0` (the first call of a run's first turn). */
  callId?: string;
  /** Default 1. */
  attempt?: number;
  /** The lease epoch of the worker running the call; default 1. */
  fencingToken?: number;
}

/** A ToolContext for calling one tool's execute() or verify() in a unit test, with an abort the test controls. */
export interface ToolTestContext extends ToolContext {
  /**
   * Abort the call as the engine would: `signal.reason` becomes the engine's own reason for a
   * timeout, a cancel or a lost lease (a ToolAbort with that `why`), or the error given.
   */
  abort(why?: ToolAbortReason | Error): void;
  /**
   * The same call's next attempt, as a successor worker runs it after a crash: attempt + 1, a
   * higher fencing token, the SAME idempotency key, a fresh signal. Call execute() with both
   * contexts to show the service deduplicates by the key.
   */
  retry(): ToolTestContext;
}

/**
 * The context the engine hands a tool, for tests of that tool alone (Temporal's
 * MockActivityEnvironment plays this part). The idempotency key is `<tenant>:<runId>:<callId>`
 * and the fencing token the lease epoch, exactly as the engine's tool runner builds them.
 */
export function toolTestContext(options: ToolTestContextOptions = {}): ToolTestContext {
  const tenant = options.tenant ?? 'test-tenant';
  const runId = options.runId ?? 'test-run';
  const callId = options.callId ?? '3-0';
  const attempt = options.attempt ?? 1;
  const fencingToken = options.fencingToken ?? 1;
  const controller = new AbortController();
  return {
    tenant,
    runId,
    callId,
    attempt,
    idempotencyKey: `${tenant}:${runId}:${callId}`,
    fencingToken,
    signal: controller.signal,
    abort: (why = 'timeout') => controller.abort(why instanceof Error ? why : new ToolAbort(why)),
    retry: () => toolTestContext({ tenant, runId, callId, attempt: attempt + 1, fencingToken: fencingToken + 1 }),
  };
}
