import { SystemClock } from '../support/system-clock.js';
import { ConfigError } from '../core/errors.js';
import type { ModelRequest, ModelResponse } from '../core/messages.js';
import type { Clock } from '../ports/clock.js';
import type { ModelCallOptions, ModelClient } from '../ports/model-client.js';
import { MODEL_ERROR, TransientModelFailure, abortReason, looksLikeContextLength, modelError } from './model-errors.js';
import { TextSink, streamFailure, streamIterable } from './model-stream.js';
import { readChatCompletionStream } from './openai-stream.js';
import { fromChatCompletion, toChatCompletionsBody, type MaxTokensParam } from './openai-wire.js';
import { DEFAULT_RETRY, parseRetryAfter, withRetry, type RetryOptions } from './retry.js';

export type ApiKeyHeader = 'authorization' | 'api-key';

export interface OpenAiCompatibleOptions {
  /**
   * Server base URL: `https://api.openai.com/v1`, `http://localhost:11434` (`/v1` is added when
   * the path is empty), `http://vllm:8000/v1/`, or an Azure deployment URL such as
   * `https://r.openai.azure.com/openai/deployments/d?api-version=2024-10-21` (query kept).
   */
  baseUrl: string;
  /** The model name sent in the body, without Logbook's `openai:` prefix. */
  model: string;
  /** Omitted for servers without auth (a local vLLM or Ollama). */
  apiKey?: string;
  /** Default: `api-key` for Azure hosts, `Authorization: Bearer` everywhere else. */
  apiKeyHeader?: ApiKeyHeader;
  /** Default: `max_completion_tokens` for api.openai.com (its newer models refuse the other), else `max_tokens`. */
  maxTokensParam?: MaxTokensParam;
  /** Extra headers (e.g. an organization or gateway header). */
  headers?: Record<string, string>;
  fetch?: typeof fetch;
  retry?: Partial<RetryOptions>;
  clock?: Clock;
  random?: () => number;
}

/** `<base>/chat/completions`, adding `/v1` only when the base URL has no path at all. */
export function chatCompletionsUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ConfigError(`OpenAI-compatible base URL is not a valid URL: ${baseUrl}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`OpenAI-compatible base URL must be http(s): ${baseUrl}`);
  }
  let path = url.pathname.replace(/\/+$/, '');
  if (!path.endsWith('/chat/completions')) path = `${path === '' ? '/v1' : path}/chat/completions`;
  url.pathname = path;
  return url;
}

const isAzureHost = (host: string) => /\.(openai|cognitiveservices|services\.ai)\.azure\.com$/i.test(host);

/** ModelClient over OpenAI Chat Completions (OpenAI, Azure, vLLM, Ollama, LM Studio...), bound to one model. */
export class OpenAiCompatibleClient implements ModelClient {
  readonly url: URL;
  private readonly headers: Record<string, string>;
  private readonly maxTokensParam: MaxTokensParam;
  private readonly retry: RetryOptions;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: OpenAiCompatibleOptions) {
    this.url = chatCompletionsUrl(options.baseUrl);
    const keyHeader = options.apiKeyHeader ?? (isAzureHost(this.url.hostname) ? 'api-key' : 'authorization');
    this.headers = {
      'content-type': 'application/json',
      accept: 'application/json',
      ...options.headers,
      ...(options.apiKey === undefined ? {} : keyHeader === 'api-key' ? { 'api-key': options.apiKey } : { authorization: `Bearer ${options.apiKey}` }),
    };
    this.maxTokensParam = options.maxTokensParam ?? (this.url.hostname === 'api.openai.com' ? 'max_completion_tokens' : 'max_tokens');
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.clock = options.clock ?? new SystemClock();
    this.random = options.random ?? Math.random;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  get model(): string {
    return this.options.model;
  }

  /**
   * request.modelId is not used: the resolver already picked this client for the pinned id.
   * With `onText` the request asks for `stream: true` (usage included) and the same answer is
   * put back together from the Server-Sent Events.
   */
  complete(request: ModelRequest, { signal, onText }: ModelCallOptions): Promise<ModelResponse> {
    const wire = toChatCompletionsBody(this.options.model, request, this.maxTokensParam);
    const streaming = onText !== undefined;
    const body = JSON.stringify(streaming ? { ...wire, stream: true, stream_options: { include_usage: true } } : wire);
    const headers = streaming ? { ...this.headers, accept: 'text/event-stream' } : this.headers;
    const sink = new TextSink(onText);
    return withRetry(
      'openai-compatible',
      async () => {
        let res: Response;
        try {
          res = await this.fetch(this.url, { method: 'POST', headers, body, signal });
        } catch (error) {
          if (signal.aborted) throw abortReason(signal);
          throw unreachable(error);
        }
        const status = res.status;
        const isStream = streaming && status >= 200 && status < 300 && /^text\/event-stream\b/i.test(res.headers.get('content-type') ?? '');
        if (isStream && res.body) {
          try {
            return await readChatCompletionStream(streamIterable(res.body), sink, signal);
          } catch (error) {
            if (signal.aborted) throw abortReason(signal);
            throw streamFailure(error, sink, 'openai-compatible');
          }
        }
        let text: string;
        try {
          text = await res.text();
        } catch (error) {
          if (signal.aborted) throw abortReason(signal);
          throw unreachable(error);
        }
        if (status < 200 || status >= 300) {
          throw classifyHttpError(status, text, (h) => res.headers.get(h), this.clock.now(), this.maxTokensParam);
        }
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          throw modelError(MODEL_ERROR.invalidResponse, `openai-compatible: HTTP ${status} body is not JSON: ${text.slice(0, 200)}`);
        }
        const response = fromChatCompletion(json);
        // A server that ignores `stream: true` answers in one piece: the preview gets it whole.
        sink.emit(response.text);
        return response;
      },
      signal,
      this.retry,
      { clock: this.clock, random: this.random },
    );
  }
}

/** No HTTP answer (or its body failed): connection refused or reset, DNS, TLS. Worth another attempt. */
function unreachable(error: unknown): TransientModelFailure {
  const detail = error instanceof Error ? `${error.message}${causeText(error)}` : String(error);
  return new TransientModelFailure('unavailable', `request failed: ${detail}`, undefined, { cause: error });
}

function causeText(error: Error): string {
  const cause = error.cause;
  if (cause instanceof Error) return ` (${(cause as { code?: string }).code ?? cause.name}: ${cause.message})`;
  return '';
}

/** `{error: {message, code, type}}` (OpenAI, Azure, Ollama), `{message, code}` (older vLLM) or `{error: "..."}`. */
function readErrorBody(text: string): { message: string; code?: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { message: text.slice(0, 500) || '(empty body)' };
  }
  const root = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  const inner = root.error;
  const obj = (typeof inner === 'object' && inner !== null ? inner : root) as Record<string, unknown>;
  const message = typeof obj.message === 'string' ? obj.message : typeof inner === 'string' ? inner : text.slice(0, 500);
  const code = typeof obj.code === 'string' ? obj.code : typeof obj.type === 'string' ? obj.type : undefined;
  return code === undefined ? { message } : { message, code };
}

/** Maps a non-2xx answer to a TransientModelFailure (retried) or a final ModelError. */
export function classifyHttpError(status: number, text: string, header: (name: string) => string | null, nowMs: number, maxTokensParam: MaxTokensParam): Error {
  const { message, code } = readErrorBody(text);
  const summary = `HTTP ${status}${code ? ` (${code})` : ''}: ${message}`;
  const final = (c: Parameters<typeof modelError>[0], m = summary) => modelError(c, `openai-compatible: ${m}`);
  const retryAfter = parseRetryAfter(header, nowMs);

  if (status === 429) {
    // Out of credit is not a rate limit: waiting will not help.
    if (code === 'insufficient_quota') return final(MODEL_ERROR.quotaExhausted);
    return new TransientModelFailure('rate_limited', summary, retryAfter);
  }
  if (status === 408 || status >= 500) return new TransientModelFailure('unavailable', summary, retryAfter);
  if (status === 401 || status === 403) return final(MODEL_ERROR.auth);
  if (status === 404) return final(MODEL_ERROR.notFound);
  if (code === 'context_length_exceeded' || status === 413 || looksLikeContextLength(message)) {
    return final(MODEL_ERROR.contextLength);
  }
  if (/max_tokens/.test(message) && /max_completion_tokens/.test(message)) {
    const other = maxTokensParam === 'max_tokens' ? 'max_completion_tokens' : 'max_tokens';
    return final(MODEL_ERROR.badRequest, `${summary} (set OPENAI_MAX_TOKENS_PARAM=${other})`);
  }
  return final(MODEL_ERROR.badRequest);
}
