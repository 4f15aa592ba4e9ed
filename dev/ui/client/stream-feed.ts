import type { EventPage, LogEvent } from './types.js';

/**
 * What the run page follows: `GET /runs/{id}/stream` (the log's events with the streamed text of a
 * model call still running, in order, behind one opaque cursor), or, from an API that has no such
 * route, the log alone through `GET /runs/{id}/events`. No DOM here: unit tests drive it with a
 * fake fetch.
 */
export type StreamItem =
  | { type: 'event'; cursor: string; event: LogEvent }
  | { type: 'text'; cursor: string; callSeq: number; attempt: number; index: number; text: string }
  | { type: 'discard'; cursor: string; callSeq: number };

export interface StreamPage {
  items: StreamItem[];
  next: string;
  done: boolean;
}

export interface FeedPage {
  items: StreamItem[];
  /** The events among the items, in order. */
  events: LogEvent[];
  /** A full page: ask again at once rather than wait. */
  more: boolean;
  /** The run is finished and everything was served. */
  done: boolean;
}

/** How the feed reads: the API client's requests (api.ts), replaced by fakes in tests. */
export interface FeedSource {
  stream(runId: string, query: { after?: string; waitSeconds: number; limit: number }): Promise<StreamPage>;
  events(runId: string, after: number, options: { waitSeconds?: number; limit?: number }): Promise<EventPage>;
}

/** The first wait after a lost connection, and the longest: doubled each failure in between. */
export const RECONNECT_FIRST_MS = 500;
export const RECONNECT_MAX_MS = 15_000;
export const PAGE_LIMIT = 500;

/** The delay before reconnect number `failures` (1-based): 0.5 s, 1 s, 2 s, … capped at 15 s. */
export function reconnectDelay(failures: number): number {
  return Math.min(RECONNECT_MAX_MS, RECONNECT_FIRST_MS * 2 ** Math.max(0, Math.min(failures - 1, 20)));
}

/** An API error that says the route does not exist (an API from before the stream), not the run. */
function routeMissing(error: unknown): boolean {
  const e = error as { status?: unknown; code?: unknown } | null;
  return !!e && (e.status === 404 || e.status === 405) && e.code !== 'run_not_found';
}

export class RunFeed {
  /** `events` once the API answered that it has no stream route. */
  mode: 'stream' | 'events' = 'stream';
  /** The cursor of the last page applied: a reconnect resumes right after it. */
  cursor: string | undefined;
  private afterSeq = 0;
  private failures = 0;

  constructor(
    private readonly runId: string,
    private readonly source: FeedSource,
  ) {}

  /**
   * The next page after everything already returned (waitSeconds > 0: a long poll). Throws when
   * the API cannot be reached; call `retryDelay()` for how long to wait before calling again.
   */
  async next(waitSeconds = 0): Promise<FeedPage> {
    if (this.mode === 'stream') {
      try {
        const page = await this.source.stream(this.runId, { ...(this.cursor !== undefined ? { after: this.cursor } : {}), waitSeconds, limit: PAGE_LIMIT });
        this.failures = 0;
        // A page with nothing in it may still move the cursor (items the server skipped).
        this.cursor = page.next || this.cursor;
        const events = page.items.flatMap((i) => (i.type === 'event' ? [i.event] : []));
        const last = events.at(-1);
        if (last) this.afterSeq = last.seq;
        return { items: page.items, events, more: !page.done && page.items.length >= PAGE_LIMIT, done: page.done };
      } catch (error) {
        if (!routeMissing(error)) throw error;
        this.mode = 'events';
      }
    }
    const page = await this.source.events(this.runId, this.afterSeq, { ...(waitSeconds > 0 ? { waitSeconds } : {}), limit: PAGE_LIMIT });
    this.failures = 0;
    const last = page.events.at(-1);
    if (last) this.afterSeq = last.seq;
    return {
      items: page.events.map((event) => ({ type: 'event' as const, cursor: String(event.seq), event })),
      events: page.events,
      more: page.next !== undefined,
      done: false,
    };
  }

  /** How long to wait before the next try after a failure: exponential, capped; reset by a success. */
  retryDelay(): number {
    this.failures++;
    return reconnectDelay(this.failures);
  }
}
