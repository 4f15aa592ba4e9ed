import { RunNotFoundError, ValidationError } from '../core/errors.js';
import { writerSchema } from '../core/event-base.js';
import type { EngineDeps } from '../engine/engine.js';
import { TERMINAL_STATUSES } from '../ports/run-heads.js';
import { type RunRef } from '../core/run-ref.js';
import { pollDelayMs } from './long-poll.js';
import { eventView } from './run-views.js';
import {
  decodeCursor,
  eventItems,
  factsOf,
  isTerminal,
  textItems,
  encodeCursor,
  START_POSITION,
  type StreamItem,
  type StreamPosition,
} from './stream-merge.js';

/**
 * How soon a waiting stream request first reads again while nothing is new: each pass is one
 * consistent Query of the log and, while a model call is open, one of its chunks (each returning
 * nothing costs half a read unit). 100 ms keeps a chunk's way from the model to a reader under
 * the publisher's 250 ms batching plus a tenth of a second: a reader that was just served (a
 * chunk comes every 250 ms while a call streams) starts again from here. While passes find
 * nothing the wait doubles up to POLL_MAX_MS (long-poll.ts): a reader of a quiet run makes about
 * 24 passes in a 20-second wait, not 200.
 */
export const STREAM_POLL_MS = 100;

export interface StreamPage {
  items: StreamItem[];
  next: string;
  done: boolean;
}

export interface StreamReadOptions {
  from: StreamPosition;
  limit: number;
  /** How long to wait for a first item; 0 reads once. */
  waitMs: number;
  /** The first wait between passes, doubling while nothing comes up to `maxPollMs` (default POLL_MAX_MS). */
  pollMs: number;
  maxPollMs?: number;
  /** The run was already finished when the request came: no wait, and `done` once all is served. */
  finished: boolean;
  signal?: AbortSignal;
  /** Writers of reservation events already read (seq → `by`), so a pass does not read them again. */
  writers?: Map<number, { epoch: number; nonce: string } | undefined>;
  /** Check on the first pass that the log has the cursor's event (refused naming this field otherwise). */
  checkCursor?: string;
}

export type StreamDeps = Pick<EngineDeps, 'log' | 'heads' | 'clock' | 'stream'>;

/**
 * GET /runs/{id}/stream for a run of the caller's tenant (RunNotFoundError for any other):
 * the query's cursor checked, the wait skipped for a finished run.
 */
export async function streamPage(
  deps: StreamDeps,
  run: RunRef,
  query: { after?: string; limit: number; waitSeconds?: number },
  options: { pollMs?: number; maxPollMs?: number; signal?: AbortSignal; cursorField?: string } = {},
): Promise<StreamPage> {
  const head = await deps.heads.getHead(run);
  if (!head) throw new RunNotFoundError(run);
  const field = options.cursorField ?? 'query.after';
  const from = query.after === undefined ? START_POSITION : decodeCursor(query.after);
  if (!from) throw new ValidationError('invalid cursor', [{ path: field, message: 'not a cursor this endpoint gave out' }]);
  const writers = new Map<number, { epoch: number; nonce: string } | undefined>();
  if (from.open > 0 && from.open !== from.seq) {
    const opened = await deps.log.readOne(run, from.open);
    if (opened === undefined || !factsOf(opened).reserves) throw cursorRefused(field, `event ${from.open} of the run's log opens no model call`);
    writers.set(from.open, writerOf(opened));
  }
  return readStream(deps, run, {
    from,
    limit: query.limit,
    waitMs: (query.waitSeconds ?? 0) * 1000,
    pollMs: options.pollMs ?? STREAM_POLL_MS,
    ...(options.maxPollMs !== undefined ? { maxPollMs: options.maxPollMs } : {}),
    finished: TERMINAL_STATUSES.has(head.status),
    writers,
    checkCursor: field,
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

/**
 * A cursor must name a place this run's log has: the event it stands after exists (the first
 * pass reads from that event on, so this costs no request of its own), and the call it has open
 * is an event that reserves one. Otherwise a made-up cursor past the log's end would read nothing
 * after it and, on a finished run, be told `done`: the reader would believe it had seen the
 * whole run.
 */
function cursorRefused(field: string, why: string): ValidationError {
  return new ValidationError('invalid cursor', [{ path: field, message: `${why}: not a cursor given out for this run` }]);
}

/**
 * One page of the run's stream (stream-merge.ts): the events after the cursor and, when the log
 * has no more and a model call is open, that call's chunks; while there is nothing and the wait
 * is not over, sleep and read again.
 */
export async function readStream(deps: Pick<EngineDeps, 'log' | 'clock' | 'stream'>, run: RunRef, options: StreamReadOptions): Promise<StreamPage> {
  const deadline = deps.clock.now() + (options.finished ? 0 : options.waitMs);
  const writers = options.writers ?? new Map<number, { epoch: number; nonce: string } | undefined>();
  for (let empty = 1; ; empty++) {
    const page = await readOnce(deps, run, options, writers, empty === 1 ? options.checkCursor : undefined);
    const left = deadline - deps.clock.now();
    if (page.items.length > 0 || page.done || left <= 0 || options.signal?.aborted) return page;
    try {
      await deps.clock.sleep(Math.min(pollDelayMs(empty, options.pollMs, options.maxPollMs), left), options.signal);
    } catch {
      return page; // the client left
    }
  }
}

async function readOnce(
  deps: Pick<EngineDeps, 'log' | 'clock' | 'stream'>,
  run: RunRef,
  options: StreamReadOptions,
  writers: Map<number, { epoch: number; nonce: string } | undefined>,
  checkCursor?: string,
): Promise<StreamPage> {
  const { from, limit } = options;
  // Checking: from the cursor's own event on (one more), which must be there. eventItems skips
  // it (it is not after the cursor); it still counts for `ended` and the writers.
  const check = checkCursor !== undefined && from.seq > 0;
  const read = await deps.log.read(run, check ? { afterSeq: from.seq - 1, limit: limit + 1 } : { afterSeq: from.seq, limit });
  const events = read.events.map((raw) => ({ raw, facts: factsOf(raw), view: eventView(raw) }));
  if (check) {
    const at = events[0]?.facts;
    if (at?.seq !== from.seq) throw cursorRefused(checkCursor, `the run's log has no event ${from.seq}`);
    if (from.open === from.seq && !at.reserves) throw cursorRefused(checkCursor, `event ${from.open} of the run's log opens no model call`);
  }
  for (const e of events) if (e.facts.reserves) writers.set(e.facts.seq, writerOf(e.raw));
  const out = eventItems(from, events, limit);
  const complete = read.nextAfterSeq === undefined && out.position.seq >= (events.at(-1)?.facts.seq ?? 0);
  let items = out.items;
  let position = out.position;
  // Chunks only once the log is read to its end: a call answered further on needs none.
  if (complete && position.open > 0 && deps.stream && items.length < limit) {
    if (!writers.has(position.open)) writers.set(position.open, writerOf(await deps.log.readOne(run, position.open)));
    const chunks = await deps.stream.read(run, { after: { callSeq: position.open, index: position.index }, limit: limit - items.length });
    const text = textItems(position, chunks, writers.get(position.open), limit - items.length);
    items = [...items, ...text.items];
    position = text.position;
  }
  const ended = options.finished || events.some((e) => isTerminal(e.facts) && e.facts.seq <= position.seq);
  return { items, next: encodeCursor(position), done: complete && ended };
}

function writerOf(raw: unknown): { epoch: number; nonce: string } | undefined {
  const parsed = writerSchema.safeParse((raw as { by?: unknown } | undefined)?.by);
  return parsed.success ? parsed.data : undefined;
}
