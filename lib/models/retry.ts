import type { Clock } from '../ports/clock.js';
import { MODEL_ERROR, TransientModelFailure, abortReason, modelError } from './model-errors.js';
import { plural } from '../core/plural.js';

export interface RetryOptions {
  /** Attempts in all, the first one included. */
  maxAttempts: number;
  /** Cap of the first backoff window; it doubles per attempt (full jitter picks within it). */
  baseDelayMs: number;
  maxDelayMs: number;
  /**
   * No retry starts later than this after the first attempt began: a wait (backoff or the
   * server's Retry-After) that would end past it gives up at once instead of sleeping.
   */
  maxTotalMs: number;
}

export const DEFAULT_RETRY: RetryOptions = {
  maxAttempts: 6,
  baseDelayMs: 1_000,
  maxDelayMs: 20_000,
  maxTotalMs: 60_000,
};

/** Injected so tests never wait in real time and backoff is reproducible. */
export interface RetryDeps {
  clock: Clock;
  /** Uniform in [0, 1), like Math.random. */
  random: () => number;
}

/** Full jitter: uniform in [0, min(max, base * 2^(attempt-1))). */
export function backoffMs(attempt: number, options: RetryOptions, random: () => number): number {
  const window = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(random() * window);
}

/**
 * Runs `attempt` until it succeeds, throws something other than a TransientModelFailure, or the
 * attempts or time run out (then a retryable ModelError: model_rate_limited or model_unavailable).
 * The signal is checked before every attempt and interrupts sleeps; an abort rethrows its reason.
 */
export async function withRetry<T>(
  provider: string,
  attempt: (n: number) => Promise<T>,
  signal: AbortSignal,
  options: RetryOptions,
  deps: RetryDeps,
): Promise<T> {
  const start = deps.clock.now();
  for (let n = 1; ; n++) {
    if (signal.aborted) throw abortReason(signal);
    try {
      return await attempt(n);
    } catch (error) {
      if (signal.aborted) throw abortReason(signal);
      if (!(error instanceof TransientModelFailure)) throw error;
      const delay = error.retryAfterMs ?? backoffMs(n, options, deps.random);
      const elapsed = deps.clock.now() - start;
      const code = error.kind === 'rate_limited' ? MODEL_ERROR.rateLimited : MODEL_ERROR.unavailable;
      if (n >= options.maxAttempts) {
        throw modelError(code, `${provider}: ${error.message} (gave up after ${plural(n, 'attempt')} in ${elapsed} ms)`, error);
      }
      if (elapsed + delay > options.maxTotalMs) {
        const wait = error.retryAfterMs === undefined ? `backoff of ${delay} ms` : `Retry-After of ${delay} ms`;
        throw modelError(
          code,
          `${provider}: ${error.message} (gave up after ${plural(n, 'attempt')}: a ${wait} would pass the ${options.maxTotalMs} ms retry budget)`,
          error,
        );
      }
      await deps.clock.sleep(delay, signal);
    }
  }
}

/**
 * Milliseconds the server asked us to wait: `retry-after-ms` (OpenAI), else `Retry-After` as
 * delta-seconds or an HTTP date. Undefined when absent or unparseable.
 */
export function parseRetryAfter(header: (name: string) => string | null | undefined, nowMs: number): number | undefined {
  const ms = header('retry-after-ms')?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.ceil(Number(ms));
  const value = header('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}
