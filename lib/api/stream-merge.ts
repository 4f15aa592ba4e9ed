import type { StreamChunk } from '../ports/run-stream.js';

/**
 * GET /runs/{id}/stream: the run's events and its streamed text as one ordered list of items
 * (docs/guides/streaming.md). Pure: the service reads the log and the stream, this decides what a
 * reader is sent and the cursor after each item.
 *
 * The cursor is where a reader stands: the last event it applied (`seq`), the model call open at
 * that point (`open`: the seq of its reservation, 0 for none), how many reservations in a row went
 * unanswered up to there (`unanswered`: the open call's attempt), and the last text chunk of the
 * open call it applied (`index`, -1 for none). Everything after a cursor follows from it and the
 * log, so a reader that comes back with it gets exactly the items after it.
 */
export interface StreamPosition {
  seq: number;
  open: number;
  unanswered: number;
  index: number;
}

export const START_POSITION: StreamPosition = { seq: 0, open: 0, unanswered: 0, index: -1 };

export type StreamItem =
  | { type: 'event'; cursor: string; event: Record<string, unknown> }
  | { type: 'text'; cursor: string; callSeq: number; attempt: number; index: number; text: string }
  | { type: 'discard'; cursor: string; callSeq: number };

const CURSOR = /^(\d{1,10})\.(\d{1,10})\.(\d{1,6})\.(-1|\d{1,10})$/;
export const CURSOR_PATTERN = CURSOR.source;

export function encodeCursor(p: StreamPosition): string {
  return `${p.seq}.${p.open}.${p.unanswered}.${p.index}`;
}

/** The position a cursor names, or undefined for text that is not one a server gave out. */
export function decodeCursor(cursor: string): StreamPosition | undefined {
  const m = CURSOR.exec(cursor);
  if (!m) return undefined;
  const [seq, open, unanswered, index] = m.slice(1).map(Number) as [number, number, number, number];
  if (open > seq || (open === 0 && index !== -1) || (open > 0 && unanswered === 0)) return undefined;
  return { seq, open, unanswered, index };
}

/** What the merge reads of an event: its seq and type, whether it reserves a model call, its writer. */
export interface EventFacts {
  seq: number;
  type: string;
  /** The event holds a model call's reservation (model_started, or a tool_result carrying one). */
  reserves: boolean;
}

const TERMINAL = new Set(['run_completed', 'run_failed', 'run_cancelled']);

/** The facts the merge needs from a stored event (raw, as the log returns it). */
export function factsOf(raw: unknown): EventFacts {
  const e = (raw ?? {}) as { seq?: unknown; type?: unknown; reservation?: unknown };
  const type = typeof e.type === 'string' ? e.type : 'invalid';
  return { seq: typeof e.seq === 'number' ? e.seq : 0, type, reserves: type === 'model_started' || (type === 'tool_result' && e.reservation !== undefined) };
}

export function isTerminal(facts: EventFacts): boolean {
  return TERMINAL.has(facts.type);
}

/**
 * The items for events read after `from.seq` (in seq order), up to `limit` items. A call left
 * unanswered (model_failed, a new reservation, the run's end) gets a `discard` just before the
 * event that abandons it; a model_response closes its call with no discard: its text is the truth.
 */
export function eventItems(
  from: StreamPosition,
  events: readonly { facts: EventFacts; view: Record<string, unknown> }[],
  limit: number,
): { items: StreamItem[]; position: StreamPosition } {
  const items: StreamItem[] = [];
  let p = { ...from };
  for (const { facts, view } of events) {
    if (facts.seq <= p.seq) continue;
    const abandons = p.open > 0 && facts.type !== 'model_response' && (facts.reserves || facts.type === 'model_failed' || isTerminal(facts));
    if (abandons) {
      if (items.length >= limit) break;
      const dropped = p.open;
      p = { seq: facts.seq - 1, open: 0, unanswered: p.unanswered, index: -1 };
      items.push({ type: 'discard', cursor: encodeCursor(p), callSeq: dropped });
    }
    if (items.length >= limit) break;
    p = after(p, facts);
    items.push({ type: 'event', cursor: encodeCursor(p), event: view });
  }
  return { items, position: p };
}

/** The position once the event is applied (a discard before it, if any, already applied). */
function after(p: StreamPosition, facts: EventFacts): StreamPosition {
  if (facts.reserves) return { seq: facts.seq, open: facts.seq, unanswered: p.unanswered + 1, index: -1 };
  if (facts.type === 'model_response') return { seq: facts.seq, open: 0, unanswered: 0, index: -1 };
  if (facts.type === 'model_failed' || isTerminal(facts)) return { seq: facts.seq, open: 0, unanswered: p.unanswered, index: -1 };
  return { ...p, seq: facts.seq };
}

/**
 * Text items for the call open at `from`, from chunks read after (open, index): only the chunks
 * of that call written by `writer` (the `by` of the reservation's event: a stale worker's chunks
 * are ignored), in index order with no gap (a reader never gets chunk 5 without 4).
 */
export function textItems(
  from: StreamPosition,
  chunks: readonly StreamChunk[],
  writer: { epoch: number; nonce: string } | undefined,
  limit: number,
): { items: StreamItem[]; position: StreamPosition } {
  const items: StreamItem[] = [];
  let p = { ...from };
  if (p.open === 0 || !writer) return { items, position: p };
  for (const c of chunks) {
    if (items.length >= limit) break;
    if (c.callSeq !== p.open || c.writer.epoch !== writer.epoch || c.writer.nonce !== writer.nonce) continue;
    if (c.index !== p.index + 1) break;
    p = { ...p, index: c.index };
    items.push({ type: 'text', cursor: encodeCursor(p), callSeq: c.callSeq, attempt: p.unanswered, index: c.index, text: c.text });
  }
  return { items, position: p };
}
