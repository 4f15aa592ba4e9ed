// Streaming end to end on memory ports and a manual clock: a worker streams a model call through
// the engine's publisher, readers follow GET /runs/{id}/stream. A reader that resumes from any
// cursor gets exactly the rest; a late reader catches up with events only; a worker killed
// mid-stream leaves a partial text the reader is told to discard, and the retry's response is the
// final text; chunks of another writer are never served and stop the real writer's stream; the
// route validates its cursor, is tenant-scoped, and on the local server speaks SSE.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../lib/adapters/memory/manual-clock.js';
import { createApiApp } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import { decodeCursor, type StreamItem } from '../../../lib/api/stream-merge.js';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { AgentRegistry } from '../../../lib/authoring/registry.js';
import { LEASE_MS } from '../../../lib/core/limits.js';
import { runStep } from '../../../lib/engine/step-runner.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { ScriptedModel, StaticModelResolver } from '../../../lib/models/scripted-model.js';
import { memoryStorage, spawnWorker, type World } from '../../../lib/testing/world.js';
import { advanceUntil, PacedModel } from './paced-model.js';

const ANSWER = 'Your refund of 42 EUR is on its way; <b>not bold</b> & "quoted" text, streamed slowly.';
const caller = { tenant: 't', principal: 'p' };
const run = { tenant: 't', runId: 'r' };

function world(options: { size?: number; paceMs?: number } = {}) {
  const clock = new ManualClock();
  const model = new PacedModel(new ScriptedModel([{ text: ANSWER }]), clock, { size: options.size ?? 3, paceMs: options.paceMs ?? 40 });
  const agent = defineAgent({
    name: 'agent',
    version: '1',
    model: { id: 'scripted:paced', maxOutputTokens: 512, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
    system: { version: 'p1', text: 'Answer.' },
    tools: [],
  });
  const storage = memoryStorage();
  const w: World = { storage, clock, registry: new AgentRegistry().register(agent), models: new StaticModelResolver({ 'scripted:paced': model }) };
  const worker = spawnWorker(w);
  // The API is another process: it lives on when a worker is killed.
  const service = engineRunService(spawnWorker(w).deps, { streamPollMs: 10 });
  return { clock, model, storage, world: w, worker, service };
}

type T = ReturnType<typeof world>;

async function begin(t: T) {
  await startRun(t.worker.deps, { ...run, agent: 'agent', input: 'Where is my refund?' });
  return t.storage.queue.take()!.tick;
}

const step = (t: T, worker = t.worker, tick = { ...run }) => runStep(worker.deps, tick, { owner: worker.name, deadlineAt: t.clock.now() + 300_000 });

/** Read every page from `after` to the current end (no waiting). */
async function readAll(t: T, after?: string, limit = 500) {
  const items: StreamItem[] = [];
  let cursor = after;
  for (let i = 0; i < 1000; i++) {
    const page = await t.service.stream(caller, 'r', { ...(cursor ? { after: cursor } : {}), limit, waitSeconds: 0 });
    items.push(...page.items);
    cursor = page.next;
    if (page.items.length === 0 || page.done) return { items, next: page.next, done: page.done };
  }
  throw new Error('no end');
}

/** What a client shows: each call's text (dropped on discard, replaced by its response), and the final answer. */
function apply(items: StreamItem[]) {
  const texts = new Map<number, string>();
  let answer: string | undefined;
  for (const item of items) {
    if (item.type === 'text') texts.set(item.callSeq, (texts.get(item.callSeq) ?? '') + item.text);
    if (item.type === 'discard') texts.delete(item.callSeq);
    if (item.type === 'event' && item.event.type === 'model_response') answer = (item.event.text as { value: string }).value;
  }
  return { texts, answer };
}

const key = (i: StreamItem) => (i.type === 'event' ? `e${String(i.event.seq)}` : i.type === 'text' ? `t${i.callSeq}.${i.index}` : `d${i.callSeq}`);

describe('GET /runs/{id}/stream on the engine', () => {
  it('a live reader sees the text as it streams; resuming from any cursor gives exactly the rest; a late reader gets events only', async () => {
    const t = world();
    const tick = await begin(t);
    const running = step(t, t.worker, tick);
    const live: StreamItem[] = [];
    let cursor: string | undefined;
    let done = false;
    for (let i = 0; i < 2000 && !done; i++) {
      await t.clock.advance(20);
      // Small pages: every read resumes from the cursor the last one gave.
      const page = await t.service.stream(caller, 'r', { ...(cursor ? { after: cursor } : {}), limit: 2, waitSeconds: 0 });
      live.push(...page.items);
      cursor = page.next;
      done = page.done;
    }
    await running;
    expect(done).toBe(true);
    const keys = live.map(key);
    expect(new Set(keys).size).toBe(keys.length); // no duplicates
    const events = live.filter((i) => i.type === 'event');
    expect(events.map((e) => e.event.seq)).toEqual(events.map((_, i) => i + 1)); // no gap
    const texts = live.filter((i): i is Extract<StreamItem, { type: 'text' }> => i.type === 'text');
    expect(texts.length).toBeGreaterThan(3);
    expect(texts.map((x) => x.index)).toEqual(texts.map((_, i) => i));
    expect(new Set(texts.map((x) => `${x.callSeq}@${x.attempt}`))).toEqual(new Set(['2@1']));
    const { texts: shown, answer } = apply(live);
    expect(ANSWER.startsWith(shown.get(2) ?? '')).toBe(true);
    expect(answer).toBe(ANSWER);
    // Every text item comes after its reservation's event and before its response.
    const at = (seq: number) => keys.indexOf(`e${seq}`);
    const responseSeq = events.find((e) => e.event.type === 'model_response')!.event.seq as number;
    for (const x of texts) expect(keys.indexOf(key(x))).toBeGreaterThan(at(2));
    for (const x of texts) expect(keys.indexOf(key(x))).toBeLessThan(at(responseSeq));

    // A late reader: the whole log, no superseded text, done.
    const late = await readAll(t);
    expect(late.done).toBe(true);
    expect(late.items.every((i) => i.type === 'event')).toBe(true);
    expect(late.items.map(key)).toEqual(events.map(key));
    // Resuming from each cursor of the late list gives exactly what follows it.
    for (let k = 0; k < late.items.length; k++) {
      const rest = await readAll(t, late.items[k]!.cursor);
      expect(rest.items.map(key)).toEqual(late.items.slice(k + 1).map(key));
    }
  });

  it('mid-stream, a reader with a cursor inside the text gets exactly the chunks after it', async () => {
    const t = world({ paceMs: 100 });
    const tick = await begin(t);
    const running = step(t, t.worker, tick);
    for (let i = 0; i < 200 && t.model.pieces < 15; i++) await t.clock.advance(20);
    const snapshot = await readAll(t);
    const texts = snapshot.items.filter((i) => i.type === 'text');
    expect(texts.length).toBeGreaterThanOrEqual(3);
    for (let k = 0; k < snapshot.items.length; k++) {
      const rest = await readAll(t, snapshot.items[k]!.cursor);
      expect(rest.items.map(key)).toEqual(snapshot.items.slice(k + 1).map(key));
    }
    expect(snapshot.done).toBe(false);
    await advanceUntil(t.clock, running);
  });

  it('a worker killed mid-stream: the reader drops its partial text, and the retry’s response is the final text', async () => {
    const t = world();
    const tick = await begin(t);
    const first = step(t, t.worker, tick).catch((e: unknown) => e);
    for (let i = 0; i < 200 && t.model.pieces < 8; i++) await t.clock.advance(20);
    const before = await readAll(t);
    const partial = before.items.filter((i) => i.type === 'text');
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.every((x) => x.type === 'text' && x.callSeq === 2 && x.attempt === 1)).toBe(true);
    t.worker.kill();
    await advanceUntil(t.clock, first);
    expect(await t.storage.log.read(run, { afterSeq: 2 })).toEqual({ events: [] }); // it died before its response

    // The lease lapses; a new worker retries the call under a new reservation.
    await t.clock.advance(LEASE_MS + 1_000);
    const second = spawnWorker(t.world);
    const retry = step(t, second, { ...run });
    const after: StreamItem[] = [];
    let cursor = before.next;
    let done = false;
    for (let i = 0; i < 2000 && !done; i++) {
      await t.clock.advance(20);
      const page = await t.service.stream(caller, 'r', { after: cursor, limit: 100, waitSeconds: 0 });
      after.push(...page.items);
      cursor = page.next;
      done = page.done;
    }
    await retry;
    const keys = after.map(key);
    expect(keys[0]).toBe('d2'); // the abandoned attempt first, before the retry's reservation
    const retrySeq = (after[1] as Extract<StreamItem, { type: 'event' }>).event.seq as number;
    expect((after[1] as Extract<StreamItem, { type: 'event' }>).event.type).toBe('model_started');
    expect(after.some((i) => i.type === 'text' && i.callSeq === 2)).toBe(false);
    const retried = after.filter((i) => i.type === 'text');
    expect(retried.length).toBeGreaterThan(0);
    expect(retried.every((x) => x.type === 'text' && x.callSeq === retrySeq && x.attempt === 2)).toBe(true);
    const { texts, answer } = apply([...before.items, ...after]);
    expect(texts.has(2)).toBe(false);
    expect(answer).toBe(ANSWER);
    expect(ANSWER.startsWith(texts.get(retrySeq) ?? '')).toBe(true);
    // A late reader sees the same story as events: the discard, then the retry.
    expect((await readAll(t)).items.map(key)).toEqual([...before.items.filter((i) => i.type === 'event'), ...after.filter((i) => i.type !== 'text')].map(key));
  });

  it("another writer's chunk at the open call is never served, and it stops the real writer's stream (the call goes on)", async () => {
    const t = world();
    const tick = await begin(t);
    const running = step(t, t.worker, tick);
    for (let i = 0; i < 200 && t.model.pieces < 3; i++) await t.clock.advance(20);
    const served = (await readAll(t)).items.filter((i) => i.type === 'text').length;
    expect(served).toBeGreaterThan(0);
    // A stale worker writes the next chunk of the open call before the real writer does.
    const next = (await t.storage.stream.read(run, {})).length;
    await t.storage.stream.publish(
      run,
      { callSeq: 2, index: next, text: 'EVIL', at: 0, writer: { epoch: 0, nonce: 'stale' } },
      { expiresAt: t.clock.now() + 60_000 },
    );
    await advanceUntil(t.clock, running);
    const all = await t.storage.stream.read(run, {});
    expect(all.map((c) => c.index)).toEqual(all.map((_, i) => i)); // the real writer stopped at the taken index
    expect(all.at(-1)!.text).toBe('EVIL');
    const midway = await readAll(t, undefined);
    expect(JSON.stringify(midway.items)).not.toContain('EVIL');
    expect(apply(midway.items).answer).toBe(ANSWER);
  });

  it('over HTTP: cursor validated (400 naming query.after), tenant-scoped (404), long poll answers when a chunk lands', async () => {
    const t = world();
    const app = createApiApp({ service: t.service, caller: (c) => ({ tenant: c.req.header('x-tenant') ?? 't', principal: 'p' }) });
    const tick = await begin(t);
    const bad = await app.request('/runs/r/stream?after=12');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain('query.after');
    expect((await app.request('/runs/r/stream?after=3.2.0.1')).status).toBe(400); // an open call with no attempt: never given out
    expect((await app.request('/runs/r/stream?waitSeconds=21')).status).toBe(400);
    expect((await app.request('/runs/r/stream', { headers: { 'x-tenant': 'other' } })).status).toBe(404);
    const first = (await (await app.request('/runs/r/stream')).json()) as { items: StreamItem[]; next: string; done: boolean };
    expect(first.items.map(key)).toEqual(['e1']);
    expect(first.done).toBe(false);
    // A long poll from there waits for the reservation; started before the step, answered by it.
    const polled = Promise.resolve(app.request(`/runs/r/stream?after=${first.next}&waitSeconds=5`)).then(
      async (r) => (await r.json()) as { items: StreamItem[] },
    );
    const running = step(t, t.worker, tick);
    const page = await advanceUntil(t.clock, polled);
    expect(page.items.length).toBeGreaterThan(0);
    expect(decodeCursor(page.items.at(-1)!.cursor)).toBeDefined();
    await advanceUntil(t.clock, running);
  });

  it('as Server-Sent Events (local server): one message per item with its cursor as id, Last-Event-ID resumes, the response ends with the run', async () => {
    const t = world();
    const sse = createApiApp({ service: t.service, caller: () => caller, sse: true });
    const plain = createApiApp({ service: t.service, caller: () => caller });
    const tick = await begin(t);
    await advanceUntil(t.clock, step(t, t.worker, tick));
    const all = (await readAll(t)).items;
    const res = await sse.request('/runs/r/stream', { headers: { accept: 'text/event-stream' } });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const messages = parseSse(await res.text());
    expect(messages.map((m) => m.id)).toEqual(all.map((i) => i.cursor));
    expect(messages.map((m) => m.event)).toEqual(all.map((i) => i.type));
    expect(messages.map((m) => JSON.parse(m.data) as StreamItem)).toEqual(all);
    const resumed = parseSse(await (await sse.request('/runs/r/stream', { headers: { accept: 'text/event-stream', 'last-event-id': all[2]!.cursor } })).text());
    expect(resumed.map((m) => m.id)).toEqual(all.slice(3).map((i) => i.cursor));
    // Without the option (the deployed API) the same request is answered as JSON.
    const json = await plain.request('/runs/r/stream', { headers: { accept: 'text/event-stream' } });
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('an SSE response for a run still going ends when the client goes away', async () => {
    const t = world();
    const sse = createApiApp({ service: t.service, caller: () => caller, sse: true });
    await begin(t);
    const client = new AbortController();
    const res = await sse.request('/runs/r/stream', { headers: { accept: 'text/event-stream' }, signal: client.signal });
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain('event: event');
    client.abort();
    await t.clock.advance(100);
    let ended = false;
    for (let i = 0; i < 50 && !ended; i++) {
      const next = await Promise.race([reader.read(), t.clock.advance(100).then(() => undefined)]);
      if (next?.done) ended = true;
    }
    expect(ended).toBe(true);
  });
});

function parseSse(text: string): { id: string; event: string; data: string }[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '' && !block.startsWith(':'))
    .map((block) => {
      const field = (name: string) =>
        block
          .split('\n')
          .find((l) => l.startsWith(`${name}: `))!
          .slice(name.length + 2);
      return { id: field('id'), event: field('event'), data: field('data') };
    });
}
