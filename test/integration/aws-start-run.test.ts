// Creating a run on the emulators in the order that needs no transaction: run_started (conditional
// on seq 1, with the request's hash), then the head, then the tick. A retry after a crash between
// them completes the run; the same id with another request is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoStore } from '../../lib/adapters/aws/dynamo-store.js';
import { S3BlobStore } from '../../lib/adapters/aws/s3-blob-store.js';
import { SqsStepQueue, SqsTickReceiver } from '../../lib/adapters/aws/sqs-step-queue.js';
import { RunConflictError } from '../../lib/core/errors.js';
import { parseEvent } from '../../lib/core/events.js';
import { startRun } from '../../lib/engine/start-run.js';
import { scriptedWorld } from '../../lib/testing/scripted-world.js';
import { spawnWorker, type World } from '../../lib/testing/world.js';
import { createTestStack, endpointsFor, type TestStack } from '../setup/emulator-context.js';
import { emulatorStorage } from '../setup/emulator-world.js';

const target = endpointsFor('dynamodb-local') ? 'dynamodb-local' : 'dynalite';

describe.runIf(endpointsFor(target))(`starting a run on ${target}`, () => {
  let stack: TestStack;
  let store: DynamoStore;
  let receiver: SqsTickReceiver;
  let world: World;
  let queue: SqsStepQueue;

  beforeAll(async () => {
    stack = await createTestStack(target, 'start-run');
    const t = scriptedWorld({ tools: [], script: [{ text: 'done' }] });
    store = new DynamoStore({ doc: stack.clients.doc, tableName: stack.resources.tableName, now: () => t.world.clock.now() });
    const blobs = new S3BlobStore({ s3: stack.clients.s3, bucket: stack.resources.bucket });
    world = { ...t.world, storage: emulatorStorage(store, blobs, 'start') };
    const options = { sqs: stack.clients.sqs, queueUrl: stack.resources.queueUrl };
    queue = new SqsStepQueue(options);
    receiver = new SqsTickReceiver(options);
  });
  afterAll(async () => {
    await stack?.dispose();
  });

  async function ticks(): Promise<string[]> {
    const out: string[] = [];
    for (let batch = await receiver.receive({ max: 10 }); batch.length; batch = await receiver.receive({ max: 10 })) {
      for (const m of batch) {
        out.push(m.dedupeId ?? '');
        await receiver.delete(m.receiptHandle);
      }
    }
    return out;
  }

  it('writes run_started, the head and one tick; a retry changes nothing; another request is refused', async () => {
    const worker = spawnWorker(world, undefined, {}, { queue });
    const request = { tenant: 'acme', runId: 'create-1', agent: 'agent', input: { q: 'hello' } };
    expect(await startRun(worker.deps, request)).toEqual({ runId: 'create-1', created: true, status: 'running' });
    const run = { tenant: 'acme', runId: 'create-1' };
    const started = parseEvent(await world.storage.log.readOne(run, 1));
    expect(started.type).toBe('run_started');
    expect(await world.storage.heads.getHead(run)).toMatchObject({ status: 'running', lastSeq: 1, epoch: 0 });
    expect(await ticks()).toEqual(['create-1:1:0']);

    expect(await startRun(spawnWorker(world, undefined, {}, { queue }).deps, request)).toMatchObject({ created: false });
    expect((await world.storage.log.read(run, { afterSeq: 0 })).events).toEqual([started]);
    await expect(startRun(worker.deps, { ...request, input: { q: 'something else' } })).rejects.toBeInstanceOf(RunConflictError);
  });

  it('completes a run whose creation crashed between run_started and the head', async () => {
    const run = { tenant: 'acme', runId: 'create-2' };
    const request = { ...run, agent: 'agent', input: { q: 'hello' } };
    let failOnce = true;
    const heads = new Proxy(world.storage.heads, {
      get(target, prop, receiver) {
        if (prop === 'createHead' && failOnce) {
          return async () => {
            failOnce = false;
            throw new Error('process died');
          };
        }
        return Reflect.get(target, prop, receiver) as unknown;
      },
    });
    await expect(startRun(spawnWorker(world, undefined, {}, { queue, heads }).deps, request)).rejects.toThrow('process died');
    expect(await world.storage.heads.getHead(run)).toBeUndefined();
    expect(await world.storage.log.readOne(run, 1)).toBeDefined();
    expect(await startRun(spawnWorker(world, undefined, {}, { queue }).deps, request)).toMatchObject({ created: false, status: 'running' });
    expect(await world.storage.heads.getHead(run)).toMatchObject({ status: 'running', lastSeq: 1 });
    expect(await ticks()).toEqual(['create-2:1:0']);
  });
});
