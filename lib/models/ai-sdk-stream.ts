import { ModelError } from '../core/errors.js';
import type { ModelResponse } from '../core/messages.js';
import { fromAiSdkResult } from './ai-sdk-mapping.js';
import { MODEL_ERROR, TransientModelFailure, modelError } from './model-errors.js';
import { brokenStream, streamIterable, untilAborted, type TextSink } from './model-stream.js';
import { plural } from '../core/plural.js';

/** A part of a `doStream` result's stream, duck-typed: only `type` is known before it is read. */
type StreamPart = { type?: unknown } & Record<string, unknown>;

interface ToolInput {
  id: string;
  toolName: string;
  input: string;
  providerExecuted: boolean;
}

/** The stream of a `doStream` result: a ReadableStream (V2, V3), or anything async-iterable. */
function partsOf(result: unknown, provider: string): AsyncIterable<StreamPart> {
  const stream = (typeof result === 'object' && result !== null ? (result as { stream?: unknown }).stream : undefined) as
    (ReadableStream<StreamPart> & Partial<AsyncIterable<StreamPart>>) | undefined;
  if (stream && typeof stream.getReader === 'function') return streamIterable(stream);
  if (stream && typeof stream[Symbol.asyncIterator] === 'function') return stream as AsyncIterable<StreamPart>;
  throw modelError(MODEL_ERROR.invalidResponse, `${provider}: the doStream result has no stream`);
}

/**
 * Reads a `doStream` result (LanguageModelV2 / V3 stream parts; `textDelta` of V1 is read too):
 * text deltas go to the sink as they arrive, and the parts are put back together into the
 * `doGenerate`-shaped result (text, tool calls, finish reason, usage) that `fromAiSdkResult`
 * reads, so both paths give the same ModelResponse. `classify` maps an `error` part (or a stream
 * that failed) like an error `doGenerate` threw; a stream that ends without `finish` broke.
 */
export async function readAiSdkStream(
  result: unknown,
  provider: string,
  sink: TextSink,
  signal: AbortSignal,
  classify: (error: unknown) => Error,
): Promise<ModelResponse> {
  let text = '';
  const calls: StreamPart[] = [];
  const inputs = new Map<string, ToolInput>();
  const called = new Set<string>();
  let finish: StreamPart | undefined;
  let parts = 0;

  try {
    for await (const part of untilAborted(partsOf(result, provider), signal)) {
      parts++;
      if (typeof part !== 'object' || part === null) continue;
      switch (part.type) {
        case 'text-delta': {
          const delta = typeof part.delta === 'string' ? part.delta : typeof part.textDelta === 'string' ? part.textDelta : '';
          text += delta;
          sink.emit(delta);
          break;
        }
        case 'tool-call':
          calls.push(part);
          if (typeof part.toolCallId === 'string') called.add(part.toolCallId);
          break;
        case 'tool-input-start':
          if (typeof part.id === 'string') {
            inputs.set(part.id, { id: part.id, toolName: String(part.toolName ?? ''), input: '', providerExecuted: part.providerExecuted === true });
          }
          break;
        case 'tool-input-delta': {
          const input = typeof part.id === 'string' ? inputs.get(part.id) : undefined;
          if (input && typeof part.delta === 'string') input.input += part.delta;
          break;
        }
        case 'finish':
          finish = part;
          break;
        case 'error':
          throw partError(part.error, provider, parts, classify);
        default:
        // stream-start, response-metadata, text-start/end, reasoning, sources, files, raw: not logged.
      }
    }
  } catch (error) {
    if (signal.aborted || error instanceof ModelError || error instanceof TransientModelFailure) throw error;
    // The stream itself failed: the connection dropped mid-answer.
    throw brokenStream(provider, `after ${plural(parts, 'part')}`, error);
  }
  if (!finish) throw brokenStream(provider, `after ${plural(parts, 'part')}: no finish part`);
  // A provider that saw its HTTP stream end early still finishes: V2 packages with reason
  // `unknown` and no usage (V3 ones add an error part, handled above).
  const reason =
    typeof finish.finishReason === 'object' && finish.finishReason !== null ? (finish.finishReason as { unified?: unknown }).unified : finish.finishReason;
  if ((reason === 'unknown' || reason === 'error') && !hasUsage(finish.usage)) {
    throw brokenStream(provider, `after ${plural(parts, 'part')}: finished (${String(reason)}) without usage`);
  }
  // The specification follows every tool-input-end with a tool-call; a provider that does not
  // still had its input streamed, so it is assembled here rather than lost.
  for (const input of inputs.values()) {
    if (called.has(input.id) || input.providerExecuted) continue;
    calls.push({ type: 'tool-call', toolCallId: input.id, toolName: input.toolName, input: input.input });
  }
  return fromAiSdkResult(
    {
      content: [...(text === '' ? [] : [{ type: 'text', text }]), ...calls.map((c) => ({ ...c, input: c.input ?? c.args }))],
      finishReason: finish.finishReason,
      usage: finish.usage,
    },
    provider,
  );
}

/**
 * An `error` part. An HTTP failure (an APICallError: it has a status) is classified as a thrown
 * one is; anything else (a chunk the provider could not parse, an error object the server sent
 * mid-answer, "ended without a finish reason") means the answer broke off: worth another attempt.
 */
function partError(error: unknown, provider: string, parts: number, classify: (error: unknown) => Error): Error {
  if (error instanceof Error && typeof (error as { statusCode?: unknown }).statusCode === 'number') return classify(error);
  const message =
    error instanceof Error
      ? `${error.name}: ${error.message}`
      : typeof (error as { message?: unknown } | null)?.message === 'string'
        ? (error as { message: string }).message
        : JSON.stringify(error ?? null).slice(0, 500);
  return brokenStream(provider, `after ${plural(parts, 'part')}`, message);
}

/** Whether a finish part's usage has both totals (V2: numbers; V3: `{ total }`). */
function hasUsage(usage: unknown): boolean {
  const u = (typeof usage === 'object' && usage !== null ? usage : {}) as Record<string, unknown>;
  const total = (v: unknown) => typeof v === 'number' || typeof (v as { total?: unknown } | null)?.total === 'number';
  return total(u.inputTokens) && total(u.outputTokens);
}
