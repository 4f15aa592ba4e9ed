// The run page's feed against a fake API: it follows /runs/{id}/stream with the cursor the last page
// gave (so a reconnect after a network error resumes exactly there), says when to ask again at once,
// waits longer after each failure in a row up to a cap, and falls back to /events (by seq) when the
// API has no stream route; a missing run is not mistaken for a missing route.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../dev/ui/client/api.js';
import { PAGE_LIMIT, RECONNECT_MAX_MS, RunFeed, reconnectDelay, type FeedSource, type StreamPage } from '../../../dev/ui/client/stream-feed.js';
import type { EventPage, LogEvent } from '../../../dev/ui/client/types.js';

const ev = (seq: number): LogEvent => ({ seq, type: 'model_started', at: seq * 10 });

function fake(pages: (StreamPage | Error)[], events: (EventPage | Error)[] = []) {
  const streamCalls: { after?: string; waitSeconds: number }[] = [];
  const eventCalls: { after: number; waitSeconds?: number }[] = [];
  const source: FeedSource = {
    stream(_runId, query) {
      streamCalls.push({ ...(query.after !== undefined ? { after: query.after } : {}), waitSeconds: query.waitSeconds });
      const next = pages.shift();
      if (!next) throw new Error('no more pages');
      return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
    },
    events(_runId, after, options) {
      eventCalls.push({ after, ...(options.waitSeconds ? { waitSeconds: options.waitSeconds } : {}) });
      const next = events.shift();
      if (!next) throw new Error('no more event pages');
      return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
    },
  };
  return { source, streamCalls, eventCalls };
}

describe('the run feed', () => {
  it('passes back the cursor it was given, so a reconnect after a lost connection resumes exactly there', async () => {
    const { source, streamCalls } = fake([
      {
        items: [
          { type: 'event', cursor: 'c1', event: ev(1) },
          { type: 'text', cursor: 'c2', callSeq: 1, attempt: 1, index: 0, text: 'Hi' },
        ],
        next: 'c2',
        done: false,
      },
      new ApiError(0, 'unreachable', 'the API did not answer (network)'),
      new ApiError(502, 'http_error', 'HTTP 502'),
      { items: [{ type: 'text', cursor: 'c3', callSeq: 1, attempt: 1, index: 1, text: '!' }], next: 'c3', done: false },
      { items: [], next: 'c3', done: true },
    ]);
    const feed = new RunFeed('r', source);
    const first = await feed.next();
    expect(first.events.map((e) => e.seq)).toEqual([1]);
    expect(first.more).toBe(false);
    await expect(feed.next(20)).rejects.toThrow('did not answer');
    expect(feed.retryDelay()).toBe(500);
    await expect(feed.next(20)).rejects.toThrow('502');
    expect(feed.retryDelay()).toBe(1_000);
    const third = await feed.next(20);
    expect(third.items).toEqual([{ type: 'text', cursor: 'c3', callSeq: 1, attempt: 1, index: 1, text: '!' }]);
    // A success resets the backoff.
    expect(feed.retryDelay()).toBe(500);
    expect((await feed.next(20)).done).toBe(true);
    expect(streamCalls).toEqual([
      { waitSeconds: 0 },
      { after: 'c2', waitSeconds: 20 },
      { after: 'c2', waitSeconds: 20 },
      { after: 'c2', waitSeconds: 20 },
      { after: 'c3', waitSeconds: 20 },
    ]);
  });

  it('asks again at once after a full page', async () => {
    const full = Array.from({ length: PAGE_LIMIT }, (_, i) => ({ type: 'event' as const, cursor: `c${i + 1}`, event: ev(i + 1) }));
    const { source } = fake([{ items: full, next: `c${PAGE_LIMIT}`, done: false }]);
    expect((await new RunFeed('r', source).next()).more).toBe(true);
  });

  it('falls back to the log by seq when the API has no stream route, and remembers it', async () => {
    const { source, streamCalls, eventCalls } = fake(
      [new ApiError(404, 'not_found', 'no route GET /runs/r/stream')],
      [
        { runId: 'r', events: [ev(1), ev(2)], next: 2 },
        { runId: 'r', events: [ev(3)] },
      ],
    );
    const feed = new RunFeed('r', source);
    const first = await feed.next();
    expect(feed.mode).toBe('events');
    expect(first).toMatchObject({ more: true, done: false });
    expect(first.items.map((i) => i.type)).toEqual(['event', 'event']);
    const second = await feed.next(20);
    expect(second.events.map((e) => e.seq)).toEqual([3]);
    expect(streamCalls).toHaveLength(1);
    expect(eventCalls).toEqual([{ after: 0 }, { after: 2, waitSeconds: 20 }]);
  });

  it('does not take a missing run for a missing route', async () => {
    const { source } = fake([new ApiError(404, 'run_not_found', 'run r not found')]);
    const feed = new RunFeed('r', source);
    await expect(feed.next()).rejects.toThrow('not found');
    expect(feed.mode).toBe('stream');
  });

  it('backs off exponentially, capped', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 100].map(reconnectDelay)).toEqual([500, 1_000, 2_000, 4_000, 8_000, RECONNECT_MAX_MS, RECONNECT_MAX_MS, RECONNECT_MAX_MS]);
  });
});
