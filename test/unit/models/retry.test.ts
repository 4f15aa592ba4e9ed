import { describe, expect, it } from 'vitest';
import { ModelError } from '../../../lib/core/errors.js';
import { TransientModelFailure } from '../../../lib/models/model-errors.js';
import { backoffMs, parseRetryAfter, withRetry, type RetryOptions } from '../../../lib/models/retry.js';
import { InstantClock } from './fixture-server.js';

const options: RetryOptions = { maxAttempts: 5, baseDelayMs: 1000, maxDelayMs: 4000, maxTotalMs: 60_000 };

describe('backoffMs', () => {
  it('draws uniformly below a window that doubles up to the cap', () => {
    expect([1, 2, 3, 4, 5].map((n) => backoffMs(n, options, () => 0.999))).toEqual([999, 1998, 3996, 3996, 3996]);
    expect(backoffMs(3, options, () => 0)).toBe(0);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2026, 0, 15, 12, 0, 0);
  const h = (headers: Record<string, string>) => (name: string) => headers[name];

  it('reads delta-seconds, HTTP dates and retry-after-ms', () => {
    expect(parseRetryAfter(h({ 'retry-after': '7' }), now)).toBe(7000);
    expect(parseRetryAfter(h({ 'retry-after': '0.5' }), now)).toBe(500);
    expect(parseRetryAfter(h({ 'retry-after': 'Thu, 15 Jan 2026 12:00:09 GMT' }), now)).toBe(9000);
    expect(parseRetryAfter(h({ 'retry-after-ms': '250', 'retry-after': '1' }), now)).toBe(250);
  });

  it('clamps dates in the past to zero and ignores garbage', () => {
    expect(parseRetryAfter(h({ 'retry-after': 'Thu, 15 Jan 2026 11:00:00 GMT' }), now)).toBe(0);
    expect(parseRetryAfter(h({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(parseRetryAfter(h({}), now)).toBeUndefined();
  });
});

describe('withRetry', () => {
  const deps = () => ({ clock: new InstantClock(), random: () => 0.5 });
  const signal = () => new AbortController().signal;

  it('returns the first success and passes the attempt number', async () => {
    const seen: number[] = [];
    const d = deps();
    const result = await withRetry(
      'test',
      async (n) => {
        seen.push(n);
        if (n < 3) throw new TransientModelFailure('unavailable', 'HTTP 503');
        return 'ok';
      },
      signal(),
      options,
      d,
    );
    expect(result).toBe('ok');
    expect(seen).toEqual([1, 2, 3]);
    expect(d.clock.sleeps).toEqual([500, 1000]);
  });

  it('does not retry other errors', async () => {
    let calls = 0;
    const boom = new ModelError('model_auth', 'denied', false);
    await expect(
      withRetry(
        'test',
        async () => {
          calls++;
          throw boom;
        },
        signal(),
        options,
        deps(),
      ),
    ).rejects.toBe(boom);
    expect(calls).toBe(1);
  });

  it('stops after maxAttempts with a retryable ModelError that keeps the last failure as cause', async () => {
    const last = new TransientModelFailure('rate_limited', 'HTTP 429: slow down');
    const error = await withRetry(
      'test',
      async () => {
        throw last;
      },
      signal(),
      { ...options, maxAttempts: 3 },
      deps(),
    ).catch((e: unknown) => e as ModelError);
    expect(error).toBeInstanceOf(ModelError);
    expect(error.code).toBe('model_rate_limited');
    expect(error.retryable).toBe(true);
    expect(error.cause).toBe(last);
    expect(error.message).toContain('3 attempts');
  });

  it('never sleeps past the total budget', async () => {
    const d = deps();
    const error = await withRetry(
      'test',
      async () => {
        throw new TransientModelFailure('unavailable', 'HTTP 502');
      },
      signal(),
      { maxAttempts: 100, baseDelayMs: 1000, maxDelayMs: 1000, maxTotalMs: 2600 },
      d,
    ).catch((e: unknown) => e as ModelError);
    expect(error.code).toBe('model_unavailable');
    expect(d.clock.sleeps).toEqual([500, 500, 500, 500, 500]);
    expect(d.clock.sleeps.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(2600);
  });

  it('rethrows the abort reason, before an attempt and during a sleep', async () => {
    const controller = new AbortController();
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(withRetry('test', async () => 'never', controller.signal, options, deps())).rejects.toBe(reason);

    const during = new AbortController();
    const clock = new InstantClock();
    let attempts = 0;
    const sleepingClock = {
      now: () => clock.now(),
      sleep: (_ms: number, s?: AbortSignal) => {
        during.abort(reason);
        return clock.sleep(0, s);
      },
    };
    await expect(
      withRetry(
        'test',
        async () => {
          attempts++;
          throw new TransientModelFailure('unavailable', 'HTTP 503');
        },
        during.signal,
        options,
        { clock: sleepingClock, random: () => 0.5 },
      ),
    ).rejects.toBe(reason);
    expect(attempts).toBe(1);
  });
});
