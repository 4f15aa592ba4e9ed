import { describe, expect, it } from 'vitest';
import {
  ConditionFailed,
  backoffDelay,
  isAmbiguous,
  isThrottling,
  isTransient,
  mapAwsError,
  withRetry,
} from '../../../../lib/adapters/aws/aws-errors.js';
import { ConfigError, ItemTooLargeError, ThrottledError, TransientStoreError } from '../../../../lib/core/errors.js';

const sdkError = (name: string, status: number, message = '') => Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status } });

describe('AWS error classification', () => {
  it('knows throttling from its name, its $retryable flag or a 429', () => {
    expect(isThrottling(sdkError('ProvisionedThroughputExceededException', 400))).toBe(true);
    expect(isThrottling(sdkError('SlowDown', 503))).toBe(true);
    expect(isThrottling(Object.assign(new Error(), { name: 'Whatever', $retryable: { throttling: true } }))).toBe(true);
    expect(isThrottling(sdkError('Whatever', 429))).toBe(true);
    expect(isThrottling(sdkError('ValidationException', 400))).toBe(false);
  });

  it('treats 5xx, timeouts and broken connections as transient and possibly applied', () => {
    for (const e of [sdkError('InternalServerError', 500), sdkError('Unknown', 502), sdkError('TimeoutError', 0), Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })]) {
      expect(isTransient(e)).toBe(true);
      expect(isAmbiguous(e)).toBe(true);
    }
    expect(isAmbiguous(sdkError('SlowDown', 503))).toBe(false); // a refusal: nothing was written
    expect(isTransient(sdkError('ConditionalCheckFailedException', 400))).toBe(false);
  });

  it('maps to Logbook errors and leaves the rest unchanged', () => {
    expect(mapAwsError(sdkError('ThrottlingException', 400), 'x')).toBeInstanceOf(ThrottledError);
    expect(mapAwsError(sdkError('ServiceUnavailable', 503), 'x')).toBeInstanceOf(TransientStoreError);
    expect(mapAwsError(sdkError('ValidationException', 400, 'Item size has exceeded the maximum allowed size'), 'x')).toBeInstanceOf(ItemTooLargeError);
    expect(mapAwsError(sdkError('ResourceNotFoundException', 400, 'Requested resource not found'), 'x')).toBeInstanceOf(ConfigError);
    const other = sdkError('ValidationException', 400, 'bad expression');
    expect(mapAwsError(other, 'x')).toBe(other);
  });

  it('backs off exponentially with full jitter, capped', () => {
    const opts = { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 1_000 };
    expect([0, 1, 2, 3, 4].map((n) => backoffDelay(n, { ...opts, random: () => 0.999 }))).toEqual([99, 199, 399, 799, 999]);
    expect(backoffDelay(3, { ...opts, random: () => 0 })).toBe(0);
  });
});

describe('withRetry', () => {
  const fast = { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 100, sleep: async () => undefined };

  it('retries retryable failures and returns the first success', async () => {
    let calls = 0;
    const value = await withRetry('op', fast, async () => {
      if (++calls < 3) throw sdkError('ThrottlingException', 400);
      return 'ok';
    });
    expect(value).toBe('ok');
    expect(calls).toBe(3);
  });

  it('turns a failed condition into ConditionFailed, remembering an ambiguous earlier attempt', async () => {
    let calls = 0;
    const error = await withRetry('op', fast, async () => {
      if (++calls === 1) throw sdkError('InternalServerError', 500);
      throw sdkError('ConditionalCheckFailedException', 400);
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConditionFailed);
    expect((error as ConditionFailed).afterAmbiguousAttempt).toBe(true);
    const plain = await withRetry('op', fast, async () => {
      throw sdkError('ConditionalCheckFailedException', 400);
    }).catch((e: unknown) => e);
    expect((plain as ConditionFailed).afterAmbiguousAttempt).toBe(false);
  });

  it('does not retry what is not retryable', async () => {
    let calls = 0;
    await expect(
      withRetry('op', fast, async () => {
        calls++;
        throw sdkError('AccessDeniedException', 400);
      }),
    ).rejects.toMatchObject({ name: 'AccessDeniedException' });
    expect(calls).toBe(1);
  });
});
