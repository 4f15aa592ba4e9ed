import type { Clock } from '../ports/clock.js';

/**
 * One bounded call: a piece of outside work (a model call, a tool, a verify, a workflow step's
 * function) run under a timeout from the Clock port, the worker's lease and, optionally, a cancel.
 * Whichever bound fires first aborts the call's signal, and the engine stops waiting for the work.
 * It knows nothing about what it runs: the caller says what the signal aborts with and what to do
 * with work that ignores its abort.
 */

/** Which bound stopped a call. */
export type BoundCause = 'timeout' | 'lease_lost' | 'cancel';

/** What a call's signal aborts with when no `reason` is given. */
export class BoundedCallAbort extends Error {
  constructor(readonly why: BoundCause) {
    super(`call aborted: ${why}`);
  }
}

export interface BoundedCallOptions {
  clock: Clock;
  /** From the moment the call is opened. */
  timeoutMs: number;
  /** Aborts when the worker loses its run (the lease keeper's signal). */
  lease?: AbortSignal;
  /** Aborts when the call's owner cancels it (a run's cancel, say); absent: the call is not cancellable. */
  cancel?: AbortSignal;
  /** The reason the call's signal aborts with, per cause (default a BoundedCallAbort). */
  reason?: (why: BoundCause) => unknown;
  /**
   * Work that keeps running after its abort: wait up to `ms` more for it to settle, then call
   * `onDangling` (a process with a call still in flight must exit rather than return). Without
   * it, the engine stops waiting at once and leaves the work to finish unobserved.
   */
  grace?: { ms: number; onDangling: () => void };
}

export interface BoundedCall {
  /** Aborted (with the cause's reason) when the first bound fires. */
  readonly signal: AbortSignal;
  /** The bound that fired, if one did. */
  readonly why: BoundCause | undefined;
  /** The work's result, or a rejection with the signal's reason once it aborts (after the grace, if any). */
  settle<T>(work: Promise<T>): Promise<T>;
  /** Stops the timer and the listeners. Call it once the call is over, whatever its outcome. */
  close(): void;
}

/**
 * Open a bounded call: the timer starts now, and the lease and cancel signals are watched until
 * `close()`. A signal that is already aborted aborts the call at once. Use it when the caller has
 * steps of its own inside the bound (checkpoints, say); otherwise use `boundedCall`.
 */
export function openBoundedCall(options: BoundedCallOptions): BoundedCall {
  const controller = new AbortController();
  const stopTimer = new AbortController();
  let why: BoundCause | undefined;
  const abort = (cause: BoundCause) => {
    if (controller.signal.aborted) return;
    why = cause;
    controller.abort(options.reason ? options.reason(cause) : new BoundedCallAbort(cause));
  };
  const onLease = () => abort('lease_lost');
  const onCancel = () => abort('cancel');
  options.lease?.addEventListener('abort', onLease, { once: true });
  options.cancel?.addEventListener('abort', onCancel, { once: true });
  if (options.lease?.aborted) onLease();
  if (options.cancel?.aborted) onCancel();
  options.clock.sleep(options.timeoutMs, stopTimer.signal).then(
    () => abort('timeout'),
    () => undefined,
  );
  return {
    signal: controller.signal,
    get why() {
      return why;
    },
    settle: (work) => settleOrAbort(options, work, controller.signal),
    close: () => {
      stopTimer.abort();
      options.lease?.removeEventListener('abort', onLease);
      options.cancel?.removeEventListener('abort', onCancel);
    },
  };
}

/** Run `fn` under the bounds of `options`: its result, or a rejection with the abort's reason. */
export async function boundedCall<T>(options: BoundedCallOptions, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const call = openBoundedCall(options);
  try {
    let work: Promise<T>;
    try {
      work = fn(call.signal);
    } catch (error) {
      work = Promise.reject(error);
    }
    return await call.settle(work);
  } finally {
    call.close();
  }
}

/**
 * Await the work, but stop waiting once the signal aborts. With a grace, work that ignores the
 * abort gets that long to settle; still running after it, it is reported dangling.
 */
function settleOrAbort<T>(options: BoundedCallOptions, work: Promise<T>, signal: AbortSignal): Promise<T> {
  const aborted = new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
  // Without a grace the work is raced as it is: no extra hop between its answer and the caller.
  return options.grace ? settleWithin(options.clock, options.grace, work, aborted) : Promise.race([work, aborted]);
}

async function settleWithin<T>(clock: Clock, grace: NonNullable<BoundedCallOptions['grace']>, work: Promise<T>, aborted: Promise<never>): Promise<T> {
  let settled = false;
  const tracked = work.finally(() => {
    settled = true;
  });
  try {
    return await Promise.race([tracked, aborted]);
  } finally {
    if (!settled) {
      const timeout = clock.sleep(grace.ms).then(() => 'timeout' as const);
      const outcome = await Promise.race([
        tracked.then(
          () => 'settled' as const,
          () => 'settled' as const,
        ),
        timeout,
      ]);
      if (outcome === 'timeout') grace.onDangling();
    }
  }
}
