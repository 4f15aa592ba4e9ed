import { SystemClock } from '../support/system-clock.js';
import { ConfigError, ModelError } from '../core/errors.js';
import type { ModelRequest, ModelResponse } from '../core/messages.js';
import type { Clock } from '../ports/clock.js';
import type { ModelCallOptions, ModelClient } from '../ports/model-client.js';
import { fromAiSdkResult, toAiSdkCallOptions, type AiSdkLanguageModel } from './ai-sdk-mapping.js';
import { readAiSdkStream } from './ai-sdk-stream.js';
import { TextSink, streamFailure } from './model-stream.js';
import { MODEL_ERROR, TransientModelFailure, abortReason, looksLikeContextLength, modelError } from './model-errors.js';
import { DEFAULT_RETRY, parseRetryAfter, withRetry, type RetryOptions } from './retry.js';

export type { AiSdkLanguageModel } from './ai-sdk-mapping.js';

export interface AiSdkModelOptions {
  retry?: Partial<RetryOptions>;
  clock?: Clock;
  random?: () => number;
}

/** The oldest specification version with this call shape (AI SDK 5); v1 (AI SDK 4) differs. */
const OLDEST_VERSION = 2;

/** `aisdk:<provider>/<modelId>`: the id an AI SDK model is pinned under, e.g. `aisdk:openai.chat/gpt-4.1-mini`. */
export function aiSdkModelId(model: Pick<AiSdkLanguageModel, 'provider' | 'modelId'>): string {
  return `aisdk:${model.provider}/${model.modelId}`;
}

/**
 * Checks that `model` looks like an AI SDK language model Logbook can call (duck-typed: the
 * application may load any copy of any provider package). Throws ConfigError naming what is off.
 */
function checkLanguageModel(model: unknown): AiSdkLanguageModel {
  if (typeof model !== 'object' || model === null) {
    throw new ConfigError(
      `aiSdkModel: expected an AI SDK language model object (e.g. createOpenAI(...)('gpt-4.1-mini')), got ${model === null ? 'null' : typeof model}` +
        (typeof model === 'string' ? ": a model id string needs the AI SDK gateway, which Logbook does not load; pass the provider's model object" : ''),
    );
  }
  const m = model as Record<string, unknown>;
  const version = m.specificationVersion;
  const match = typeof version === 'string' ? /^v(\d+)$/.exec(version) : null;
  if (!match) {
    throw new ConfigError(`aiSdkModel: the object has no specificationVersion ("v2", "v3", ...): it is not an AI SDK language model`);
  }
  if (Number(match[1]) < OLDEST_VERSION) {
    throw new ConfigError(
      `aiSdkModel: ${String(m.provider)} ${String(m.modelId)} implements specification ${version} (AI SDK 4), whose doGenerate takes ` +
        'and returns another shape: use a provider package built for AI SDK 5 or later (specification v2 or newer)',
    );
  }
  for (const key of ['provider', 'modelId'] as const) {
    if (typeof m[key] !== 'string' || m[key] === '') throw new ConfigError(`aiSdkModel: the model's ${key} must be a non-empty string`);
  }
  if (typeof m.doGenerate !== 'function') throw new ConfigError(`aiSdkModel: ${aiSdkModelId(m as never)} has no doGenerate function`);
  return model as AiSdkLanguageModel;
}

/**
 * A ModelClient over any AI SDK language model (specification v2, v3, and later versions that
 * keep their call shape): Anthropic's, Google's, Mistral's own APIs, a gateway, any provider
 * package a team already uses. Logbook calls `doGenerate` (not `generateText`), so the AI SDK's
 * own retries and tool loop are not involved: the engine runs the tools, and this adapter retries
 * 429s, 5xx and network failures within its bounded time like the built-in adapters.
 */
export class AiSdkModelClient implements ModelClient {
  /** The id to pin (`model.id` of the agent, and the key in defineAgents' `models`). */
  readonly id: string;
  readonly specificationVersion: string;
  private readonly model: AiSdkLanguageModel;
  private readonly retry: RetryOptions;
  private readonly clock: Clock;
  private readonly random: () => number;

  constructor(model: AiSdkLanguageModel, options: AiSdkModelOptions = {}) {
    this.model = checkLanguageModel(model);
    this.id = aiSdkModelId(this.model);
    this.specificationVersion = this.model.specificationVersion;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.clock = options.clock ?? new SystemClock();
    this.random = options.random ?? Math.random;
  }

  /**
   * With `onText`, a model that has `doStream` streams (its parts are read back into the result
   * doGenerate would give); one without it answers through doGenerate and onText gets the text
   * whole.
   */
  complete(request: ModelRequest, { signal, onText }: ModelCallOptions): Promise<ModelResponse> {
    // An `aisdk:` id names one model: a run pinned to it is never served by another one.
    if (request.modelId.startsWith('aisdk:') && request.modelId !== this.id) {
      return Promise.reject(
        modelError(
          MODEL_ERROR.notFound,
          `${request.modelId} is pinned but this client serves ${this.id}: register each AI SDK model under its own id ` +
            '(defineAgents({ models: { [model.id]: () => model } }))',
        ),
      );
    }
    const label = `ai-sdk ${this.model.provider}`;
    const sink = new TextSink(onText);
    const doStream = onText === undefined ? undefined : this.model.doStream;
    return withRetry(
      label,
      async () => {
        if (typeof doStream === 'function') {
          try {
            const streamed = await doStream.call(this.model, toAiSdkCallOptions(request, signal, this.model.provider));
            return await readAiSdkStream(streamed, label, sink, signal, (e) => classifyAiSdkError(e, label, this.clock.now()));
          } catch (error) {
            if (signal.aborted) throw abortReason(signal);
            throw streamFailure(classifyAiSdkError(error, label, this.clock.now()), sink, label);
          }
        }
        let result: unknown;
        try {
          // Fresh options per attempt: a provider may keep references to what it was given.
          result = await this.model.doGenerate(toAiSdkCallOptions(request, signal, this.model.provider));
        } catch (error) {
          if (signal.aborted) throw abortReason(signal);
          throw classifyAiSdkError(error, label, this.clock.now());
        }
        const response = fromAiSdkResult(result, label);
        sink.emit(response.text);
        return response;
      },
      signal,
      this.retry,
      { clock: this.clock, random: this.random },
    );
  }
}

/**
 * Wraps an AI SDK language model for Logbook. Use its `id` as the agent's model id and as its key
 * in defineAgents' `models`; the price is the agent's (`model.price`), as for any model.
 */
export function aiSdkModel(model: AiSdkLanguageModel, options: AiSdkModelOptions = {}): AiSdkModelClient {
  return new AiSdkModelClient(model, options);
}

/** The fields of the AI SDK's APICallError (and of look-alikes) that say what went wrong. */
interface ApiCallErrorLike {
  message: string;
  statusCode?: number;
  isRetryable?: boolean;
  responseHeaders?: Record<string, string>;
  responseBody?: string;
}

const isApiCallError = (error: unknown): error is ApiCallErrorLike =>
  error instanceof Error && (typeof (error as ApiCallErrorLike).statusCode === 'number' || typeof (error as ApiCallErrorLike).isRetryable === 'boolean');

/** AI SDK error names (their `name` is stable across versions) that are not a call's HTTP failure. */
const NAMED: Record<string, (typeof MODEL_ERROR)[keyof typeof MODEL_ERROR]> = {
  AI_LoadAPIKeyError: MODEL_ERROR.auth,
  AI_LoadSettingError: MODEL_ERROR.badRequest,
  AI_InvalidPromptError: MODEL_ERROR.badRequest,
  AI_InvalidArgumentError: MODEL_ERROR.badRequest,
  AI_UnsupportedFunctionalityError: MODEL_ERROR.badRequest,
  AI_NoSuchModelError: MODEL_ERROR.notFound,
  AI_TypeValidationError: MODEL_ERROR.invalidResponse,
  AI_JSONParseError: MODEL_ERROR.invalidResponse,
  AI_InvalidResponseDataError: MODEL_ERROR.invalidResponse,
  AI_EmptyResponseBodyError: MODEL_ERROR.invalidResponse,
  AI_NoContentGeneratedError: MODEL_ERROR.invalidResponse,
};

/** Provider error bodies name the code in `error.code` / `error.type` (OpenAI, Anthropic, Mistral...). */
function bodyCode(body: string | undefined): string | undefined {
  if (!body) return undefined;
  try {
    const json = JSON.parse(body) as { error?: { code?: unknown; type?: unknown } };
    const inner = json.error;
    if (typeof inner?.code === 'string') return inner.code;
    if (typeof inner?.type === 'string') return inner.type;
  } catch {
    // Not JSON: no code.
  }
  return undefined;
}

/**
 * What `doGenerate` threw → a TransientModelFailure (retried here) or a final ModelError, by the
 * same rules as the built-in adapters. The message is the provider's error message: never the
 * request body, URL or headers the error also carries.
 */
export function classifyAiSdkError(error: unknown, label: string, nowMs: number): Error {
  if (error instanceof ModelError || error instanceof TransientModelFailure) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (isApiCallError(error)) {
    const status = error.statusCode;
    const code = bodyCode(error.responseBody);
    const summary = `${status === undefined ? 'no HTTP answer' : `HTTP ${status}`}${code ? ` (${code})` : ''}: ${message}`;
    const retryAfter = parseRetryAfter((h) => lowerCaseHeader(error.responseHeaders, h), nowMs);
    const final = (c: (typeof MODEL_ERROR)[keyof typeof MODEL_ERROR]) => modelError(c, `${label}: ${summary}`);
    if (status === 429) {
      // Out of credit is not a rate limit: waiting will not help.
      if (code === 'insufficient_quota') return final(MODEL_ERROR.quotaExhausted);
      return new TransientModelFailure('rate_limited', summary, retryAfter);
    }
    if (status === 408 || (status !== undefined && status >= 500)) return new TransientModelFailure('unavailable', summary, retryAfter);
    if (status === 401 || status === 403) return final(MODEL_ERROR.auth);
    if (status === 404) return final(MODEL_ERROR.notFound);
    if (status === 413 || code === 'context_length_exceeded' || looksLikeContextLength(message)) return final(MODEL_ERROR.contextLength);
    // The provider's own judgement (a network failure, 409, an overloaded status of its own).
    if (error.isRetryable === true) return new TransientModelFailure('unavailable', summary, retryAfter);
    return final(status === undefined ? MODEL_ERROR.unavailable : MODEL_ERROR.badRequest);
  }
  const name = error instanceof Error ? error.name : '';
  const named = NAMED[name];
  if (named) return modelError(named, `${label}: ${name}: ${message}`);
  // Something the adapter does not recognise (a bug in a provider, a thrown string): not retried
  // here; as a retryable model_unavailable the engine's bounded retries decide.
  return modelError(MODEL_ERROR.unavailable, `${label}: ${name ? `${name}: ` : ''}${message}`);
}

function lowerCaseHeader(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return v;
  return undefined;
}
