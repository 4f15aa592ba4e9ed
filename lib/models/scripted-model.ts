import type { JsonValue } from '../core/json.js';
import type { ModelAttachment, ModelRequest, ModelResponse } from '../core/messages.js';
import type { ModelSettings } from '../core/model-settings.js';
import { SystemClock } from '../support/system-clock.js';
import type { Clock } from '../ports/clock.js';
import type { ModelCallOptions, ModelClient, ModelResolver } from '../ports/model-client.js';
import { TextSink } from './model-stream.js';
import { plural } from '../core/plural.js';

export interface ScriptedTurn {
  text?: string;
  calls?: { name: string; args: JsonValue; providerId?: string; argsError?: string }[];
}

/** A turn, or a function of the request for replies that depend on tool results. */
export type ScriptStep = ScriptedTurn | ((request: ModelRequest) => ScriptedTurn);

export interface ScriptedModelOptions {
  /**
   * The answer to a context policy's summary call (request.purpose `summary`). Default: a short
   * text that is a pure function of the request, so a repeated summary call gets the same one.
   */
  summary?: (request: ModelRequest) => string;
  /** How a streamed call (onText set) hands out its text. Default: DEFAULT_SCRIPTED_PACE, its delay from SCRIPTED_PACE_ENV when set. */
  pace?: Partial<ScriptedPace>;
  /** Waits between chunks. Default: the system clock; a test passes its own to stay instant. */
  clock?: Clock;
}

export interface ScriptedPace {
  /**
   * Characters per chunk, at least: a chunk ends at the first whitespace after that many, so
   * words stay whole (a run of text with no whitespace is cut at twice the size).
   */
  chunkChars: number;
  /** Wait between two chunks, through the clock (0: all chunks at once). */
  delayMs: number;
}

/**
 * About three words a chunk, all at once: tests that stream stay as fast as tests that do not.
 * `logbook dev` and `npm start` set SCRIPTED_PACE_ENV to 40 (ms between chunks) for their workers,
 * so there the answer is seen being written.
 */
export const DEFAULT_SCRIPTED_PACE: ScriptedPace = { chunkChars: 16, delayMs: 0 };

/** Milliseconds between two chunks of every ScriptedModel made without `pace.delayMs`. */
export const SCRIPTED_PACE_ENV = 'LOGBOOK_SCRIPTED_PACE_MS';

/** The local stack's pace: visible, and still a 200-character answer in about half a second. */
export const LOCAL_SCRIPTED_PACE_MS = 40;

function envDelayMs(): number | undefined {
  const raw = typeof process === 'undefined' ? undefined : process.env[SCRIPTED_PACE_ENV];
  const ms = raw === undefined || raw.trim() === '' ? NaN : Number(raw);
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

/**
 * A deterministic model: the reply is chosen by how many assistant turns the conversation already
 * holds (request.turns when a context policy left some out of the request), so a resumed run gets
 * exactly the reply the uninterrupted one got. Token usage is a pure function of the text, so
 * budgets replay identically too.
 */
export class ScriptedModel implements ModelClient {
  calls = 0;
  /** The settings each call was sent (undefined: none pinned), in call order: what a test asserts. */
  readonly settings: (ModelSettings | undefined)[] = [];
  private readonly pace: ScriptedPace;
  private readonly clock: Clock;
  /**
   * The attachments each call was sent (every user message's, in order; empty: none), in call
   * order: a test asserts the parts and their bytes (`Buffer.from(a.data, 'base64')`).
   */
  readonly attachments: ModelAttachment[][] = [];
  constructor(
    private readonly script: ScriptStep[],
    private readonly options: ScriptedModelOptions = {},
  ) {
    const delayMs = envDelayMs();
    this.pace = { ...DEFAULT_SCRIPTED_PACE, ...(delayMs !== undefined ? { delayMs } : {}), ...options.pace };
    this.clock = options.clock ?? new SystemClock();
  }

  async complete(request: ModelRequest, options: ModelCallOptions): Promise<ModelResponse> {
    const response = this.reply(request, options);
    if (options.onText) await this.stream(response.text, options.onText, options.signal);
    return response;
  }

  /** The text in chunks at the configured pace; an abort stops it between two chunks. */
  private async stream(text: string, onText: (delta: string) => void, signal: AbortSignal): Promise<void> {
    const sink = new TextSink(onText);
    for (const [i, chunk] of scriptedChunks(text, this.pace.chunkChars).entries()) {
      if (i > 0 && this.pace.delayMs > 0) await this.clock.sleep(this.pace.delayMs, signal);
      if (signal.aborted) throw signal.reason;
      sink.emit(chunk);
    }
  }

  private reply(request: ModelRequest, options: ModelCallOptions): ModelResponse {
    if (options.signal.aborted) throw options.signal.reason;
    this.calls++;
    this.settings.push(request.settings);
    this.attachments.push(request.messages.flatMap((m) => (m.role === 'user' ? (m.attachments ?? []) : [])));
    const turn = request.turns ?? request.messages.filter((m) => m.role === 'assistant').length;
    const step = this.script[Math.min(turn, this.script.length - 1)];
    const reply =
      request.purpose === 'summary'
        ? { text: this.options.summary?.(request) ?? scriptedSummary(request) }
        : typeof step === 'function'
          ? step(request)
          : (step ?? { text: 'done' });
    const calls = (reply.calls ?? []).map((c, i) => ({
      // Like vLLM and Ollama, reuse ids across turns: Logbook's callId must not depend on them.
      providerId: c.providerId ?? `call_${i}`,
      name: c.name,
      args: c.args,
      ...(c.argsError !== undefined ? { argsError: c.argsError } : {}),
    }));
    // Attachments count by their reference, not their base64 (a model charges an image by its
    // pixels, not its bytes): usage stays small and the same for the same request.
    const inputChars = request.system.length + JSON.stringify(request.messages.map(withoutAttachmentData)).length;
    const outputChars = (reply.text ?? '').length + JSON.stringify(calls).length;
    return {
      text: reply.text ?? '',
      calls,
      usage: { inputTokens: Math.ceil(inputChars / 4), outputTokens: Math.min(request.maxOutputTokens, Math.ceil(outputChars / 4)) },
      stopReason: calls.length > 0 ? 'tool_use' : 'end_turn',
    };
  }
}

/**
 * Splits text into chunks that concatenate back to it: each ends after the first run of
 * whitespace once it holds `size` characters, or at `2 * size` when no whitespace comes (never
 * inside a surrogate pair, so every chunk is well-formed text on its own).
 */
export function scriptedChunks(text: string, size: number): string[] {
  const min = Math.max(1, Math.floor(size));
  const chunks: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + min);
    const hard = Math.min(text.length, start + 2 * min);
    while (end < hard && !/\s/.test(text[end - 1]!)) end++;
    while (end < text.length && /\s/.test(text[end]!)) end++;
    if (end < text.length && /[\uD800-\uDBFF]/.test(text[end - 1]!)) end++;
    chunks.push(text.slice(start, end));
    start = end;
  }
  return chunks;
}

function withoutAttachmentData(m: ModelRequest['messages'][number]): unknown {
  return m.role === 'user' && m.attachments ? { ...m, attachments: m.attachments.map(({ data: _data, ...ref }) => ref) } : m;
}

/** The default summary: how many transcript lines it read and the last of them, shortened. */
function scriptedSummary(request: ModelRequest): string {
  const first = request.messages[0];
  const lines = first && first.role === 'user' ? first.content.split('\n') : [];
  return `scripted summary of ${plural(lines.length, 'line')}; last: ${(lines.at(-1) ?? '').slice(0, 80)}`;
}

/** Resolves a fixed set of model ids; any other id is "gone" and the run parks. */
export class StaticModelResolver implements ModelResolver {
  constructor(private readonly clients: Record<string, ModelClient>) {}
  resolve(modelId: string): ModelClient | undefined {
    return this.clients[modelId];
  }
}
