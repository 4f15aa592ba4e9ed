import { ConfigError, ItemTooLargeError, ThrottledError, TransientStoreError } from '../../core/errors.js';

/**
 * SDK error classification and the retry loop shared by the DynamoDB, S3 and SQS adapters.
 * The clients we build run with the SDK's own retries off (maxAttempts 1), so this loop is the one
 * place that retries, and tests can count its attempts without waiting on real time.
 */

interface SdkErrorShape {
  name?: string;
  code?: string;
  message?: string;
  $fault?: 'client' | 'server';
  $retryable?: { throttling?: boolean };
  $metadata?: { httpStatusCode?: number };
}

const THROTTLING = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'Throttling',
  'ThrottledException',
  'RequestThrottled',
  'RequestThrottledException',
  'RequestLimitExceeded',
  'TooManyRequestsException',
  'SlowDown',
  'LimitExceededException',
]);

const TRANSIENT = new Set([
  'InternalServerError',
  'InternalFailure',
  'InternalError',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'RequestTimeout',
  'RequestTimeoutException',
  'TimeoutError',
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'UND_ERR_SOCKET',
]);

function shape(error: unknown): SdkErrorShape {
  return error !== null && typeof error === 'object' ? (error as SdkErrorShape) : {};
}

export function errorName(error: unknown): string {
  const e = shape(error);
  return e.name ?? e.code ?? 'UnknownError';
}

export function isConditionalCheckFailed(error: unknown): boolean {
  return errorName(error) === 'ConditionalCheckFailedException';
}

export function isThrottling(error: unknown): boolean {
  const e = shape(error);
  return THROTTLING.has(errorName(error)) || e.$retryable?.throttling === true || e.$metadata?.httpStatusCode === 429;
}

/** Retryable failures other than throttling: 5xx, timeouts, connection errors. */
export function isTransient(error: unknown): boolean {
  const e = shape(error);
  if (TRANSIENT.has(errorName(error)) || (e.code !== undefined && TRANSIENT.has(e.code))) return true;
  const status = e.$metadata?.httpStatusCode;
  if (status !== undefined && status >= 500) return true;
  return /socket hang up|ECONNRESET|ECONNREFUSED|ETIMEDOUT|EPIPE/.test(e.message ?? '');
}

/**
 * A failure after which the request may still have been applied (the reply was lost). Throttling
 * and 4xx answers are refusals: nothing was written.
 */
export function isAmbiguous(error: unknown): boolean {
  return isTransient(error) && !isThrottling(error);
}

/** Map an SDK error to a Logbook error; errors with no Logbook meaning are returned unchanged. */
export function mapAwsError(error: unknown, what: string): unknown {
  const name = errorName(error);
  const message = shape(error).message ?? '';
  if (isThrottling(error)) return new ThrottledError(`${what}: throttled (${name})`, { cause: error });
  if (isTransient(error)) return new TransientStoreError(`${what}: ${name} ${message}`.trim(), { cause: error });
  if (name === 'ValidationException' && /item size|maximum allowed size|exceeds.*size/i.test(message)) {
    return new ItemTooLargeError(`${what}: ${message}`, { cause: error });
  }
  if (name === 'ResourceNotFoundException' || name === 'NoSuchBucket' || name === 'QueueDoesNotExist') {
    return new ConfigError(`${what}: ${name} ${message}`.trim());
  }
  return error;
}

export interface RetryOptions {
  /** Total attempts, first included. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Injected for tests: how to wait, and the jitter source in [0, 1). */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

export const DEFAULT_RETRY: RetryOptions = { maxAttempts: 6, baseDelayMs: 50, maxDelayMs: 2_000 };

/** Exponential backoff with full jitter: uniform in [0, min(max, base * 2^retry)). */
export function backoffDelay(retry: number, options: RetryOptions): number {
  const cap = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** retry);
  return Math.floor((options.random ?? Math.random)() * cap);
}

/** Thrown for a failed condition so callers can tell whether an earlier attempt may have landed. */
export class ConditionFailed extends Error {
  constructor(
    readonly afterAmbiguousAttempt: boolean,
    options?: { cause?: unknown },
  ) {
    super('condition failed', options);
    this.name = 'ConditionFailed';
  }
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs `attempt` until it succeeds, retrying throttling and transient failures with backoff.
 * A ConditionalCheckFailedException becomes ConditionFailed; other errors are mapped.
 */
export async function withRetry<T>(what: string, options: RetryOptions, attempt: () => Promise<T>): Promise<T> {
  let ambiguous = false;
  for (let n = 0; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (isConditionalCheckFailed(error)) throw new ConditionFailed(ambiguous, { cause: error });
      const retryable = isThrottling(error) || isTransient(error);
      if (!retryable || n + 1 >= options.maxAttempts) throw mapAwsError(error, what);
      ambiguous ||= isAmbiguous(error);
      await (options.sleep ?? defaultSleep)(backoffDelay(n, options));
    }
  }
}
