import { ModelError } from '../core/errors.js';

/**
 * Stable codes of the ModelErrors the adapters throw. Retryable ones were already retried inside
 * the adapter's bounded time; the engine logs them as model_failed and decides what comes next.
 */
export const MODEL_ERROR = {
  /** The provider rejected the request as malformed (400/422) for a reason other than length. */
  badRequest: 'model_bad_request',
  /** The prompt (plus max output tokens) does not fit the model's context window. */
  contextLength: 'model_context_length',
  /** Credentials missing, invalid, expired, or not allowed to use this model (401/403). */
  auth: 'model_auth',
  /** The model id or deployment does not exist on this provider (404). */
  notFound: 'model_not_found',
  /** The account has no quota or credit left (OpenAI `insufficient_quota`). */
  quotaExhausted: 'model_quota_exhausted',
  /** Still rate limited (429) when the retry time ran out. */
  rateLimited: 'model_rate_limited',
  /** 5xx, timeouts or network failures that lasted longer than the retry time. */
  unavailable: 'model_unavailable',
  /** The provider answered 2xx with a body that is not the documented shape. */
  invalidResponse: 'model_invalid_response',
} as const;
export type ModelErrorCode = (typeof MODEL_ERROR)[keyof typeof MODEL_ERROR];

const RETRYABLE: ReadonlySet<ModelErrorCode> = new Set([MODEL_ERROR.rateLimited, MODEL_ERROR.unavailable]);

export function modelError(code: ModelErrorCode, message: string, cause?: unknown): ModelError {
  return new ModelError(code, message, RETRYABLE.has(code), cause === undefined ? undefined : { cause });
}

/**
 * A failure worth another attempt. Only the retry loop sees it: once the time or attempts run
 * out it becomes a ModelError (model_rate_limited or model_unavailable).
 */
export class TransientModelFailure extends Error {
  constructor(
    readonly kind: 'rate_limited' | 'unavailable',
    message: string,
    /** The server's Retry-After, already converted to milliseconds from now. */
    readonly retryAfterMs?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'TransientModelFailure';
  }
}

const CONTEXT_LENGTH_PATTERNS: readonly RegExp[] = [
  /context[ _-]?length/i,
  /context[ _-]?window/i,
  /maximum context/i,
  /prompt is too long/i,
  /input is too long/i,
  /too many (input |total )?tokens/i,
  /reduce the length of the messages/i,
  /exceeds? the (model'?s? )?(maximum|max) (number of )?(input )?tokens/i,
];

/** Providers phrase it differently; these are the phrasings of OpenAI, vLLM, Ollama and Bedrock. */
export function looksLikeContextLength(message: string): boolean {
  return CONTEXT_LENGTH_PATTERNS.some((p) => p.test(message));
}

/** The error to throw when the caller aborted: the signal's own reason, as Clock.sleep does. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}
