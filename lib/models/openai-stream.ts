import { z } from 'zod';
import { ModelError } from '../core/errors.js';
import type { ModelResponse } from '../core/messages.js';
import { MODEL_ERROR, TransientModelFailure, modelError } from './model-errors.js';
import { brokenStream, untilAborted, type TextSink } from './model-stream.js';
import { fromChatCompletion } from './openai-wire.js';
import { plural } from '../core/plural.js';

/**
 * Longest Server-Sent Event accepted (its lines together, in characters). One chunk of a stream
 * carries a few tokens, or at most one tool call's whole arguments (Ollama sends them at once);
 * a server that never ends a line must not make the worker hold an unbounded buffer.
 */
export const MAX_SSE_EVENT_CHARS = 4 * 1024 * 1024;

/** Most characters one streamed answer may carry in all: far above any model's output limit. */
export const MAX_STREAM_CHARS = 64 * 1024 * 1024;

const PROVIDER = 'openai-compatible';

/**
 * The `data` of each Server-Sent Event in a byte stream (WHATWG rules: lines end in LF, CRLF or
 * CR; `data:` lines of one event join with LF; a blank line ends the event; comments and other
 * fields are skipped). Chunks may split anywhere, even inside a UTF-8 character.
 */
export async function* sseData(bytes: AsyncIterable<Uint8Array>, limits = { event: MAX_SSE_EVENT_CHARS, total: MAX_STREAM_CHARS }): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8');
  let pending = ''; // an unfinished line
  let data: string[] = []; // the current event's data lines
  let eventChars = 0;
  let total = 0;
  let skipLf = false; // the previous chunk ended in CR: an LF first in this one is the same line break
  const tooLong = (what: string, limit: number) =>
    modelError(MODEL_ERROR.invalidResponse, `${PROVIDER}: the stream's ${what} is longer than ${plural(limit, 'character')}`);

  function* lines(text: string): Generator<string> {
    let start = 0;
    if (skipLf && text.startsWith('\n')) start = 1;
    skipLf = false;
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      const line = pending + text.slice(start, i);
      pending = '';
      if (c === 13) {
        if (i + 1 === text.length) skipLf = true;
        else if (text.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
      yield line;
    }
    pending += text.slice(start);
    if (pending.length + eventChars > limits.event) throw tooLong('event', limits.event);
  }

  function* take(line: string): Generator<string> {
    if (line === '') {
      if (data.length > 0) yield data.join('\n');
      data = [];
      eventChars = 0;
      return;
    }
    if (!line.startsWith('data')) return; // comments (`: keep-alive`), event:, id:, retry:
    const value = line === 'data' ? '' : line.startsWith('data:') ? line.slice(line.startsWith('data: ') ? 6 : 5) : undefined;
    if (value === undefined) return; // a field named e.g. `database`
    data.push(value);
    eventChars += value.length + 1;
    if (eventChars > limits.event) throw tooLong('event', limits.event);
  }

  for await (const chunk of bytes) {
    const text = decoder.decode(chunk, { stream: true });
    total += text.length;
    if (total > limits.total) throw tooLong('answer', limits.total);
    for (const line of lines(text)) yield* take(line);
  }
  for (const line of lines(decoder.decode())) yield* take(line);
  // A server that closes without the final blank line still delivered its last event.
  if (pending !== '') yield* take(pending);
  pending = '';
  yield* take('');
}

const streamedCallSchema = z.object({
  index: z.number().int().nonnegative().nullish(),
  id: z.string().nullish(),
  function: z
    .object({
      name: z.string().nullish(),
      arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
    })
    .nullish(),
});

/** One `chat.completion.chunk`: only the fields Logbook reads. */
const chunkSchema = z.object({
  choices: z
    .array(
      z.object({
        index: z.number().int().nullish(),
        delta: z
          .object({
            content: z.string().nullish(),
            refusal: z.string().nullish(),
            tool_calls: z.array(streamedCallSchema).nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: z.unknown().optional(),
});

interface CallParts {
  id?: string;
  name: string;
  arguments: string | Record<string, unknown> | undefined;
}

/**
 * Reads a `stream: true` Chat Completions answer: text deltas go to the sink as they arrive, and
 * the pieces are put back together into the JSON the same server would have answered without
 * streaming, which `fromChatCompletion` then reads, so both paths give the same ModelResponse.
 */
export async function readChatCompletionStream(body: AsyncIterable<Uint8Array>, sink: TextSink, signal: AbortSignal): Promise<ModelResponse> {
  let content: string | null = null;
  let refusal: string | null = null;
  const calls: CallParts[] = [];
  const byIndex = new Map<number, CallParts>();
  let finishReason: string | null = null;
  let usage: unknown;
  let done = false;
  let chunks = 0;

  try {
    for await (const data of untilAborted(sseData(body), signal)) {
      if (data.trim() === '[DONE]') {
        done = true;
        break;
      }
      let json: unknown;
      try {
        json = JSON.parse(data);
      } catch {
        throw modelError(MODEL_ERROR.invalidResponse, `${PROVIDER}: stream chunk ${chunks + 1} is not JSON: ${data.slice(0, 200)}`);
      }
      chunks++;
      if (typeof json === 'object' && json !== null && 'error' in json && (json as { error: unknown }).error) {
        throw midStreamError((json as { error: unknown }).error);
      }
      const parsed = chunkSchema.safeParse(json);
      if (!parsed.success) throw modelError(MODEL_ERROR.invalidResponse, `${PROVIDER}: stream chunk ${chunks} has an unexpected shape`);
      if (parsed.data.usage !== undefined && parsed.data.usage !== null) usage = parsed.data.usage;
      // The non-streaming path reads choices[0]; with `n` > 1 the other choices are ignored alike.
      const choice = parsed.data.choices?.find((c) => (c.index ?? 0) === 0);
      if (!choice) continue;
      if (choice.finish_reason) finishReason = choice.finish_reason;
      const delta = choice.delta;
      if (!delta) continue;
      if (delta.content) {
        content = (content ?? '') + delta.content;
        sink.emit(delta.content);
      }
      if (typeof delta.refusal === 'string') refusal = (refusal ?? '') + delta.refusal;
      for (const [position, part] of (delta.tool_calls ?? []).entries()) {
        let call = part.index === null || part.index === undefined ? undefined : byIndex.get(part.index);
        if (!call && (part.index === null || part.index === undefined)) {
          // No index (a few servers): a new id, or the first call of this chunk with no call yet, starts a call.
          const last = calls.at(-1);
          call = last && (!part.id || part.id === last.id) && position === 0 ? last : undefined;
        }
        if (!call) {
          call = { name: '', arguments: undefined };
          calls.push(call);
          if (part.index !== null && part.index !== undefined) byIndex.set(part.index, call);
        }
        if (part.id && !call.id) call.id = part.id;
        if (part.function?.name && !call.name) call.name = part.function.name;
        const args = part.function?.arguments;
        if (typeof args === 'string') call.arguments = typeof call.arguments === 'string' ? call.arguments + args : args;
        else if (args) call.arguments = args;
      }
    }
  } catch (error) {
    if (error instanceof TransientModelFailure || signal.aborted || error instanceof ModelError) throw error;
    // The body failed to read: the connection was reset or closed mid-answer.
    throw brokenStream(PROVIDER, `after ${plural(chunks, 'chunk')}`, error);
  }
  // Without `[DONE]` the answer is whole only if its end (finish reason) and usage both came.
  if (!done && (finishReason === null || usage === undefined)) throw brokenStream(PROVIDER, `after ${plural(chunks, 'chunk')}: no [DONE]`);
  // Only a refusal: the answer's text is the refusal, as fromChatCompletion reads it.
  if (content === null && refusal !== null) sink.emit(refusal);
  const ordered = [...calls].sort((a, b) => indexOf(a, byIndex) - indexOf(b, byIndex));
  return fromChatCompletion({
    choices: [
      {
        message: {
          content,
          refusal,
          tool_calls:
            ordered.length === 0
              ? null
              : ordered.map((c) => ({ id: c.id ?? null, type: 'function', function: { name: c.name, arguments: c.arguments ?? null } })),
        },
        finish_reason: finishReason,
      },
    ],
    usage,
  });
}

/** Calls with an index sort by it; calls without one keep their arrival order after them. */
function indexOf(call: CallParts, byIndex: Map<number, CallParts>): number {
  for (const [index, c] of byIndex) if (c === call) return index;
  return Number.MAX_SAFE_INTEGER;
}

/**
 * `data: {"error": {...}}` after a 200: the server failed while answering (overloaded, a worker
 * crash). Worth another attempt, except out of credit, which waiting does not fix.
 */
function midStreamError(error: unknown): Error {
  const obj = (typeof error === 'object' && error !== null ? error : { message: String(error) }) as Record<string, unknown>;
  const message = typeof obj.message === 'string' ? obj.message : JSON.stringify(error).slice(0, 500);
  const code = typeof obj.code === 'string' ? obj.code : typeof obj.type === 'string' ? obj.type : undefined;
  const summary = `error in the stream${code ? ` (${code})` : ''}: ${message}`;
  if (code === 'insufficient_quota') return modelError(MODEL_ERROR.quotaExhausted, `${PROVIDER}: ${summary}`);
  return new TransientModelFailure(code === 'rate_limit_exceeded' ? 'rate_limited' : 'unavailable', summary);
}
