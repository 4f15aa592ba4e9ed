// SQS FIFO behaviour the worker relies on, on fauxqs with the real SDK client: ticks validated
// on both ends, one tick of a run in flight at a time, visibility control, redrive to the DLQ.
import { GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HINT_ATTRIBUTE, SqsStepQueue, SqsTickReceiver, SqsTickVisibility, parseTick, parseTickHint, sqsDeduplicationId } from '../../lib/adapters/aws/sqs-step-queue.js';
import { ValidationError } from '../../lib/core/errors.js';
import { createTestStack, endpointsFor, type TestStack } from '../setup/emulator-context.js';
import { NO_WAIT_RETRY } from '../contract/targets.js';
import { newRun } from '../contract/fixtures.js';

describe.runIf(endpointsFor('dynalite'))('SQS step queue on fauxqs', () => {
  let stack: TestStack;
  let queue: SqsStepQueue;
  let receiver: SqsTickReceiver;
  let visibility: SqsTickVisibility;

  beforeAll(async () => {
    stack = await createTestStack('dynalite', 'sqs-it');
    const options = { sqs: stack.clients.sqs, queueUrl: stack.resources.queueUrl, retry: NO_WAIT_RETRY };
    queue = new SqsStepQueue(options);
    receiver = new SqsTickReceiver(options);
    visibility = new SqsTickVisibility(options);
  });
  afterAll(async () => {
    await stack.dispose();
  });

  async function drainAll(): Promise<void> {
    for (let batch = await receiver.receive({ max: 10 }); batch.length; batch = await receiver.receive({ max: 10 })) {
      for (const m of batch) await receiver.delete(m.receiptHandle);
    }
  }

  it('creates a FIFO queue with explicit dedupe and a DLQ after 5 receives', async () => {
    const out = await stack.clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: stack.resources.queueUrl, AttributeNames: ['All'] }),
    );
    expect(out.Attributes?.FifoQueue).toBe('true');
    expect(out.Attributes?.ContentBasedDeduplication).toBe('false');
    expect(JSON.parse(out.Attributes?.RedrivePolicy ?? '{}')).toMatchObject({ maxReceiveCount: 5 });
  });

  it('sends {tenant, runId} grouped by run id', async () => {
    const run = newRun();
    await queue.enqueue(run, { dedupeId: `${run.runId}:1:1` });
    const [m] = await receiver.receive();
    expect(JSON.parse(m?.body ?? '')).toEqual({ tenant: run.tenant, runId: run.runId });
    expect(m).toMatchObject({ tick: run, groupId: run.runId, dedupeId: `${run.runId}:1:1`, receiveCount: 1 });
    await receiver.delete(m!.receiptHandle);
  });

  it('sends a load hint beside the body (which stays {tenant, runId}), and ignores one that is not a hint', async () => {
    const run = newRun();
    const hint = { snapshot: { seq: 50, key: 'snapshots/t/r/0000000050-abc.json', sha256: 'd'.repeat(64), foldVersion: 3 } };
    await queue.enqueue({ ...run, hint }, { dedupeId: `${run.runId}:51:1` });
    const [m] = await receiver.receive();
    expect(JSON.parse(m?.body ?? '')).toEqual({ tenant: run.tenant, runId: run.runId });
    expect(m?.tick).toEqual({ ...run, hint });
    await receiver.delete(m!.receiptHandle);
    // A worker that knew no hints parses the body alone: strict, and it still does.
    expect(parseTick(m!.body)).toEqual(run);
    const group = newRun().runId;
    await stack.clients.sqs.send(
      new SendMessageCommand({
        QueueUrl: stack.resources.queueUrl,
        MessageBody: JSON.stringify(run),
        MessageGroupId: group,
        MessageDeduplicationId: `${group}:odd-hint`,
        MessageAttributes: { [HINT_ATTRIBUTE]: { DataType: 'String', StringValue: '{"snapshot":{"seq":-1}}' } },
      }),
    );
    const [odd] = await receiver.receive();
    expect(odd?.tick).toEqual(run);
    await receiver.delete(odd!.receiptHandle);
    for (const text of ['not json', '{}', '{"snapshot":{"seq":1,"key":"k","sha256":"short","foldVersion":1}}', '[]']) expect(parseTickHint(text)).toBeUndefined();
    expect(parseTickHint('{"snapshot":null}')).toEqual({ snapshot: null });
  });

  it('rejects malformed tick bodies on receive, and never sends one', async () => {
    const bad = ['not json', '[]', '{}', '{"tenant":"t"}', '{"tenant":"t","runId":"has space"}', '{"tenant":"t","runId":"r","command":"cancel"}', '{"tenant":"t#x","runId":"r"}'];
    for (const body of bad) expect(() => parseTick(body)).toThrow(ValidationError);
    expect(parseTick('{"tenant":"acme","runId":"r-1_A"}')).toEqual({ tenant: 'acme', runId: 'r-1_A' });
    const group = newRun().runId;
    await stack.clients.sqs.send(
      new SendMessageCommand({ QueueUrl: stack.resources.queueUrl, MessageBody: '{"runId":"x"}', MessageGroupId: group, MessageDeduplicationId: `${group}:bad` }),
    );
    const [m] = await receiver.receive();
    expect(m?.tick).toBeUndefined();
    expect(m?.error).toBeInstanceOf(ValidationError);
    await receiver.delete(m!.receiptHandle);
    await expect(queue.enqueue({ tenant: 'acme', runId: 'bad id' }, { dedupeId: 'x:1:1' })).rejects.toBeInstanceOf(ValidationError);
    await expect(queue.enqueue({ tenant: 'acme', runId: 'r' }, { dedupeId: 'é'.repeat(3) })).rejects.toBeInstanceOf(ValidationError);
    await expect(queue.enqueue({ tenant: 'acme', runId: 'r' }, { dedupeId: 'x'.repeat(129) })).rejects.toBeInstanceOf(ValidationError);
  });

  it('never swallows a wake-up of another tenant whose run has the same id and dedupe id', async () => {
    await drainAll();
    const runId = newRun().runId;
    const a = { tenant: 'tenant-a', runId };
    const b = { tenant: 'tenant-b', runId };
    await queue.enqueue(a, { dedupeId: `${runId}:5:2` });
    await queue.enqueue(b, { dedupeId: `${runId}:5:2` });
    await queue.enqueue(b, { dedupeId: `${runId}:5:2` }); // a true duplicate is still dropped
    const got = [];
    for (let batch = await receiver.receive({ max: 10 }); batch.length; batch = await receiver.receive({ max: 10 })) {
      for (const m of batch) {
        got.push({ tick: m.tick, dedupeId: m.dedupeId });
        await receiver.delete(m.receiptHandle);
      }
    }
    expect(got).toEqual([
      { tick: a, dedupeId: `${runId}:5:2` },
      { tick: b, dedupeId: `${runId}:5:2` },
    ]);
    expect(sqsDeduplicationId('t', 'x'.repeat(128))).toMatch(/^[0-9a-f]{64}$/);
  });

  it('holds the next tick of a run while one is in flight, not ticks of other runs', async () => {
    await drainAll();
    const a = newRun('a');
    const b = newRun('b');
    await queue.enqueue(a, { dedupeId: `${a.runId}:1:1` });
    await queue.enqueue(a, { dedupeId: `${a.runId}:2:1` });
    await queue.enqueue(b, { dedupeId: `${b.runId}:1:1` });
    const first = await receiver.receive({ max: 10 });
    expect(first.map((m) => m.dedupeId).sort()).toEqual([`${a.runId}:1:1`, `${b.runId}:1:1`].sort());
    expect(await receiver.receive({ max: 10 })).toEqual([]);
    for (const m of first) await receiver.delete(m.receiptHandle);
    const next = await receiver.receive({ max: 10 });
    expect(next.map((m) => m.dedupeId)).toEqual([`${a.runId}:2:1`]);
    await receiver.delete(next[0]!.receiptHandle);
  });

  it('controls the visibility of the tick in flight', async () => {
    await drainAll();
    const run = newRun();
    await queue.enqueue(run, { dedupeId: `${run.runId}:1:1` });
    const [m] = await receiver.receive({ visibilitySeconds: 600 });
    expect(await receiver.receive()).toEqual([]);
    await visibility.setVisibility(m!.receiptHandle, 0); // give it back at once (a worker that stops)
    const [again] = await receiver.receive();
    expect(again?.messageId).toBe(m?.messageId);
    expect(again?.receiveCount).toBe(2);
    await visibility.setVisibility(again!.receiptHandle, 120); // extended with the lease heartbeat
    expect(await receiver.receive()).toEqual([]);
    await receiver.delete(again!.receiptHandle);
    await expect(visibility.setVisibility(again!.receiptHandle, 30)).rejects.toBeInstanceOf(ValidationError);
  });

  it('moves a tick that fails 5 times to the dead-letter queue', async () => {
    await drainAll();
    const run = newRun();
    await queue.enqueue(run, { dedupeId: `${run.runId}:poison` });
    for (let i = 1; i <= 5; i++) {
      const [m] = await receiver.receive();
      expect(m?.receiveCount).toBe(i);
      await visibility.setVisibility(m!.receiptHandle, 0); // the invocation failed
    }
    expect(await receiver.receive()).toEqual([]);
    const dlq = new SqsTickReceiver({ sqs: stack.clients.sqs, queueUrl: stack.resources.deadLetterQueueUrl });
    const [dead] = await dlq.receive();
    expect(dead?.tick).toEqual(run);
    await dlq.delete(dead!.receiptHandle);
  });
});
