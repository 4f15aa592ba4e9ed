// A kill storm can kill every delivery of one tick, its last (the hand-over) included: SQS then
// moves the tick to the dead-letter queue. No run may be stranded by that: a running run with no
// tick anywhere is woken by the sweeper once its head has not moved for SWEEP_STALL_MS. Here on the
// emulators with the real adapters and SQS's own redrive (maxReceiveCount = MAX_RECEIVE_COUNT).
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { DynamoStore } from '../../lib/adapters/aws/dynamo-store.js';
import { S3BlobStore } from '../../lib/adapters/aws/s3-blob-store.js';
import { SqsStepQueue, SqsTickReceiver } from '../../lib/adapters/aws/sqs-step-queue.js';
import { CryptoIds } from '../../lib/adapters/system/crypto-ids.js';
import { SystemClock } from '../../lib/support/system-clock.js';
import { AgentRegistry } from '../../lib/authoring/registry.js';
import { defineAgent } from '../../lib/authoring/define-agent.js';
import { createEngine } from '../../lib/engine/engine.js';
import { MAX_RECEIVE_COUNT } from '../../lib/core/limits.js';
import { startRun } from '../../lib/engine/start-run.js';
import { runStep } from '../../lib/engine/step-runner.js';
import { sweep } from '../../lib/engine/sweep.js';
import { ScriptedModel, StaticModelResolver } from '../../lib/models/scripted-model.js';
import { SWEEP_STALL_MS } from '../../lib/ports/sweep-index.js';
import { createTestStack, endpointsFor, type DynamoTarget } from '../setup/emulator-context.js';

const target: DynamoTarget | undefined = endpointsFor('dynamodb-local') ? 'dynamodb-local' : endpointsFor('dynalite') ? 'dynalite' : undefined;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.runIf(target)('a tick dead-lettered because every delivery of it died', () => {
  it('strands no run: the sweeper wakes the running run and it completes', async () => {
    const stack = await createTestStack(target!, 'dlq-wake');
    try {
      const { clients, resources } = stack;
      const store = new DynamoStore({ doc: clients.doc, tableName: resources.tableName });
      const queueOptions = { sqs: clients.sqs, queueUrl: resources.queueUrl };
      const engine = createEngine({
        log: store,
        heads: store,
        inbox: store,
        blobs: new S3BlobStore({ s3: clients.s3, bucket: resources.bucket }),
        queue: new SqsStepQueue(queueOptions),
        models: new StaticModelResolver({ 'scripted:dlq': new ScriptedModel([{ text: 'the answer' }]) }),
        registry: new AgentRegistry().register(
          defineAgent({ name: 'dlq', version: '1', model: { id: 'scripted:dlq', maxOutputTokens: 64 }, system: { version: '1', text: 'x' }, tools: [] }),
        ),
        clock: new SystemClock(),
        ids: new CryptoIds(),
      });
      const run = { tenant: 'acme', runId: `dlq-${Date.now()}` };
      await startRun(engine, { ...run, agent: 'dlq', input: 'go' });

      // Phase 1: every delivery dies. The first one's worker got as far as its claim; the others
      // died before claiming (where most storm kills land). None deletes the tick.
      const receiver = new SqsTickReceiver(queueOptions);
      for (let delivery = 1; delivery <= MAX_RECEIVE_COUNT; delivery++) {
        let got = await receiver.receive({ waitSeconds: 2, visibilitySeconds: 1 });
        for (let i = 0; got.length === 0 && i < 10; i++) got = await receiver.receive({ waitSeconds: 2, visibilitySeconds: 1 });
        expect(got[0]?.tick, `delivery ${delivery}`).toMatchObject(run);
        if (delivery === 1) await store.claimLease(run, { owner: 'killed-worker', now: Date.now(), ttlMs: 1_000 });
      }
      await sleep(1_200);

      // Phase 2: SQS moved the tick to the DLQ; the run is running, with no tick left to step it.
      expect(await receiver.receive({ waitSeconds: 1 })).toEqual([]);
      const dead = await clients.sqs.send(new ReceiveMessageCommand({ QueueUrl: resources.deadLetterQueueUrl, WaitTimeSeconds: 1, MaxNumberOfMessages: 10 }));
      expect(dead.Messages?.map((m) => JSON.parse(m.Body ?? '{}') as unknown)).toEqual([run]);
      expect((await store.getHead(run))?.status).toBe('running');

      // Phase 3: the sweeper leaves it alone while it might still be stepping, and wakes it once
      // its head has not moved for SWEEP_STALL_MS; the fresh tick completes the run.
      expect(await sweep(engine, { now: Date.now() })).toEqual({ woken: 0 });
      expect(await sweep(engine, { now: Date.now() + SWEEP_STALL_MS + 1_000 })).toEqual({ woken: 1 });
      const [fresh] = await receiver.receive({ waitSeconds: 2 });
      expect(fresh?.tick).toMatchObject(run);
      const result = await runStep(engine, fresh!.tick!, { owner: 'w', deadlineAt: Date.now() + 300_000 });
      expect(result.outcome, JSON.stringify(await store.getHead(run))).toBe('ended');
      await receiver.delete(fresh!.receiptHandle);
      expect((await store.getHead(run))?.status).toBe('completed');
    } finally {
      await stack.dispose();
    }
  }, 60_000);
});
