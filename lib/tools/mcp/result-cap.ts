import { deserializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpError, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * A bound on each message an MCP server sends (in practice: a tool's result), enforced while the
 * bytes arrive, so a server that answers with 30 MiB never has 30 MiB held by the worker. A
 * message over the bound is dropped as it streams in and replaced by a JSON-RPC error for the
 * same request id, which the call turns into an error result (`mcp_result_too_large`): the tool
 * ran, its answer was just too big to use.
 */
export const DEFAULT_MAX_RESULT_BYTES = 1024 * 1024;

/** Implementation-defined JSON-RPC server error range (-32000..-32099); `data` carries the marker. */
export const RESULT_TOO_LARGE_RPC_CODE = -32_090;
const MARKER = 'logbook/result-too-large';

export interface TooLarge {
  limitBytes: number;
  /** Bytes seen before the message was dropped: at least this many were sent. */
  receivedBytes: number;
}

/** The stand-in for a dropped message, addressed to the request it answered. */
function tooLargeResponse(id: string | number, info: TooLarge): JSONRPCMessage {
  return {
    jsonrpc: '2.0',
    id,
    error: { code: RESULT_TOO_LARGE_RPC_CODE, message: `the response exceeded ${info.limitBytes} bytes`, data: { [MARKER]: info } },
  } as JSONRPCMessage;
}

/** The dropped-message stand-in, recognised from the error a request rejects with. */
export function tooLargeOf(error: unknown): TooLarge | undefined {
  if (!(error instanceof McpError) || error.code !== RESULT_TOO_LARGE_RPC_CODE) return undefined;
  const info = (error.data as Record<string, unknown> | undefined)?.[MARKER] as TooLarge | undefined;
  return typeof info?.limitBytes === 'number' && typeof info.receivedBytes === 'number' ? info : undefined;
}

/** Room for the JSON-RPC envelope around a result of `limit` bytes. */
const ENVELOPE_BYTES = 1024;
/** Bytes of an oversized line's start and end kept to find its request id. */
const EDGE_BYTES = 256;

const ID = String.raw`("(?:[^"\\]|\\.){0,128}"|-?\d{1,16})`;
/** `{"jsonrpc":"2.0","id":…` at the start (most implementations) … */
const ID_AT_START = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID}`);
/** … or `,"id":…}` as the last member (the TypeScript SDK writes `{result, jsonrpc, id}`). */
const ID_AT_END = new RegExp(String.raw`,\s*"id"\s*:\s*${ID}\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$`);

function requestIdOf(head: string, tail: string): string | number | undefined {
  const m = ID_AT_START.exec(head) ?? ID_AT_END.exec(tail);
  if (!m) return undefined;
  try {
    return JSON.parse(m[1]!) as string | number;
  } catch {
    return undefined;
  }
}

/**
 * The stdio transport's line buffer with a bound per line: the SDK's keeps a whole line in memory
 * (and rebuilds it on every chunk). A line over the bound is dropped as it arrives, keeping only
 * its first and last bytes to find the request it answers. Same shape as the SDK's ReadBuffer.
 */
export class CappedLineBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  private dropping: { head: Buffer; tail: Buffer; seen: number } | undefined;
  private readonly lines: (Buffer | JSONRPCMessage | Error)[] = [];
  /** The most bytes of one unfinished line held at once (what the bound is measured by). */
  peakBufferedBytes = 0;

  constructor(private readonly limitBytes: number) {}

  append(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(10, start);
      this.take(chunk.subarray(start, newline === -1 ? chunk.length : newline));
      if (newline === -1) return;
      this.endLine();
      start = newline + 1;
    }
  }

  readMessage(): JSONRPCMessage | null {
    const next = this.lines.shift();
    if (next === undefined) return null;
    if (next instanceof Error) throw next;
    if (!Buffer.isBuffer(next)) return next;
    return deserializeMessage(next.toString('utf8').replace(/\r$/, ''));
  }

  clear(): void {
    this.chunks = [];
    this.size = 0;
    this.dropping = undefined;
    this.lines.length = 0;
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.dropping) {
      this.dropping.seen += piece.length;
      this.dropping.tail = Buffer.concat([this.dropping.tail, piece]).subarray(-EDGE_BYTES);
      return;
    }
    if (this.size + piece.length > this.limitBytes + ENVELOPE_BYTES) {
      const held = Buffer.concat([...this.chunks, piece]);
      this.dropping = { head: Buffer.from(held.subarray(0, EDGE_BYTES)), tail: Buffer.from(held.subarray(-EDGE_BYTES)), seen: held.length };
      this.chunks = [];
      this.size = 0;
      return;
    }
    this.chunks.push(piece);
    this.size += piece.length;
    this.peakBufferedBytes = Math.max(this.peakBufferedBytes, this.size);
  }

  private endLine(): void {
    if (this.dropping) {
      const { head, tail, seen } = this.dropping;
      this.dropping = undefined;
      const id = requestIdOf(head.toString('utf8'), tail.toString('utf8'));
      // Without an id the message answers nothing we can name: the transport reports the error and
      // closes, so the calls in flight end as unknown (they may have run).
      this.lines.push(
        id === undefined
          ? new Error(`MCP message of ${seen} bytes exceeded ${this.limitBytes} bytes and names no request`)
          : tooLargeResponse(id, { limitBytes: this.limitBytes, receivedBytes: seen }),
      );
      return;
    }
    if (this.size === 0) return;
    const line = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    this.chunks = [];
    this.size = 0;
    this.lines.push(line);
  }
}

/** The id of the one JSON-RPC request in a POST body, if it holds exactly one. */
function postedRequestId(init: RequestInit | undefined): string | number | undefined {
  if (init?.method !== 'POST' || typeof init.body !== 'string') return undefined;
  try {
    const body = JSON.parse(init.body) as { id?: unknown; method?: unknown };
    return typeof body.method === 'string' && (typeof body.id === 'string' || typeof body.id === 'number') ? body.id : undefined;
  } catch {
    return undefined;
  }
}

/** What the SDK reads of a refusal (into an error message): a few KiB say everything. */
const MAX_ERROR_BODY_BYTES = 4 * 1024;

/**
 * `fetch` for the Streamable HTTP transport with every response body bounded as it streams:
 * - JSON (one response): read up to the bound; over it, the rest is never read (the body is
 *   cancelled) and the stand-in error replaces it;
 * - SSE: events pass through one by one; an event over the bound is dropped as it arrives, the
 *   stand-in follows for the request this stream answers, and the stream ends;
 * - a refusal (4xx/5xx): its first few KiB, for the error message.
 */
export function cappedFetch(limitBytes: number, base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    if (!response.body) return response;
    const headers = new Headers(response.headers);
    headers.delete('content-length');
    const rebuilt = (body: string | Uint8Array | ReadableStream<Uint8Array>) =>
      new Response(body, { status: response.status, statusText: response.statusText, headers });
    if (!response.ok) return rebuilt(await readUpTo(response.body, MAX_ERROR_BODY_BYTES, true));
    const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    const id = postedRequestId(init);
    if (type === 'application/json') {
      const body = await readUpTo(response.body, limitBytes + ENVELOPE_BYTES, false);
      if (body !== undefined) return rebuilt(body);
      if (id === undefined) throw new Error(`MCP response exceeded ${limitBytes} bytes`);
      return rebuilt(JSON.stringify(tooLargeResponse(id, { limitBytes, receivedBytes: limitBytes + ENVELOPE_BYTES + 1 })));
    }
    if (type === 'text/event-stream') return rebuilt(response.body.pipeThrough(sseEventCap(limitBytes, id)));
    return response;
  };
}

/** The body up to `max` bytes: cut there (`cut`), or undefined when it is longer (the rest is never read). */
async function readUpTo(body: ReadableStream<Uint8Array>, max: number, cut: true): Promise<Uint8Array>;
async function readUpTo(body: ReadableStream<Uint8Array>, max: number, cut: false): Promise<Uint8Array | undefined>;
async function readUpTo(body: ReadableStream<Uint8Array>, max: number, cut: boolean): Promise<Uint8Array | undefined> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return Buffer.concat(chunks);
    if (size + value.length > max) {
      await reader.cancel().catch(() => undefined);
      return cut ? Buffer.concat([...chunks, value]).subarray(0, max) : undefined;
    }
    chunks.push(value);
    size += value.length;
  }
}

/** The index just past the first blank line (an SSE event's end) in `buf` at or after `from`, or -1. */
function eventEnd(buf: Buffer, from = 0): number {
  for (let i = from; i < buf.length; i++) {
    if (buf[i] !== 10 && buf[i] !== 13) continue;
    // A line break (\n, \r\n or \r) followed by another one ends the event.
    const first = buf[i] === 13 && buf[i + 1] === 10 ? 2 : 1;
    const j = i + first;
    if (buf[j] === 10) return j + 1;
    if (buf[j] === 13) return buf[j + 1] === 10 ? j + 2 : j + 1;
    i = j - 1;
  }
  return -1;
}

function sseEventCap(limitBytes: number, id: string | number | undefined): TransformStream<Uint8Array, Uint8Array> {
  let pending = Buffer.alloc(0);
  let over = false;
  return new TransformStream({
    transform(chunk, controller) {
      if (over) return;
      // Rescan only the last few bytes already seen (a break may straddle chunks), not the whole event.
      const from = Math.max(0, pending.length - 3);
      pending = Buffer.concat([pending, chunk]);
      for (let end = eventEnd(pending, from); end !== -1; end = eventEnd(pending)) {
        controller.enqueue(pending.subarray(0, end));
        pending = pending.subarray(end);
      }
      if (pending.length <= limitBytes + ENVELOPE_BYTES) return;
      over = true;
      const receivedBytes = pending.length;
      pending = Buffer.alloc(0);
      if (id === undefined) return controller.error(new Error(`MCP event exceeded ${limitBytes} bytes`));
      const message = tooLargeResponse(id, { limitBytes, receivedBytes });
      controller.enqueue(Buffer.from(`event: message\ndata: ${JSON.stringify(message)}\n\n`));
      // Ends the stream: its upstream is cancelled, so the rest of the event is never read.
      controller.terminate();
    },
  });
}
