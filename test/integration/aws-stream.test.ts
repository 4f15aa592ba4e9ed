// Streaming on the emulators, through the real DynamoDB adapters (the run's events and its chunks
// in one table): a worker streams a model call, a reader follows GET /runs/{id}/stream's service;
// the worker is killed mid-stream, a new one retries the call under a new reservation; the reader
// is told to discard the first attempt, and its final text is the model_response's. The chunk
// items carry the TTL attribute.
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamSk } from '../../lib/adapters/aws/dynamo-keys.js';
import { DynamoRunStream } from '../../lib/adapters/aws/dynamo-run-stream.js';
import { DynamoStore } from '../../lib/adapters/aws/dynamo-store.js';
import { ManualClock } from '../../lib/adapters/memory/manual-clock.js';
import { MemoryBlobStore } from '../../lib/adapters/memory/memory-blob-store.js';
import { MemoryStepQueue } from '../../lib/adapters/memory/memory-step-queue.js';
import { engineRunService } from '../../lib/api/engine-service.js';
import type { StreamItem } from '../../lib/api/stream-merge.js';
import { defineAgent } from '../../lib/authoring/define-agent.js';
import { AgentRegistry } from '../../lib/authoring/registry.js';
import { LEASE_MS, STREAM_RETENTION_MS } from '../../lib/core/limits.js';
import { runStep } from '../../lib/engine/step-runner.js';
import { startRun } from '../../lib/engine/start-run.js';
import { ScriptedModel, StaticModelResolver } from '../../lib/models/scripted-model.js';
import { spawnWorker, type World } from '../../lib/testing/world.js';
import { advanceUntil, PacedModel } from '../unit/streaming/paced-model.js';
import { createTestStack, endpointsFor, type DynamoTarget, type TestStack } from '../setup/emulator-context.js';

const ANSWER = 'Streaming through DynamoDB: the chunks sit beside the events, in the same partition.';
const targets: DynamoTarget[] = ['dynamodb-local', 'dynalite'];

describe.each(targets)('streaming on %s', (target) => {
  let stack: TestStack;
  beforeAll(async () => {
    if (endpointsFor(target)) stack = await createTestStack(target, `${target === 'dynalite' ? 'dl' : 'ddb'}-stream`);
  });
  afterAll(async () => {
    await stack?.dispose();
  });

  it.runIf(endpointsFor(target))('a worker killed mid-stream: the reader discards the attempt, the retry streams, the final text is the response', async () => {
    const clock = new ManualClock();
    const tableName = stack.resources.tableName;
    const store = new DynamoStore({ doc: stack.clients.doc, tableName, now: () => clock.now() });
    const stream = new DynamoRunStream({ doc: stack.clients.doc, tableName, now: () => clock.now() });
    const model = new PacedModel(new ScriptedModel([{ text: ANSWER }]), clock, { size: 4, paceMs: 60 });
    const agent = defineAgent({
      name: 'agent',
      version: '1',
      model: { id: 'scripted:paced', maxOutputTokens: 512, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
      system: { version: 'p1', text: 'Answer.' },
      tools: [],
    });
    const queue = new MemoryStepQueue();
    const world: World = {
      storage: { log: store, heads: store, inbox: store, blobs: new MemoryBlobStore(), queue, stream },
      clock,
      registry: new AgentRegistry().register(agent),
      models: new StaticModelResolver({ 'scripted:paced': model }),
    };
    const tenant = `t${Date.now()}`;
    const run = { tenant, runId: 'r' };
    const caller = { tenant, principal: 'p' };
    const first = spawnWorker(world);
    const service = engineRunService(spawnWorker(world).deps, { streamPollMs: 10 });
    await startRun(first.deps, { ...run, agent: 'agent', input: 'go' });
    const tick = queue.take()!.tick;

    const items: StreamItem[] = [];
    let cursor: string | undefined;
    const poll = async () => {
      const page = await service.stream(caller, 'r', { ...(cursor ? { after: cursor } : {}), limit: 100, waitSeconds: 0 });
      items.push(...page.items);
      cursor = page.next;
      return page.done;
    };

    const dying = runStep(first.deps, tick, { owner: first.name, deadlineAt: clock.now() + 300_000 }).catch((e: unknown) => e);
    for (let i = 0; i < 300 && model.pieces < 8; i++) {
      await clock.advance(20);
      await poll();
    }
    await poll();
    const partial = items.filter((i) => i.type === 'text');
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.every((x) => x.type === 'text' && x.callSeq === 2 && x.attempt === 1)).toBe(true);
    // The TTL attribute of a chunk item is its expiry, an hour after it was written.
    const item = (await stack.clients.doc.send(new GetCommand({ TableName: tableName, Key: { pk: `RUN#${tenant}#r`, sk: streamSk(2, 0) } }))).Item!;
    expect(item.expiresAtSec).toBe(Math.ceil((item.at + STREAM_RETENTION_MS) / 1000));

    first.kill();
    await advanceUntil(clock, dying);
    await clock.advance(LEASE_MS + 1_000);
    const second = spawnWorker(world);
    const retry = runStep(second.deps, { ...run }, { owner: second.name, deadlineAt: clock.now() + 300_000 });
    let done = false;
    for (let i = 0; i < 2000 && !done; i++) {
      await clock.advance(20);
      done = await poll();
    }
    await retry;
    expect(done).toBe(true);
    const discard = items.findIndex((i) => i.type === 'discard');
    expect(items[discard]).toMatchObject({ type: 'discard', callSeq: 2 });
    expect(items.slice(discard).some((i) => i.type === 'text' && i.callSeq === 2)).toBe(false);
    const retried = items.filter((i): i is Extract<StreamItem, { type: 'text' }> => i.type === 'text' && i.callSeq !== 2);
    expect(retried.length).toBeGreaterThan(0);
    expect(new Set(retried.map((x) => x.attempt))).toEqual(new Set([2]));
    const response = items.find((i) => i.type === 'event' && i.event.type === 'model_response') as Extract<StreamItem, { type: 'event' }>;
    expect((response.event.text as { value: string }).value).toBe(ANSWER);
    expect(ANSWER.startsWith(retried.map((x) => x.text).join(''))).toBe(true);
    // The chunks are the only extra writes: the log holds the response once.
    const events = items.filter((i) => i.type === 'event').map((i) => (i as Extract<StreamItem, { type: 'event' }>).event.seq);
    expect(events).toEqual(events.map((_, i) => i + 1));
  });
});
