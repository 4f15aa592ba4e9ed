// Readers of a run's stream and log that the API must hold in check, on memory ports and a manual
// clock: a cursor the log cannot have is refused (never answered `done` with nothing, which tells
// a client the run ended); the open waiting reads of one tenant are capped (429 + Retry-After),
// another tenant's are not touched; and a waiting reader backs its polling off while nothing
// happens, starting again from the short interval once something does (reads counted, not timed).
import { describe, expect, it } from 'vitest';
import type { ManualClock } from '../../../lib/adapters/memory/manual-clock.js';
import { createApiApp } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import { EVENTS_POLL_MS, POLL_MAX_MS } from '../../../lib/api/long-poll.js';
import { STREAM_POLL_MS } from '../../../lib/api/stream-read.js';
import type { Caller } from '../../../lib/api/tenant.js';
import { OPEN_STREAMS_RETRY_AFTER_S } from '../../../lib/core/limits.js';
import { runStep } from '../../../lib/engine/step-runner.js';
import { startRun } from '../../../lib/engine/start-run.js';
import type { EventLog } from '../../../lib/ports/event-log.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { spawnWorker } from '../../../lib/testing/world.js';

type Json = Record<string, unknown> & {
  error?: { code: string; issues?: { path: string; message: string }[] };
  items?: unknown[];
  next?: string;
  done?: boolean;
};

function setup(options: { maxOpenStreams?: number; sse?: boolean } = {}) {
  const t = scriptedWorld({ tools: [], script: [{ text: 'done' }, { text: 'again' }] });
  const clock = t.world.clock as ManualClock;
  // The API's own process, with its log reads counted.
  const reads = { count: 0 };
  const log = t.storage.log;
  const counted = new Proxy(log, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (prop === 'read') {
        return (...args: Parameters<EventLog['read']>) => {
          reads.count++;
          return target.read(...args);
        };
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const api = spawnWorker(t.world, undefined, {}, { log: counted });
  const app = createApiApp({
    service: engineRunService(api.deps),
    caller: (c): Caller | undefined => {
      const tenant = c.req.header('x-test-tenant');
      return tenant ? { tenant, principal: 'p' } : undefined;
    },
    ...(options.maxOpenStreams !== undefined ? { maxOpenStreams: options.maxOpenStreams } : {}),
    ...(options.sse ? { sse: true } : {}),
  });
  /** A request left pending, with a flag saying whether it answered yet. */
  const send = (path: string, tenant = 't', headers: Record<string, string> = {}) => {
    const state: { done: boolean; status?: number; body?: Json; headers?: Headers } = { done: false };
    const promise = (async () => {
      const res = await app.request(path, { headers: { 'x-test-tenant': tenant, ...headers } });
      state.status = res.status;
      state.headers = res.headers;
      if (!(res.headers.get('content-type') ?? '').includes('event-stream')) state.body = (await res.json()) as Json;
      state.done = true;
      return state;
    })();
    return { state, promise };
  };
  const get = (path: string, tenant = 't', headers: Record<string, string> = {}) => send(path, tenant, headers).promise;
  const begin = (tenant: string, runId: string) => startRun(t.worker.deps, { tenant, runId, agent: 'agent', input: 'hi' });
  /** Every tick the queue holds, run as a worker would: the runs go as far as the script takes them. */
  const drive = async () => {
    for (let i = 0; i < 50; i++) {
      const next = t.storage.queue.take();
      if (!next) return;
      await runStep(t.worker.deps, next.tick, { owner: 'w', deadlineAt: clock.now() + 300_000 });
    }
  };
  return { t, clock, reads, app, send, get, begin, drive };
}

/** Let pending work reach its next sleep without moving the clock. */
async function settle() {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
}

/** Reads a waiting reader makes over a wait of `waitMs`: one, then one after each sleep (first, doubling, capped; the last cut at the deadline). */
function expectedReads(waitMs: number, firstMs: number, maxMs: number): number {
  let at = 0;
  let reads = 1;
  for (let sleep = firstMs; at < waitMs; sleep = Math.min(sleep * 2, maxMs)) {
    at += Math.min(sleep, waitMs - at);
    reads++;
  }
  return reads;
}

describe('a cursor the log cannot have', () => {
  it('is refused with a 400 naming query.after, on a finished run and on a running one; a real end cursor is done', async () => {
    const s = setup();
    await s.begin('t', 'r');
    await s.drive();
    const all = await s.get('/runs/r/stream?limit=500');
    expect(all.body?.done).toBe(true);
    const last = all.body?.next as string;
    const lastSeq = Number(last.split('.')[0]);
    // The real end: done, nothing more.
    expect((await s.get(`/runs/r/stream?after=${last}`)).body).toMatchObject({ items: [], done: true });

    // Made up: past the end (it used to answer `done: true` with no items), and an open call
    // that is no reservation (run_started is event 1).
    for (const [cursor, says] of [
      [`${lastSeq + 5}.0.0.-1`, `has no event ${lastSeq + 5}`],
      [`999999.0.0.-1`, 'has no event 999999'],
      [`${lastSeq}.1.1.-1`, "event 1 of the run's log opens no model call"],
    ] as const) {
      const res = await s.get(`/runs/r/stream?after=${cursor}`);
      expect(res.status, cursor).toBe(400);
      expect(res.body?.error?.code).toBe('validation_error');
      expect(res.body?.error?.issues?.[0]).toMatchObject({ path: 'query.after' });
      expect(res.body?.error?.issues?.[0]?.message).toContain(says);
    }
    // A cursor each item gave out is still good.
    for (const item of all.body?.items as { cursor: string }[]) expect((await s.get(`/runs/r/stream?after=${item.cursor}`)).status, item.cursor).toBe(200);

    // A run still going: refused at once, never left waiting for an event that cannot come.
    await s.begin('t', 'live');
    const live = s.send('/runs/live/stream?after=40.0.0.-1&waitSeconds=20');
    await settle();
    expect(live.state.done).toBe(true);
    expect((await live.promise).status).toBe(400);
  });

  it('over SSE, a Last-Event-ID past the end is a 400 naming the header, before any stream starts', async () => {
    const s = setup({ sse: true });
    await s.begin('t', 'r');
    const res = await s.get('/runs/r/stream', 't', { accept: 'text/event-stream', 'last-event-id': '77.0.0.-1' });
    expect(res.status).toBe(400);
    expect(res.body?.error?.issues?.[0]?.path).toBe('header.last-event-id');
  });
});

describe('open waiting reads per tenant', () => {
  it('are capped: the reader over the cap gets 429 too_many_streams with Retry-After; another tenant and reads that do not wait are unaffected', async () => {
    const s = setup({ maxOpenStreams: 3, sse: true });
    await s.begin('t', 'r');
    await s.begin('u', 'r');
    const first = (await s.get('/runs/r/stream')).body?.next as string;
    const wait = `/runs/r/stream?after=${first}&waitSeconds=20`;
    // Three of tenant t's: two stream long polls and one events long poll, all waiting.
    const open = [s.send(wait), s.send(wait), s.send('/runs/r/events?after=1&waitSeconds=20')];
    await settle();
    expect(open.map((o) => o.state.done)).toEqual([false, false, false]);

    for (const path of [wait, '/runs/r/events?after=1&waitSeconds=5']) {
      const over = await s.get(path);
      expect(over.status, path).toBe(429);
      expect(over.body?.error?.code).toBe('too_many_streams');
      expect(over.headers?.get('retry-after')).toBe(String(OPEN_STREAMS_RETRY_AFTER_S));
    }
    const sse = await s.get('/runs/r/stream', 't', { accept: 'text/event-stream' });
    expect(sse.status).toBe(429);
    // A read that does not wait is no open stream.
    expect((await s.get(`/runs/r/stream?after=${first}`)).status).toBe(200);
    expect((await s.get('/runs/r/events?after=1')).status).toBe(200);

    // Tenant u has its own count: its three long polls all wait.
    const theirs = [s.send(wait, 'u'), s.send(wait, 'u'), s.send(wait, 'u')];
    await settle();
    expect(theirs.map((o) => o.state.done)).toEqual([false, false, false]);

    // When t's long polls answer, their slots are free again.
    for (let i = 0; i < 25 && !open.every((o) => o.state.done); i++) await s.clock.advance(1_000);
    expect((await Promise.all(open.map((o) => o.promise))).map((o) => o.status)).toEqual([200, 200, 200]);
    await Promise.all(theirs.map((o) => o.promise));
    const again = s.send(wait);
    await settle();
    expect(again.state.done).toBe(false);
    for (let i = 0; i < 25 && !again.state.done; i++) await s.clock.advance(1_000);
    expect((await again.promise).status).toBe(200);
  });

  it('counts an SSE connection until it closes', async () => {
    const s = setup({ maxOpenStreams: 1, sse: true });
    await s.begin('t', 'r');
    const res = await s.app.request('/runs/r/stream', { headers: { 'x-test-tenant': 't', accept: 'text/event-stream' } });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('event: event');
    expect((await s.get('/runs/r/stream?waitSeconds=1&after=1.0.0.-1')).status).toBe(429);
    await reader.cancel();
    await settle();
    const next = s.send('/runs/r/stream?waitSeconds=1&after=1.0.0.-1');
    for (let i = 0; i < 5 && !next.state.done; i++) await s.clock.advance(500);
    expect((await next.promise).status).toBe(200);
  });
});

describe('a waiting reader backs off', () => {
  it('reads the log about 24 times in a 20 s wait on a quiet run (200 at a fixed 100 ms), and starts short again after activity', async () => {
    const s = setup();
    await s.begin('t', 'r');
    const first = (await s.get('/runs/r/stream')).body?.next as string;
    s.reads.count = 0;
    const quiet = s.send(`/runs/r/stream?after=${first}&waitSeconds=20`);
    await settle();
    for (let i = 0; i < 250 && !quiet.state.done; i++) await s.clock.advance(100);
    expect((await quiet.promise).body).toMatchObject({ items: [], done: false });
    const expected = expectedReads(20_000, STREAM_POLL_MS, POLL_MAX_MS);
    expect(expected).toBe(24);
    expect(s.reads.count).toBe(expected);

    // Backed off to POLL_MAX_MS: an event that lands is seen within that long.
    const waiting = s.send(`/runs/r/stream?after=${first}&waitSeconds=20`);
    await settle();
    await s.clock.advance(5_000);
    await s.drive();
    await s.clock.advance(POLL_MAX_MS);
    expect(waiting.state.done).toBe(true);
    const page = (await waiting.promise).body!;
    expect(page.items?.length).toBeGreaterThan(0);
    // The next request starts again from the short interval: a second read STREAM_POLL_MS later.
    await s.begin('t', 'r2');
    const r2 = (await s.get('/runs/r2/stream')).body?.next as string;
    s.reads.count = 0;
    const fresh = s.send(`/runs/r2/stream?after=${r2}&waitSeconds=20`);
    await settle();
    expect(s.reads.count).toBe(1);
    await s.clock.advance(STREAM_POLL_MS);
    await settle();
    expect(s.reads.count).toBe(2);
    for (let i = 0; i < 250 && !fresh.state.done; i++) await s.clock.advance(100);
    await fresh.promise;
  });

  it('the events long poll backs off the same way (23 reads in 20 s, 80 at a fixed 250 ms)', async () => {
    const s = setup();
    await s.begin('t', 'r');
    s.reads.count = 0;
    const quiet = s.send('/runs/r/events?after=1&waitSeconds=20');
    await settle();
    for (let i = 0; i < 250 && !quiet.state.done; i++) await s.clock.advance(100);
    expect((await quiet.promise).body).toMatchObject({ events: [] });
    expect(expectedReads(20_000, EVENTS_POLL_MS, POLL_MAX_MS)).toBe(23);
    expect(s.reads.count).toBe(23);
  });
});
