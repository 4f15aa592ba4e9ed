import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../lib/adapters/memory/manual-clock.js';
import { boundedCall, BoundedCallAbort, openBoundedCall, type BoundCause, type BoundedCallOptions } from '../../../lib/engine/bounded-call.js';

/** Work that settles only when told, and says whether its signal aborted. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Let queued promise callbacks run. */
const flush = () => new Promise((r) => setImmediate(r));

function setup(extra: Partial<BoundedCallOptions> = {}) {
  const clock = new ManualClock(0);
  const lease = new AbortController();
  const cancel = new AbortController();
  const dangling: string[] = [];
  const options: BoundedCallOptions = {
    clock,
    timeoutMs: 1_000,
    lease: lease.signal,
    cancel: cancel.signal,
    grace: { ms: 200, onDangling: () => dangling.push('dangling') },
    ...extra,
  };
  return { clock, lease, cancel, dangling, options };
}

/** A call's outcome, once it has one: the value, or the error's reason. */
function watch<T>(call: Promise<T>) {
  const seen: { value?: T; error?: unknown; done: boolean } = { done: false };
  call.then(
    (value) => Object.assign(seen, { value, done: true }),
    (error: unknown) => Object.assign(seen, { error, done: true }),
  );
  return seen;
}

describe('boundedCall', () => {
  it('returns the result of work that settles in time, and stops its timer', async () => {
    const { clock, options, dangling } = setup();
    const seen = watch(boundedCall(options, async () => 'ok'));
    await flush();
    expect(seen).toEqual({ value: 'ok', done: true });
    // The timer was stopped: moving past the timeout aborts nothing and marks nothing.
    await clock.advance(5_000);
    expect(dangling).toEqual([]);
  });

  it('passes a thrown error through unchanged, sync or async, without aborting', async () => {
    const { options } = setup();
    const boom = new Error('boom');
    let signal: AbortSignal | undefined;
    await expect(
      boundedCall(options, async (s) => {
        signal = s;
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(signal?.aborted).toBe(false);
    await expect(
      boundedCall(options, () => {
        throw boom;
      }),
    ).rejects.toBe(boom);
  });

  it('aborts on the timeout from the Clock port, with the reason given for the cause', async () => {
    const { clock, options } = setup({ reason: (why: BoundCause) => new Error(`stopped: ${why}`) });
    let signal: AbortSignal | undefined;
    const work = deferred<string>();
    const seen = watch(
      boundedCall(options, (s) => {
        signal = s;
        s.addEventListener('abort', () => work.reject(s.reason));
        return work.promise;
      }),
    );
    await clock.advance(999);
    expect(seen.done).toBe(false);
    await clock.advance(1);
    expect(signal?.aborted).toBe(true);
    expect((seen.error as Error).message).toBe('stopped: timeout');
  });

  it('aborts when the lease is lost, with a BoundedCallAbort by default', async () => {
    const { lease, options } = setup();
    const work = deferred<string>();
    const seen = watch(boundedCall(options, (s) => (s.addEventListener('abort', () => work.reject(s.reason)), work.promise)));
    lease.abort();
    await flush();
    expect(seen.error).toBeInstanceOf(BoundedCallAbort);
    expect((seen.error as BoundedCallAbort).why).toBe('lease_lost');
  });

  it('aborts on cancel, and at once when a signal is already aborted', async () => {
    const { cancel, options } = setup();
    const work = deferred<string>();
    const seen = watch(boundedCall(options, (s) => (s.addEventListener('abort', () => work.reject(s.reason)), work.promise)));
    cancel.abort();
    await flush();
    expect((seen.error as BoundedCallAbort).why).toBe('cancel');
    // Opened after the cancel: aborted before the work starts.
    const late = openBoundedCall(options);
    expect(late.signal.aborted).toBe(true);
    expect(late.why).toBe('cancel');
    late.close();
  });

  it('keeps the first cause: a later bound does not change the reason', async () => {
    const { clock, lease, options } = setup();
    const call = openBoundedCall(options);
    const seen = watch(call.settle(new Promise<never>((_, reject) => call.signal.addEventListener('abort', () => reject(call.signal.reason)))));
    lease.abort();
    await clock.advance(1_000);
    expect(call.why).toBe('lease_lost');
    expect((seen.error as BoundedCallAbort).why).toBe('lease_lost');
    call.close();
  });

  it('waits the grace for work that ignores its abort, then reports it dangling', async () => {
    const { clock, options, dangling } = setup();
    const ignores = deferred<string>(); // never looks at its signal
    const seen = watch(boundedCall(options, () => ignores.promise));
    await clock.advance(1_000);
    expect(seen.done).toBe(false); // still inside the grace
    await clock.advance(199);
    expect(seen.done).toBe(false);
    await clock.advance(1);
    await flush();
    expect(dangling).toEqual(['dangling']);
    expect((seen.error as BoundedCallAbort).why).toBe('timeout');
  });

  it('does not report work dangling that settles inside the grace', async () => {
    const { clock, options, dangling } = setup();
    const slow = deferred<string>();
    const seen = watch(boundedCall(options, () => slow.promise));
    await clock.advance(1_000);
    await clock.advance(100);
    slow.resolve('late');
    await flush();
    // The abort decided the outcome; the late result is not returned.
    expect((seen.error as BoundedCallAbort).why).toBe('timeout');
    await clock.advance(1_000);
    expect(dangling).toEqual([]);
  });

  it('without a grace stops waiting at once and reports nothing', async () => {
    const { clock, options, dangling } = setup({ grace: undefined });
    const ignores = deferred<string>();
    const seen = watch(boundedCall(options, () => ignores.promise));
    await clock.advance(1_000);
    expect((seen.error as BoundedCallAbort).why).toBe('timeout');
    await clock.advance(10_000);
    expect(dangling).toEqual([]);
  });

  it('is not cancellable without a cancel signal, and close() stops watching the lease', async () => {
    const { clock, lease, cancel, options } = setup();
    const call = openBoundedCall({ ...options, cancel: undefined });
    cancel.abort();
    expect(call.signal.aborted).toBe(false);
    call.close();
    lease.abort();
    await clock.advance(5_000);
    expect(call.signal.aborted).toBe(false);
    expect(call.why).toBeUndefined();
  });
});
