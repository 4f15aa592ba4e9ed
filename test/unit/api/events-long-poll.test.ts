// The live log over HTTP on the memory fakes: GET /runs/{id}/events?waitSeconds=S answers as soon
// as an event after `after` exists, or with an empty page when S runs out; it reads the log a
// bounded number of times while it waits and stops reading when the client goes away. And the
// blob route that lets a client fetch (and check) a payload the log holds by reference.
import { createHash } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, MemoryBlobStore, MemoryStepQueue, MemoryStore, SequentialIds } from '../../../lib/adapters/memory/index.js';
import { createApiApp } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import { EVENTS_POLL_MS, POLL_MAX_MS } from '../../../lib/api/long-poll.js';
import type { Caller } from '../../../lib/api/tenant.js';
import { AgentRegistry } from '../../../lib/authoring/registry.js';
import { createEngine, type EngineDeps } from '../../../lib/engine/engine.js';
import { runStep } from '../../../lib/engine/step-runner.js';
import { StaticModelResolver } from '../../../lib/models/scripted-model.js';
import { SUPPORT_MODEL_ID, supportAgent, supportModel } from '../../../examples/support-agent/agent.js';
import { MemoryLedger } from '../../../examples/support-agent/ledger.js';
import { SupportServices } from '../../../examples/support-agent/services.js';

let deps: EngineDeps;
let store: MemoryStore;
let blobs: MemoryBlobStore;
let queue: MemoryStepQueue;
let clock: ManualClock;

const app = () =>
  createApiApp({
    service: engineRunService(deps),
    caller: (c): Caller | undefined => {
      const tenant = c.req.header('x-test-tenant');
      return tenant ? { tenant, principal: `user-of-${tenant}` } : undefined;
    },
  });

/** A request left pending, with a flag that says whether it has answered yet. */
function request(path: string, options: { tenant?: string; signal?: AbortSignal } = {}) {
  const state: { done: boolean; status?: number; body?: { events: { seq: number; type: string }[]; next?: number } } = { done: false };
  const promise = (async () => {
    const res = await app().request(path, { headers: { 'x-test-tenant': options.tenant ?? 'acme' }, ...(options.signal ? { signal: options.signal } : {}) });
    state.status = res.status;
    state.body = (await res.json()) as typeof state.body;
    state.done = true;
    return state;
  })();
  return { state, promise };
}

/** Let pending work run (the request reaching its first sleep) without moving the clock. */
async function settle() {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

async function startRun(runId: string) {
  const res = await app().request('/runs', {
    method: 'POST',
    headers: { 'x-test-tenant': 'acme', 'content-type': 'application/json' },
    body: JSON.stringify({ agent: 'support', input: 'order arrived damaged', runId }),
  });
  expect(res.status).toBe(201);
}

/** One worker step, as a tick would drive it. */
async function step() {
  const next = queue.take();
  if (!next) throw new Error('no tick queued');
  await runStep(deps, next.tick, { owner: 'w', deadlineAt: clock.now() + 300_000 });
}

beforeEach(() => {
  store = new MemoryStore();
  blobs = new MemoryBlobStore();
  queue = new MemoryStepQueue();
  clock = new ManualClock(Date.UTC(2026, 10, 1));
  deps = createEngine({
    log: store,
    heads: store,
    inbox: store,
    blobs,
    queue,
    models: new StaticModelResolver({ [SUPPORT_MODEL_ID]: supportModel() }),
    registry: new AgentRegistry().register(supportAgent(new SupportServices(new MemoryLedger()))),
    clock,
    ids: new SequentialIds('t'),
  });
});

describe('GET /runs/{id}/events?waitSeconds=S', () => {
  it('without waitSeconds reads once and answers at once', async () => {
    await startRun('lp-0');
    const before = store.stats.requests;
    const { state, promise } = request('/runs/lp-0/events?after=1');
    await settle();
    expect(state.done).toBe(true);
    expect((await promise).body?.events).toEqual([]);
    // The head (404 check) and one read of the log.
    expect(store.stats.requests - before).toBe(2);
  });

  it('answers as soon as an event after N lands, within one backed-off poll interval (at most POLL_MAX_MS)', async () => {
    await startRun('lp-1');
    const { state, promise } = request('/runs/lp-1/events?after=1&waitSeconds=20');
    await settle();
    for (let i = 0; i < 8; i++) {
      await clock.advance(EVENTS_POLL_MS);
      expect(state.done).toBe(false);
    }
    await step(); // the worker appends seq 2, 3, ...
    await clock.advance(POLL_MAX_MS);
    expect(state.done).toBe(true);
    const done = await promise;
    expect(done.status).toBe(200);
    expect(done.body?.events[0]).toMatchObject({ seq: 2, type: 'model_started' });
  });

  it('answers an empty page when S runs out, after a bounded number of reads', async () => {
    await startRun('lp-2');
    const before = store.stats.requests;
    const { state, promise } = request('/runs/lp-2/events?after=1&waitSeconds=5');
    await settle();
    await clock.advance(4_900);
    expect(state.done).toBe(false);
    for (let i = 0; i < 5 && !state.done; i++) await clock.advance(EVENTS_POLL_MS);
    expect((await promise).body).toEqual({ runId: 'lp-2', events: [] });
    // One head read, then one log read per poll interval: 5 s / 250 ms + the first read.
    const reads = store.stats.requests - before;
    expect(reads).toBeLessThanOrEqual(1 + 5_000 / EVENTS_POLL_MS + 1);
    expect(reads).toBeGreaterThan(2);
  });

  it('stops reading when the client goes away', async () => {
    await startRun('lp-3');
    const abort = new AbortController();
    const { promise } = request('/runs/lp-3/events?after=1&waitSeconds=20', { signal: abort.signal });
    await settle();
    await clock.advance(EVENTS_POLL_MS);
    abort.abort(new Error('client closed the connection'));
    await settle();
    const after = store.stats.requests;
    for (let i = 0; i < 20; i++) await clock.advance(EVENTS_POLL_MS);
    expect(store.stats.requests).toBe(after);
    await promise.catch(() => undefined);
  });

  it('does not wait on a finished run: no event can come', async () => {
    await startRun('lp-4');
    while (queue.messages.length > 0) await step();
    const view = (await (await app().request('/runs/lp-4', { headers: { 'x-test-tenant': 'acme' } })).json()) as { status: string; lastSeq: number };
    expect(view.status).toBe('completed');
    const { state } = request(`/runs/lp-4/events?after=${view.lastSeq}&waitSeconds=20`);
    await settle();
    expect(state.done).toBe(true);
    expect(state.body?.events).toEqual([]);
  });

  it("is a 404 for another tenant's run, and validates waitSeconds (0 to 20) like every query", async () => {
    await startRun('lp-5');
    const other = request('/runs/lp-5/events?waitSeconds=20', { tenant: 'globex' });
    await settle();
    expect(other.state).toMatchObject({ done: true, status: 404 });
    for (const bad of ['21', '-1', '1.5', 'soon']) {
      const res = await app().request(`/runs/lp-5/events?waitSeconds=${bad}`, { headers: { 'x-test-tenant': 'acme' } });
      expect(res.status, bad).toBe(400);
      const body = (await res.json()) as { error: { issues: { path: string }[] } };
      expect(body.error.issues[0]?.path).toBe('query.waitSeconds');
    }
  });

  it('is in the OpenAPI document with its bounds', async () => {
    const doc = (await (await app().request('/openapi.json')).json()) as {
      paths: Record<string, { get?: { parameters?: { name: string; schema: { maximum?: number; minimum?: number } }[] } }>;
    };
    const wait = doc.paths['/runs/{runId}/events']?.get?.parameters?.find((p) => p.name === 'waitSeconds');
    expect(wait?.schema).toMatchObject({ minimum: 0, maximum: 20 });
  });
});

describe('GET /runs/{id}/blobs/{sha256}', () => {
  it("serves an offloaded payload's stored bytes (their sha256 is the one asked for), only to its tenant", async () => {
    await startRun('blob-1');
    const run = { tenant: 'acme', runId: 'blob-1' };
    const body = await deps.codec.encode(run, { page: '<script>alert(1)</script>'.repeat(1_000) });
    expect(body.kind).toBe('blob');
    const sha256 = body.kind === 'blob' ? body.sha256 : '';
    const res = await app().request(`/runs/blob-1/blobs/${sha256}`, { headers: { 'x-test-tenant': 'acme' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(sha256);

    const other = await app().request(`/runs/blob-1/blobs/${sha256}`, { headers: { 'x-test-tenant': 'globex' } });
    expect(other.status).toBe(404);
    const missing = await app().request(`/runs/blob-1/blobs/${'0'.repeat(64)}`, { headers: { 'x-test-tenant': 'acme' } });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('blob_not_found');
    const bad = await app().request('/runs/blob-1/blobs/..%2F..%2Fsecrets', { headers: { 'x-test-tenant': 'acme' } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { issues: { path: string }[] } }).error.issues[0]?.path).toBe('path.sha256');
  });
});
