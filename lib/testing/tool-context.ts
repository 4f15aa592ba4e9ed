import { StaleLeaseError } from '../core/errors.js';
import type { ToolContext } from '../engine/tools.js';

export interface ToolTestContextOptions {
  tenant?: string;
  runId?: string;
  callId?: string;
  attempt?: number;
  /** Default `<tenant>:<runId>:<callId>`, exactly as the engine builds it. */
  idempotencyKey?: string;
  fencingToken?: number;
  /** Default: an hour from now. */
  notAfter?: number;
  /** What ctx.leaseFresh() answers (default: always fresh); ctx.assertLeaseFresh() throws when false. */
  leaseFresh?: () => boolean;
}

/** A ToolContext for calling one tool's execute() or verify() in a unit test, with an abort the test controls. */
export interface ToolTestContext extends ToolContext {
  /** Abort the call, as a timeout, a cancel or a lost lease would (the reason becomes `signal.reason`). */
  abort(reason?: unknown): void;
}

/**
 * The context the engine hands a tool, for tests of that tool alone (Temporal's
 * MockActivityEnvironment plays this part): the same idempotency key on every attempt, the
 * fencing token of the worker's lease, and an abort signal the test can trigger.
 */
export function toolTestContext(options: ToolTestContextOptions = {}): ToolTestContext {
  const tenant = options.tenant ?? 'test-tenant';
  const runId = options.runId ?? 'test-run';
  const callId = options.callId ?? '3-0';
  const controller = new AbortController();
  const leaseFresh = options.leaseFresh ?? (() => true);
  return {
    tenant,
    runId,
    callId,
    attempt: options.attempt ?? 1,
    idempotencyKey: options.idempotencyKey ?? `${tenant}:${runId}:${callId}`,
    fencingToken: options.fencingToken ?? 1,
    notAfter: options.notAfter ?? Date.now() + 3_600_000,
    signal: controller.signal,
    leaseFresh,
    assertLeaseFresh: () => {
      if (!leaseFresh()) throw new StaleLeaseError(`${tenant}/${runId}`, 'the test says the lease is stale');
    },
    abort: (reason?: unknown) => controller.abort(reason ?? new Error('aborted by the test')),
  };
}
