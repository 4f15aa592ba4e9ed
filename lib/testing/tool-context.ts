import { StaleLeaseError } from '../core/errors.js';
import { ToolAbort } from '../engine/tool-runner.js';
import type { ToolContext } from '../authoring/types.js';
import { idempotencyKey } from '../core/run-ref.js';

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
  /** The clock leaseFresh() reads (default Date.now): a test moves it past notAfter. */
  now?: () => number;
  /** Epoch ms when the call is over (ctx.notAfter). Default: an hour after now(). */
  notAfter?: number;
  /** What ctx.leaseFresh() answers besides expireLease() and the deadline (default: fresh). */
  leaseFresh?: () => boolean;
}

/** A ToolContext for calling one tool's execute() or verify() in a unit test, with an abort the test controls. */
export interface ToolTestContext extends ToolContext {
  /**
   * Abort the call as the engine would: `signal.reason` becomes the engine's own reason for a
   * timeout, a cancel or a lost lease (a ToolAbort with that `why`), or the error given. A lost
   * lease also makes leaseFresh() false, as it does in the engine.
   */
  abort(why?: ToolAbortReason | Error): void;
  /**
   * From now on leaseFresh() is false and assertLeaseFresh() throws StaleLeaseError, as a worker
   * that was frozen past its lease finds when it wakes (its signal is not aborted: nobody told it).
   */
  expireLease(reason?: string): void;
  /**
   * The same call's next attempt, as a successor worker runs it after a crash: attempt + 1, a
   * higher fencing token, the SAME idempotency key, a fresh signal, lease and deadline. Call
   * execute() with both contexts to show the service deduplicates by the key.
   */
  retry(): ToolTestContext;
}

/**
 * The context the engine hands a tool, for tests of that tool alone (Temporal's
 * MockActivityEnvironment plays this part). The idempotency key is `<tenant>:<runId>:<callId>`
 * and the fencing token the lease epoch, exactly as the engine's tool runner builds them; the
 * lease checks answer as the engine's do (lost, expired, or past notAfter), under test control.
 */
export function toolTestContext(options: ToolTestContextOptions = {}): ToolTestContext {
  const tenant = options.tenant ?? 'test-tenant';
  const runId = options.runId ?? 'test-run';
  const callId = options.callId ?? '3-0';
  const attempt = options.attempt ?? 1;
  const fencingToken = options.fencingToken ?? 1;
  const now = options.now ?? Date.now;
  const notAfter = options.notAfter ?? now() + 3_600_000;
  const timeoutMs = Math.max(1, notAfter - now());
  const controller = new AbortController();
  let expired: string | undefined;
  const staleness = (): string | undefined => {
    if (expired !== undefined) return expired;
    if (options.leaseFresh && !options.leaseFresh()) return 'the test says the lease is stale';
    const t = now();
    return t >= notAfter ? `call ${callId} is ${t - notAfter} ms past its deadline` : undefined;
  };
  return {
    tenant,
    runId,
    callId,
    attempt,
    idempotencyKey: idempotencyKey({ tenant, runId }, callId),
    fencingToken,
    notAfter,
    signal: controller.signal,
    leaseFresh: () => staleness() === undefined,
    assertLeaseFresh: () => {
      const stale = staleness();
      if (stale) throw new StaleLeaseError({ tenant, runId }, stale);
    },
    abort: (why = 'timeout') => {
      if (why === 'lease_lost') expired ??= 'lease lost';
      controller.abort(why instanceof Error ? why : new ToolAbort(why));
    },
    expireLease: (reason = 'the lease expired (the test says so)') => {
      expired ??= reason;
    },
    retry: () =>
      toolTestContext({
        tenant,
        runId,
        callId,
        attempt: attempt + 1,
        fencingToken: fencingToken + 1,
        now,
        notAfter: now() + timeoutMs,
        ...(options.leaseFresh ? { leaseFresh: options.leaseFresh } : {}),
      }),
  };
}
