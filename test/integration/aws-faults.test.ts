// Faults the emulators cannot produce (throttling, 5xx, a reply lost after the write landed),
// injected with aws-sdk-client-mock in front of a real client talking to dynalite and fauxqs.
import { InternalServerError, ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, PutObjectCommand, S3ServiceException } from '@aws-sdk/client-s3';
import { SendMessageCommand, SQSServiceException } from '@aws-sdk/client-sqs';
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalAwsClients, type AwsClients } from '../../lib/adapters/aws/aws-clients.js';
import { DynamoStore } from '../../lib/adapters/aws/dynamo-store.js';
import { S3BlobStore } from '../../lib/adapters/aws/s3-blob-store.js';
import { SqsStepQueue } from '../../lib/adapters/aws/sqs-step-queue.js';
import { ManualClock } from '../../lib/adapters/memory/manual-clock.js';
import { ThrottledError, TransientStoreError } from '../../lib/core/errors.js';
import { parseEvent } from '../../lib/core/events.js';
import { createTestStack, endpointsFor, type TestStack } from '../setup/emulator-context.js';
import { newHead, newRun, smallEvent, writer } from '../contract/fixtures.js';

const meta = { $metadata: { httpStatusCode: 400 } };
const throttle = () => new ProvisionedThroughputExceededException({ message: 'Rate of requests exceeds the allowed throughput', ...meta });
const serverError = () => new InternalServerError({ message: 'Internal server error', $metadata: { httpStatusCode: 500 } });

describe.runIf(endpointsFor('dynalite'))('AWS adapters under injected faults', () => {
  let stack: TestStack;
  let faulty: AwsClients;
  const sleeps: number[] = [];
  const retry = { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1_000, sleep: async (ms: number) => void sleeps.push(ms), random: () => 0.5 };

  beforeAll(async () => {
    stack = await createTestStack('dynalite', 'faults');
    faulty = createLocalAwsClients(stack.endpoints);
  });
  afterAll(async () => {
    faulty.destroy();
    await stack.dispose();
  });

  /** A document client whose calls go to the emulator unless a test scripts a fault first. */
  function mockedDoc() {
    const doc = DynamoDBDocumentClient.from(faulty.dynamodb);
    const mock = mockClient(doc);
    const real = stack.clients.doc;
    mock.on(PutCommand).callsFake((input) => real.send(new PutCommand(input)));
    mock.on(GetCommand).callsFake((input) => real.send(new GetCommand(input)));
    mock.on(UpdateCommand).callsFake((input) => real.send(new UpdateCommand(input)));
    mock.on(QueryCommand).callsFake((input) => real.send(new QueryCommand(input)));
    mock.on(DeleteCommand).callsFake((input) => real.send(new DeleteCommand(input)));
    const store = new DynamoStore({ doc, tableName: stack.resources.tableName, retry, now: () => new ManualClock().now() });
    return { mock, store, real };
  }

  it('retries throttled requests with backoff and jitter, then succeeds', async () => {
    const { mock, store } = mockedDoc();
    mock
      .on(PutCommand)
      .rejectsOnce(throttle())
      .rejectsOnce(throttle())
      .callsFake((input) => stack.clients.doc.send(new PutCommand(input)));
    sleeps.length = 0;
    const run = newRun();
    await store.append(run, smallEvent(1, writer(1)));
    expect(mock.commandCalls(PutCommand)).toHaveLength(3);
    // Full jitter at random() = 0.5: half of min(max, base * 2^retry).
    expect(sleeps).toEqual([50, 100]);
    expect((await store.read(run, { afterSeq: 0 })).events).toHaveLength(1);
  });

  it('gives up after maxAttempts with a retryable ThrottledError', async () => {
    const { mock, store } = mockedDoc();
    mock.on(PutCommand).rejects(throttle());
    sleeps.length = 0;
    const error = await store.append(newRun(), smallEvent(1, writer(1))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ThrottledError);
    expect((error as ThrottledError).retryable).toBe(true);
    expect(mock.commandCalls(PutCommand)).toHaveLength(4);
    expect(sleeps).toEqual([50, 100, 200]);
  });

  it('maps a persistent 5xx to TransientStoreError', async () => {
    const { mock, store } = mockedDoc();
    mock.on(GetCommand).rejects(serverError());
    await expect(store.getHead(newRun())).rejects.toBeInstanceOf(TransientStoreError);
    expect(store.stats.requests).toBe(4);
  });

  it('does not retry a request the service refused as invalid', async () => {
    const { mock, store } = mockedDoc();
    const invalid = Object.assign(new Error('One or more parameter values were invalid'), { name: 'ValidationException', ...meta });
    mock.on(QueryCommand).rejects(invalid);
    await expect(store.read(newRun(), { afterSeq: 0 })).rejects.toBe(invalid);
    expect(store.stats.requests).toBe(1);
  });

  it('recognises its own append when the write landed but the reply was lost', async () => {
    const { mock, store } = mockedDoc();
    const run = newRun();
    const event = smallEvent(1, writer(7));
    mock
      .on(PutCommand)
      .callsFakeOnce(async (input) => {
        await stack.clients.doc.send(new PutCommand(input));
        throw serverError();
      })
      .callsFake((input) => stack.clients.doc.send(new PutCommand(input)));
    await store.append(run, event); // the retry meets its own item: success, not a conflict
    expect(parseEvent(await store.readOne(run, 1))).toEqual(event);
  });

  it('recognises its own release when the update landed but the reply was lost', async () => {
    const { mock, store } = mockedDoc();
    const run = newRun();
    const now = new ManualClock().now();
    await store.createHead(newHead(run, now));
    const grant = await store.claimLease(run, { owner: 'A', now, ttlMs: 60_000 });
    mock
      .on(UpdateCommand)
      .callsFakeOnce(async (input) => {
        await stack.clients.doc.send(new UpdateCommand(input));
        throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
      })
      .callsFake((input) => stack.clients.doc.send(new UpdateCommand(input)));
    expect(await store.releaseLease(run, { owner: 'A', epoch: grant.epoch, inboxVersion: 0 })).toBe(true);
    expect((await store.getHead(run))?.lease).toBeUndefined();
    // Without a lost reply, releasing twice is still a stale release.
    mock.on(UpdateCommand).callsFake((input) => stack.clients.doc.send(new UpdateCommand(input)));
    await expect(store.releaseLease(run, { owner: 'A', epoch: grant.epoch, inboxVersion: 0 })).rejects.toMatchObject({
      code: 'lease_lost',
    });
  });

  it('retries S3 SlowDown and SQS throttling the same way', async () => {
    const s3 = mockClient(faulty.s3);
    const slowDown = new S3ServiceException({ name: 'SlowDown', $fault: 'server', message: 'Please reduce your request rate', $metadata: { httpStatusCode: 503 } });
    s3.on(PutObjectCommand)
      .rejectsOnce(slowDown)
      .callsFake((input) => stack.clients.s3.send(new PutObjectCommand(input)));
    s3.on(GetObjectCommand).callsFake((input) => stack.clients.s3.send(new GetObjectCommand(input)));
    const blobs = new S3BlobStore({ s3: faulty.s3, bucket: stack.resources.bucket, retry });
    await blobs.put('snapshots/x.json', new TextEncoder().encode('{}'));
    expect(blobs.stats.requests).toBe(2);
    expect(new TextDecoder().decode(await blobs.get('snapshots/x.json'))).toBe('{}');
    s3.restore();

    const sqs = mockClient(faulty.sqs);
    const throttled = new SQSServiceException({ name: 'ThrottlingException', $fault: 'client', message: 'Rate exceeded', $metadata: { httpStatusCode: 400 } });
    sqs.on(SendMessageCommand).rejects(throttled);
    const queue = new SqsStepQueue({ sqs: faulty.sqs, queueUrl: stack.resources.queueUrl, retry });
    await expect(queue.enqueue({ tenant: 't', runId: 'r' }, { dedupeId: 'r:1:1' })).rejects.toBeInstanceOf(ThrottledError);
    expect(queue.stats.requests).toBe(4);
    sqs.restore();
  });
});
