import { ConverseCommand, ConverseStreamCommand, type BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { SystemClock } from '../support/system-clock.js';
import { ModelError } from '../core/errors.js';
import type { ModelRequest, ModelResponse } from '../core/messages.js';
import type { ModelCallOptions, ModelClient } from '../ports/model-client.js';
import type { Clock } from '../ports/clock.js';
import { fromConverseOutput, supportsToolResultStatus, toConverseInput } from './bedrock-mapping.js';
import { readConverseStream } from './bedrock-stream.js';
import { TextSink, brokenStream, streamFailure } from './model-stream.js';
import { MODEL_ERROR, TransientModelFailure, abortReason, looksLikeContextLength, modelError } from './model-errors.js';
import { DEFAULT_RETRY, parseRetryAfter, withRetry, type RetryOptions } from './retry.js';

export interface BedrockConverseOptions {
  /**
   * The SDK client. Build it with `maxAttempts: 1`: this adapter owns retries (bounded time,
   * Retry-After, abort), and the SDK's own retries would multiply them.
   */
  client: BedrockRuntimeClient;
  /** A Bedrock model id, inference profile id or ARN, without Logbook's `bedrock:` prefix. */
  modelId: string;
  retry?: Partial<RetryOptions>;
  clock?: Clock;
  random?: () => number;
  /** Defaults to whether the model family documents toolResult.status (Claude, Nova). */
  toolResultStatus?: boolean;
}

/** ModelClient over the Bedrock Converse API, bound to one model id. */
export class BedrockConverseClient implements ModelClient {
  private readonly retry: RetryOptions;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly toolResultStatus: boolean;

  constructor(private readonly options: BedrockConverseOptions) {
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.clock = options.clock ?? new SystemClock();
    this.random = options.random ?? Math.random;
    this.toolResultStatus = options.toolResultStatus ?? supportsToolResultStatus(options.modelId);
  }

  get modelId(): string {
    return this.options.modelId;
  }

  /**
   * request.modelId is not used: the resolver already picked this client for the pinned id.
   * With `onText` the call is ConverseStream (same input), read back into the same response.
   */
  complete(request: ModelRequest, { signal, onText }: ModelCallOptions): Promise<ModelResponse> {
    const input = toConverseInput(this.options.modelId, request, { toolResultStatus: this.toolResultStatus });
    const sink = new TextSink(onText);
    return withRetry(
      'bedrock',
      async () => {
        if (onText) {
          try {
            const output = await this.options.client.send(new ConverseStreamCommand(input), { abortSignal: signal });
            if (!output.stream) throw brokenStream('bedrock', 'before it began: the response has no stream');
            return await readConverseStream(output.stream, sink, signal);
          } catch (error) {
            if (signal.aborted) throw abortReason(signal);
            const mapped = error instanceof ModelError || error instanceof TransientModelFailure ? error : classifyBedrockError(error, this.clock.now());
            throw streamFailure(mapped, sink, 'bedrock');
          }
        }
        let output;
        try {
          output = await this.options.client.send(new ConverseCommand(input), { abortSignal: signal });
        } catch (error) {
          if (signal.aborted) throw abortReason(signal);
          throw classifyBedrockError(error, this.clock.now());
        }
        return fromConverseOutput(output);
      },
      signal,
      this.retry,
      { clock: this.clock, random: this.random },
    );
  }
}

interface SdkErrorShape {
  name?: string;
  message?: string;
  $fault?: string;
  $metadata?: { httpStatusCode?: number };
  $response?: { statusCode?: number; headers?: Record<string, string | undefined> };
}

const RATE_LIMITED = new Set(['ThrottlingException', 'TooManyRequestsException', 'ModelNotReadyException', 'ServiceQuotaExceededException']);
const UNAVAILABLE = new Set([
  'InternalServerException',
  'ServiceUnavailableException',
  'ModelTimeoutException',
  'ModelErrorException',
  // ConverseStream: the model failed mid-answer (its stream exception event).
  'ModelStreamErrorException',
  'TimeoutError',
  'RequestTimeout',
]);
const AUTH = new Set([
  'AccessDeniedException',
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'IncompleteSignatureException',
  'MissingAuthenticationTokenException',
  'InvalidClientTokenId',
  'ExpiredTokenException',
  'ExpiredToken',
  'CredentialsProviderError',
]);

/**
 * Maps an SDK error to a TransientModelFailure (retried) or a final ModelError. Returned, not
 * thrown, so the caller's `throw` keeps the control flow visible.
 */
export function classifyBedrockError(error: unknown, nowMs: number): Error {
  const e = (typeof error === 'object' && error !== null ? error : {}) as SdkErrorShape;
  const name = e.name ?? 'Error';
  const message = `${name}: ${e.message ?? String(error)}`;
  const status = e.$metadata?.httpStatusCode ?? e.$response?.statusCode;
  const headers = e.$response?.headers ?? {};
  const retryAfter = parseRetryAfter((h) => headers[h] ?? headers[h.toLowerCase()], nowMs);
  const opts = { cause: error };

  if (RATE_LIMITED.has(name)) return new TransientModelFailure('rate_limited', message, retryAfter, opts);
  if (UNAVAILABLE.has(name)) return new TransientModelFailure('unavailable', message, retryAfter, opts);
  if (AUTH.has(name)) return modelError(MODEL_ERROR.auth, `bedrock: ${message}`, error);
  if (name === 'ResourceNotFoundException') return modelError(MODEL_ERROR.notFound, `bedrock: ${message}`, error);
  if (name === 'ValidationException' || status === 400) {
    if (looksLikeContextLength(message)) return modelError(MODEL_ERROR.contextLength, `bedrock: ${message}`, error);
    if (/model identifier is invalid/i.test(message)) return modelError(MODEL_ERROR.notFound, `bedrock: ${message}`, error);
    return modelError(MODEL_ERROR.badRequest, `bedrock: ${message}`, error);
  }
  if (status === 429) return new TransientModelFailure('rate_limited', message, retryAfter, opts);
  if (status === 401 || status === 403) return modelError(MODEL_ERROR.auth, `bedrock: ${message}`, error);
  if (status === 404) return modelError(MODEL_ERROR.notFound, `bedrock: ${message}`, error);
  if (status !== undefined && status >= 400 && status < 500 && e.$fault !== 'server') {
    return modelError(MODEL_ERROR.badRequest, `bedrock: ${message}`, error);
  }
  if (status !== undefined && status >= 200 && status < 300) {
    // The SDK could not deserialize a successful response.
    return modelError(MODEL_ERROR.invalidResponse, `bedrock: ${message}`, error);
  }
  // 5xx, a server fault, or no HTTP response at all (connection refused or reset, DNS, timeout).
  return new TransientModelFailure('unavailable', message, retryAfter, opts);
}
