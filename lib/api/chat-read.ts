import type { Body } from '../core/body.js';
import { RunNotFoundError, ValidationError } from '../core/errors.js';
import { writerSchema } from '../core/event-base.js';
import type { JsonValue } from '../core/json.js';
import type { RunRef } from '../core/run-ref.js';
import { ChatTranslator, type BodyValues } from './chat-translate.js';
import { eventView } from './run-views.js';
import { MAX_WAIT_SECONDS } from './schemas.js';
import { decodeCursor, encodeCursor, eventItems, factsOf, textItems, type StreamItem, type StreamPosition } from './stream-merge.js';
import { readStream, STREAM_POLL_MS, type StreamDeps } from './stream-read.js';
import type { Caller } from './tenant.js';

/**
 * GET /runs/{runId}/chat: a run's stream (stream-read.ts) as the AI SDK's UI message stream, one
 * assistant message per response (chat-translate.ts). It only reads what GET /runs/{id}/stream
 * reads (the log, the open call's chunks) plus the blobs of large payloads: nothing is written.
 *
 * A chat cursor is `<origin>.<stream cursor>`: where the reader stands in the run's stream, and
 * the seq after which its message's items begin (the turn's user event - 1 while a message is
 * open; the stream position itself when none is). Coming back with it, the state at the cursor is
 * rebuilt by applying the items from `origin` on with the output dropped, then it goes on live.
 */

const CHAT_CURSOR = /^(\d{1,10})\.(\d{1,10}\.\d{1,10}\.\d{1,6}\.(?:-1|\d{1,10}))$/;
export const CHAT_CURSOR_PATTERN = CHAT_CURSOR.source;

export interface ChatPosition {
  origin: number;
  position: StreamPosition;
}

export function encodeChatCursor(p: ChatPosition): string {
  return `${p.origin}.${encodeCursor(p.position)}`;
}

export function decodeChatCursor(cursor: string): ChatPosition | undefined {
  const m = CHAT_CURSOR.exec(cursor);
  const position = m ? decodeCursor(m[2]!) : undefined;
  if (!m || !position || Number(m[1]) > position.seq) return undefined;
  return { origin: Number(m[1]), position };
}

export interface ChatDeps extends StreamDeps {
  /** Reads an offloaded payload (the payload codec's resolve); without it a blob shows as its summary. */
  resolve?(body: Body): Promise<JsonValue>;
}

export interface ChatRequest {
  /** Go on exactly after this cursor (the same message). */
  after?: string;
  /** With `after`: send the cursor's message again from its start (a client rebuilding it). */
  replay?: boolean;
  /** The first turn that starts after this seq (a new message: 0 for the run's first). */
  from?: number;
}

/** What the chat route needs of the run service: the SSE text of a response, undefined when none streams (204). */
export interface ChatService {
  chat?(caller: Caller, runId: string, request: ChatRequest, options: { maxMs: number; signal: AbortSignal }): Promise<AsyncIterable<string> | undefined>;
}

/** Where a chat response starts, its translator caught up to there; `none`: no answer streams (204). */
export type ChatSession = { kind: 'none' } | { kind: 'stream'; run: RunRef; translator: ChatTranslator; at: ChatPosition; values: BodyCache };

/** Payload values for the translator: blobs read ahead of it, once each per response. */
export class BodyCache implements BodyValues {
  private readonly read = new Map<string, unknown>();
  constructor(private readonly resolve?: (body: Body) => Promise<JsonValue>) {}

  value(body: Body | null | undefined): unknown {
    if (!body) return undefined;
    if (body.kind === 'inline') return body.value;
    return this.read.has(body.sha256) ? this.read.get(body.sha256) : `${body.summary}…`;
  }

  /** Read the blobs an event holds (answer text, call arguments, tool output, structured output). */
  async load(event: Record<string, unknown>): Promise<void> {
    const bodies: unknown[] = [event.text, event.output, event.args, ...((event.calls as { args?: unknown }[] | undefined) ?? []).map((c) => c.args)];
    for (const b of bodies) {
      const body = b as Body | undefined;
      if (body?.kind !== 'blob' || this.read.has(body.sha256) || !this.resolve) continue;
      try {
        this.read.set(body.sha256, await this.resolve(body));
      } catch {
        // a blob that cannot be read shows as its summary
      }
    }
  }
}

const RUNNING = new Set(['running', 'waiting']);

/**
 * Where the response starts: after a cursor (caught up to it), at the first turn after `from`, or
 * (neither) at the latest turn, which streams only while the run runs (otherwise, or for no such
 * run, `none`: a page that reconnects before its first message is sent gets nothing to resume).
 */
export async function openChat(deps: ChatDeps, run: RunRef, request: ChatRequest): Promise<ChatSession> {
  const head = await deps.heads.getHead(run);
  // A reconnect (no cursor, no turn) to a run that is not there has nothing to stream, as one to a run that is not running.
  if (!head && request.after === undefined && request.from === undefined) return { kind: 'none' };
  if (!head) throw new RunNotFoundError(run);
  let at: ChatPosition;
  if (request.after !== undefined) {
    const decoded = decodeChatCursor(request.after);
    if (!decoded) throw new ValidationError('invalid cursor', [{ path: 'query.after', message: 'not a chat cursor this endpoint gave out' }]);
    at = request.replay ? { origin: decoded.origin, position: startAt(decoded.origin) } : decoded;
  } else if (request.from !== undefined) {
    at = { origin: request.from, position: startAt(request.from) };
  } else {
    if (!RUNNING.has(head.status)) return { kind: 'none' };
    const turn = await latestTurn(deps, run);
    at = { origin: turn - 1, position: startAt(turn - 1) };
  }
  const values = new BodyCache(deps.resolve?.bind(deps));
  const translator = new ChatTranslator(run.runId, values);
  await catchUp(deps, run, translator, values, at);
  return { kind: 'stream', run, translator, at, values };
}

const startAt = (seq: number): StreamPosition => ({ seq, open: 0, unanswered: 0, index: -1 });

async function latestTurn(deps: ChatDeps, run: RunRef): Promise<number> {
  let turn = 1;
  let afterSeq = 0;
  for (;;) {
    const page = await deps.log.read(run, { afterSeq, limit: 500 });
    for (const raw of page.events) {
      const f = factsOf(raw);
      if (f.type === 'run_started' || f.type === 'user_message') turn = f.seq;
    }
    if (page.nextAfterSeq === undefined) return turn;
    afterSeq = page.nextAfterSeq;
  }
}

/** Apply the items from `origin` up to the cursor with their output dropped. */
async function catchUp(deps: ChatDeps, run: RunRef, translator: ChatTranslator, values: BodyCache, at: ChatPosition): Promise<void> {
  let from = startAt(at.origin);
  while (from.seq < at.position.seq) {
    const page = await deps.log.read(run, { afterSeq: from.seq, limit: 200 });
    const events = page.events.map((raw) => ({ raw, facts: factsOf(raw), view: eventView(raw) })).filter((e) => e.facts.seq <= at.position.seq);
    if (events.length === 0) break;
    const out = eventItems(from, events, Number.MAX_SAFE_INTEGER);
    for (const e of events) await values.load(e.view);
    for (const item of out.items) translator.apply(item);
    from = out.position;
    if (page.nextAfterSeq === undefined) break;
  }
  translator.settle(at.position);
  const { open, index } = at.position;
  if (open > 0 && index >= 0 && deps.stream) {
    const by = writerSchema.safeParse((((await deps.log.readOne(run, open)) ?? {}) as { by?: unknown }).by);
    const chunks = await deps.stream.read(run, { after: { callSeq: open, index: -1 }, limit: index + 1 });
    const text = textItems({ ...at.position, index: -1 }, chunks, by.success ? by.data : undefined, index + 1);
    for (const item of text.items) translator.apply(item);
    if (text.position.index !== index) translator.markPreviewLost();
  }
}

/** One SSE message per chunk; the last of an item's chunks carries the item's cursor as its id. */
function sseGroup(chunks: readonly unknown[], id: string): string {
  return chunks.map((c, i) => `${i === chunks.length - 1 ? `id: ${id}\n` : ''}data: ${JSON.stringify(c)}\n\n`).join('');
}

export interface ChatStreamOptions {
  /** The response ends by then (the client comes back with its last cursor). */
  maxMs: number;
  signal: AbortSignal;
  pollMs?: number;
  limit?: number;
}

/**
 * The SSE text of a chat response from where the session stands: each item's chunks, a comment
 * while nothing is new, until the message finishes, pauses for a person at the log's end, must be
 * replayed, `signal` aborts, the store fails (the client comes back with its cursor) or `maxMs`.
 */
export async function* chatSseText(deps: ChatDeps, session: Extract<ChatSession, { kind: 'stream' }>, options: ChatStreamOptions): AsyncGenerator<string> {
  const { run, translator, values } = session;
  const limit = options.limit ?? 100;
  const ends = deps.clock.now() + options.maxMs;
  let position = session.at.position;
  const cursorAt = (p: StreamPosition) => encodeChatCursor({ origin: translator.turn > 0 ? translator.turn - 1 : p.seq, position: p });
  for (;;) {
    const left = ends - deps.clock.now();
    if (options.signal.aborted || left <= 0) return;
    let page;
    try {
      page = await readStream(deps, run, {
        from: position,
        limit,
        waitMs: Math.min(MAX_WAIT_SECONDS * 1000, left),
        pollMs: options.pollMs ?? STREAM_POLL_MS,
        finished: false,
        signal: options.signal,
      });
    } catch {
      return;
    }
    for (const item of page.items) {
      if (item.type === 'event') await values.load(item.event);
      const before = position;
      const step = translator.apply(item as StreamItem);
      if (step.end === 'cut') {
        // The message ends before this item: the next response starts with it, from a closed state.
        yield sseGroup(step.chunks, encodeChatCursor({ origin: before.seq, position: before }));
        yield 'data: [DONE]\n\n';
        return;
      }
      position = (decodeCursor(item.cursor) ?? position) as StreamPosition;
      const id = cursorAt(position);
      for (const c of step.chunks) if (c.type === 'data-replay') c.data.cursor = id;
      if (step.chunks.length > 0) yield sseGroup(step.chunks, id);
      if (step.end) {
        if (step.end === 'finish') yield 'data: [DONE]\n\n';
        return;
      }
    }
    if (page.items.length < limit && translator.paused) {
      yield sseGroup(translator.pauseChunks(), cursorAt(position));
      return;
    }
    if (page.items.length === 0) yield ': waiting\n\n';
  }
}
