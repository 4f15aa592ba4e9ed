// The live log over real HTTP on the emulators (DynamoDB Local or dynalite, S3 on fauxqs) with the
// real SDK clients: a long poll answers when the worker appends, reads the table a bounded number
// of times while it waits, and stops reading when the client hangs up. Blobs come back byte for byte.
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoStore } from '../../lib/adapters/aws/dynamo-store.js';
import { S3BlobStore } from '../../lib/adapters/aws/s3-blob-store.js';
import { MemoryStepQueue } from '../../lib/adapters/memory/memory-step-queue.js';
import { CryptoIds } from '../../lib/adapters/system/crypto-ids.js';
import { SystemClock } from '../../lib/support/system-clock.js';
import { createApiApp } from '../../lib/api/app.js';
import { engineRunService } from '../../lib/api/engine-service.js';
import { EVENTS_POLL_MS } from '../../lib/api/long-poll.js';
import { createEngine, type EngineDeps } from '../../lib/engine/engine.js';
import { startRun } from '../../lib/engine/start-run.js';
import { runStep } from '../../lib/engine/step-runner.js';
import { scriptedWorld } from '../../lib/testing/scripted-world.js';
import { createTestStack, endpointsFor, type TestStack } from '../setup/emulator-context.js';

const target = endpointsFor('dynamodb-local') ? 'dynamodb-local' : 'dynalite';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.runIf(endpointsFor(target))(`long-polling the log on ${target}`, () => {
  let stack: TestStack;
  let store: DynamoStore;
  let deps: EngineDeps;
  let queue: MemoryStepQueue;
  let server: ReturnType<typeof serve>;
  let base: string;

  beforeAll(async () => {
    stack = await createTestStack(target, 'long-poll');
    const t = scriptedWorld({ tools: [], script: [{ text: 'done' }] });
    store = new DynamoStore({ doc: stack.clients.doc, tableName: stack.resources.tableName, now: () => Date.now() });
    queue = new MemoryStepQueue();
    deps = createEngine({
      log: store,
      heads: store,
      inbox: store,
      blobs: new S3BlobStore({ s3: stack.clients.s3, bucket: stack.resources.bucket }),
      queue,
      models: t.world.models,
      registry: t.world.registry,
      clock: new SystemClock(),
      ids: new CryptoIds(),
    });
    const app = createApiApp({ service: engineRunService(deps), caller: (c) => ({ tenant: c.req.header('x-tenant') ?? 'acme', principal: 'p' }) });
    server = await new Promise((ok) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => ok(s));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    (server as { closeAllConnections?: () => void } | undefined)?.closeAllConnections?.();
    await new Promise((r) => server?.close(r));
    await stack?.dispose();
  });

  const start = (runId: string) => startRun(deps, { tenant: 'acme', runId, agent: 'agent', input: 'hello' });

  it('answers when the worker appends, having read the table at most once per poll interval', async () => {
    await start('lp-a');
    const before = store.stats.requests;
    const began = Date.now();
    const pending = fetch(`${base}/runs/lp-a/events?after=1&waitSeconds=20`);
    await sleep(700);
    // The worker's step: claims the lease, appends model_started..run_completed.
    const tick = queue.take();
    if (!tick) throw new Error('no tick');
    const stepBefore = store.stats.requests;
    await runStep(deps, tick.tick, { owner: 'w', deadlineAt: Date.now() + 300_000 });
    const stepRequests = store.stats.requests - stepBefore;
    const res = await pending;
    const elapsed = Date.now() - began;
    const body = (await res.json()) as { events: { seq: number; type: string }[] };
    expect(res.status).toBe(200);
    expect(body.events[0]).toMatchObject({ seq: 2 });
    const pollReads = store.stats.requests - before - stepRequests;
    // One head read, then one Query per interval of the wait (and one more as it ends).
    expect(pollReads).toBeLessThanOrEqual(1 + Math.ceil(elapsed / EVENTS_POLL_MS) + 1);
    expect(elapsed).toBeLessThan(20_000);
  });

  it('answers an empty page when the wait runs out', async () => {
    await start('lp-b');
    const before = store.stats.requests;
    const res = await fetch(`${base}/runs/lp-b/events?after=1&waitSeconds=1`);
    expect(await res.json()).toEqual({ runId: 'lp-b', events: [] });
    const reads = store.stats.requests - before;
    expect(reads).toBeGreaterThanOrEqual(3);
    expect(reads).toBeLessThanOrEqual(1 + 1_000 / EVENTS_POLL_MS + 1);
  });

  it('stops reading the table when the client hangs up', async () => {
    await start('lp-c');
    const abort = new AbortController();
    const pending = fetch(`${base}/runs/lp-c/events?after=1&waitSeconds=20`, { signal: abort.signal }).catch(() => undefined);
    await sleep(600);
    abort.abort();
    await pending;
    await sleep(2 * EVENTS_POLL_MS);
    const after = store.stats.requests;
    await sleep(1_500);
    expect(store.stats.requests).toBe(after);
  });

  it("serves an offloaded payload from S3 byte for byte, and 404s it for another tenant", async () => {
    await start('lp-d');
    const body = await deps.codec.encode({ tenant: 'acme', runId: 'lp-d' }, { html: '<img src=x onerror=alert(1)>'.repeat(1_000) });
    if (body.kind !== 'blob') throw new Error('expected an offloaded body');
    const res = await fetch(`${base}/runs/lp-d/blobs/${body.sha256}`);
    expect(res.status).toBe(200);
    expect(createHash('sha256').update(new Uint8Array(await res.arrayBuffer())).digest('hex')).toBe(body.sha256);
    expect((await fetch(`${base}/runs/lp-d/blobs/${body.sha256}`, { headers: { 'x-tenant': 'globex' } })).status).toBe(404);
  });
});
