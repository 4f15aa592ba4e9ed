import type { Context, SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MemoryBlobStore, MemoryStepQueue, MemoryStore, SequentialIds } from '../../lib/adapters/memory/index.js';
import { SystemClock } from '../../lib/support/system-clock.js';
import { AgentRegistry } from '../../lib/authoring/registry.js';
import { defineAgent } from '../../lib/authoring/define-agent.js';
import { createEngine } from '../../lib/engine/engine.js';
import { startRun } from '../../lib/engine/start-run.js';
import { defineTool } from '../../lib/authoring/define-tool.js';
import { lambdaContext } from '../../dev/local/lambda-context.js';
import { ScriptedModel, StaticModelResolver } from '../../lib/models/scripted-model.js';
import { loadEnv } from '../../lib/lambda/env.js';
import { MAX_RECEIVE_COUNT } from '../../lib/core/limits.js';
import { LeaseHeldError } from '../../lib/core/errors.js';
import { HINT_ATTRIBUTE } from '../../lib/adapters/aws/tick.js';
import { createLogger, createMetrics } from '../../lib/lambda/telemetry.js';
import type { Runtime } from '../../lib/lambda/wiring.js';
import { workerHandlerFor as createWorkerHandler } from '../../lib/lambda/worker-handler.js';
import { sqsRecord } from './runtime-helpers.js';

/** A tool that ignores its abort signal: the worker must not return and keep it running. */
const stubborn = defineTool({
  name: 'stubborn',
  version: '1.0.0',
  description: 'Ignores aborts.',
  input: z.object({}),
  policy: 'rerun',
  timeoutMs: 200,
  execute: () => new Promise((resolve) => setTimeout(() => resolve({ late: true }), 4_000)),
});

function runtime() {
  const store = new MemoryStore();
  const queue = new MemoryStepQueue();
  const visibility: { receipt: string; seconds: number }[] = [];
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  const engine = createEngine(
    {
      log: store,
      heads: store,
      inbox: store,
      blobs: new MemoryBlobStore(),
      queue,
      models: new StaticModelResolver({ 'scripted:stubborn': new ScriptedModel([{ calls: [{ name: 'stubborn', args: {} }] }, { text: 'done' }]) }),
      registry: new AgentRegistry().register(
        defineAgent({
          name: 'stubborn',
          version: '1',
          model: { id: 'scripted:stubborn', maxOutputTokens: 64 },
          system: { version: '1', text: 'x' },
          tools: [stubborn],
        }),
      ),
      clock: new SystemClock(),
      ids: new SequentialIds('w'),
    },
    { config: { leaseMs: 5_000, marginMs: 500, modelTimeoutMs: 1_000 } },
  );
  const env = loadEnv({ LOGBOOK_TABLE: 't', LOGBOOK_BUCKET: 'b', LOGBOOK_QUEUE_URL: 'http://127.0.0.1:1/q.fifo', LOGBOOK_LEASE_MS: '5000' });
  const rt = {
    env,
    engine,
    logger: createLogger('test-worker'),
    metrics: createMetrics('test-worker'),
    clients: undefined as unknown as Runtime['clients'],
    visibility: { setVisibility: async (receipt: string, seconds: number) => void visibility.push({ receipt, seconds }) },
  } as unknown as Runtime;
  return { rt, engine, queue, visibility, store };
}

const event = (body: string): SQSEvent => ({ Records: [sqsRecord(body, 'm-1', 'rh-1')] });

describe('worker handler', () => {
  it('shortens the tick visibility to lease + margin first thing, beside the claim', async () => {
    const { rt, engine, visibility } = runtime();
    await startRun(engine, { tenant: 'acme', runId: 'v-1', agent: 'stubborn', input: 'x' });
    let exited = false;
    const handler = createWorkerHandler(async () => rt, { exitProcess: () => (exited = true) });
    const out = await handler(event(JSON.stringify({ tenant: 'acme', runId: 'v-1' })), lambdaContext('w', 60_000) as Context);
    expect(out.batchItemFailures).toEqual([]);
    expect(visibility[0]).toEqual({ receipt: 'rh-1', seconds: 5 + rt.env.LOGBOOK_VISIBILITY_MARGIN_S });
    // The stubborn tool outlived its timeout and its abort: the process must go after responding.
    expect(exited).toBe(true);
  }, 20_000);

  it('claims while the first visibility change is in flight, and no later change overtakes it', async () => {
    const { rt, engine, store } = runtime();
    await startRun(engine, { tenant: 'acme', runId: 'v-4', agent: 'stubborn', input: 'x' });
    // Another worker holds the run: this delivery is busy and sets the retry visibility.
    await store.claimLease({ tenant: 'acme', runId: 'v-4' }, { owner: 'other', now: Date.now(), ttlMs: 5_000 });
    const landed: number[] = [];
    let claimedBeforeFirstLanded = false;
    const claimLease = store.claimLease.bind(store);
    store.claimLease = async (...args) => {
      claimedBeforeFirstLanded = landed.length === 0;
      return claimLease(...args);
    };
    let calls = 0;
    const slowFirst = { setVisibility: async (_receipt: string, seconds: number) => {
      // The first change is slow (SQS took its time); the busy one right after it is fast.
      if (calls++ === 0) await new Promise((r) => setTimeout(r, 100));
      landed.push(seconds);
    } };
    const handler = createWorkerHandler(async () => ({ ...rt, visibility: slowFirst }) as Runtime, { exitProcess: () => undefined });
    const out = await handler(event(JSON.stringify({ tenant: 'acme', runId: 'v-4' })), lambdaContext('w', 60_000) as Context);
    expect(out.batchItemFailures).toEqual([{ itemIdentifier: 'm-1' }]);
    expect(claimedBeforeFirstLanded).toBe(true);
    // Lease + margin first, then the busy retry: the tick comes back when the other lease ends.
    expect(landed).toHaveLength(2);
    expect(landed[0]).toBe(5 + rt.env.LOGBOOK_VISIBILITY_MARGIN_S);
    expect(landed[1]).toBeLessThanOrEqual(7);
  }, 20_000);

  it('backs off a redelivered tick: its visibility grows with the receive count (FIFO has no per-message delay)', async () => {
    const { rt, engine, visibility } = runtime();
    await startRun(engine, { tenant: 'acme', runId: 'v-2', agent: 'stubborn', input: 'x' });
    const handler = createWorkerHandler(async () => rt, { exitProcess: () => undefined });
    const record = sqsRecord(JSON.stringify({ tenant: 'acme', runId: 'v-2' }), 'm-2', 'rh-2');
    // The third delivery: two before it did not finish (their workers died holding the tick).
    record.attributes.ApproximateReceiveCount = '3';
    await handler({ Records: [record] }, lambdaContext('w', 60_000) as Context);
    const margin = rt.env.LOGBOOK_VISIBILITY_MARGIN_S;
    expect(visibility[0]).toEqual({ receipt: 'rh-2', seconds: 5 * 4 + margin });
  }, 20_000);

  it('hands a tick at its last delivery to a fresh tick instead of stepping on it: no run tick reaches the DLQ', async () => {
    const { rt, engine, visibility, queue, store } = runtime();
    await startRun(engine, { tenant: 'acme', runId: 'v-3', agent: 'stubborn', input: 'x' });
    queue.take();
    const handler = createWorkerHandler(async () => rt, { exitProcess: () => undefined });
    const record = sqsRecord(JSON.stringify({ tenant: 'acme', runId: 'v-3' }), 'm-3', 'rh-3');
    record.attributes.ApproximateReceiveCount = String(MAX_RECEIVE_COUNT);
    const out = await handler({ Records: [record] }, lambdaContext('w', 60_000) as Context);
    // The record succeeds (SQS deletes it), a fresh tick carries the run, and nothing stepped.
    expect(out.batchItemFailures).toEqual([]);
    expect(queue.take()).toMatchObject({ tick: { tenant: 'acme', runId: 'v-3' }, dedupeId: 'v-3:handover:0' });
    expect((await store.getHead({ tenant: 'acme', runId: 'v-3' }))?.epoch).toBe(0);
    expect(visibility).toHaveLength(1);
  }, 20_000);

  it('reads beside the claim on a tick\'s first delivery when it carries a load hint, and claims first on a redelivery', async () => {
    const { rt, engine, store } = runtime();
    await startRun(engine, { tenant: 'acme', runId: 'v-5', agent: 'stubborn', input: 'x' });
    const order: string[] = [];
    const read = store.read.bind(store);
    store.read = async (...args) => {
      order.push('read');
      return read(...args);
    };
    // Every claim finds the run busy: the step ends at its claim, before any read of its own.
    store.claimLease = async (run) => {
      order.push('claim');
      throw new LeaseHeldError(run, Date.now() + 1_000);
    };
    const handler = createWorkerHandler(async () => rt, { exitProcess: () => undefined });
    const delivery = (count: number) => {
      const record = sqsRecord(JSON.stringify({ tenant: 'acme', runId: 'v-5' }), `m-${count}`, `rh-${count}`);
      record.attributes.ApproximateReceiveCount = String(count);
      record.messageAttributes = { [HINT_ATTRIBUTE]: { dataType: 'String', stringValue: JSON.stringify({ snapshot: null }) } };
      return { Records: [record] };
    };
    await handler(delivery(1), lambdaContext('w', 60_000) as Context);
    expect(order).toEqual(['read', 'claim']);
    order.length = 0;
    // A tick that came back may belong to a run whose reads kill its worker: no read before the
    // claim and the head gate that parks such a run.
    await handler(delivery(2), lambdaContext('w', 60_000) as Context);
    expect(order).toEqual(['claim']);
  }, 20_000);

  it('drops a malformed body without failing the record', async () => {
    const { rt } = runtime();
    let exited = false;
    const handler = createWorkerHandler(async () => rt, { exitProcess: () => (exited = true) });
    const out = await handler(event('{"tenant": "acme", "runId": "../etc"}'), lambdaContext('w', 60_000) as Context);
    expect(out).toEqual({ batchItemFailures: [] });
    expect(exited).toBe(false);
  });
});
