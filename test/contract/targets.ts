import { PutObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { createLocalAwsClients } from '../../lib/adapters/aws/aws-clients.js';
import { DynamoStore } from '../../lib/adapters/aws/dynamo-store.js';
import { eventSk, pk, streamSk } from '../../lib/adapters/aws/dynamo-keys.js';
import { DynamoRunStream } from '../../lib/adapters/aws/dynamo-run-stream.js';
import { MemoryRunStream } from '../../lib/adapters/memory/memory-run-stream.js';
import { S3BlobStore } from '../../lib/adapters/aws/s3-blob-store.js';
import { SqsStepQueue, SqsTickReceiver } from '../../lib/adapters/aws/sqs-step-queue.js';
import { ManualClock } from '../../lib/adapters/memory/manual-clock.js';
import { MemoryAdmission } from '../../lib/adapters/memory/memory-admission.js';
import { MemoryBlobStore } from '../../lib/adapters/memory/memory-blob-store.js';
import { MemoryStepQueue } from '../../lib/adapters/memory/memory-step-queue.js';
import { MemoryStore } from '../../lib/adapters/memory/memory-store.js';
import { createTestStack, endpointsFor, type DynamoTarget } from '../setup/emulator-context.js';
import type { AdmissionTarget } from './admission.contract.js';
import type { RunStreamTarget } from './run-stream.contract.js';
import type { BlobStoreTarget } from './blob-store.contract.js';
import type { StoreTarget } from './fixtures.js';
import type { DeliveredTick, StepQueueTarget } from './step-queue.contract.js';

/** Retries without real waiting: tests count attempts, they never sleep. */
export const NO_WAIT_RETRY = { sleep: async () => undefined };

export const memoryStoreTarget: StoreTarget = {
  name: 'memory',
  enforcesItemLimit: true,
  available: true,
  async setup() {
    const store = new MemoryStore();
    return {
      store,
      clock: new ManualClock(),
      corrupt: async (run, seq) => store.corrupt(run, seq, { seq, garbage: true }),
      peer: () => store,
      dispose: async () => undefined,
    };
  },
};

export function dynamoStoreTarget(target: DynamoTarget): StoreTarget {
  return {
    name: target,
    enforcesItemLimit: true,
    available: endpointsFor(target) !== undefined,
    async setup() {
      const stack = await createTestStack(target, `${target === 'dynalite' ? 'dl' : 'ddb'}-store`);
      const clock = new ManualClock();
      const tableName = stack.resources.tableName;
      const store = new DynamoStore({ doc: stack.clients.doc, tableName, now: () => clock.now(), retry: NO_WAIT_RETRY });
      const peerClients = createLocalAwsClients(stack.endpoints);
      const peer = new DynamoStore({ doc: peerClients.doc, tableName, now: () => clock.now(), retry: NO_WAIT_RETRY });
      return {
        store,
        clock,
        peer: () => peer,
        async corrupt(run, seq) {
          await stack.clients.doc.send(
            new PutCommand({ TableName: tableName, Item: { pk: pk(run), sk: eventSk(seq), seq, type: 'x', data: '{not json' } }),
          );
        },
        async dispose() {
          peerClients.destroy();
          await stack.dispose();
        },
      };
    },
  };
}

export const memoryBlobTarget: BlobStoreTarget = {
  name: 'memory',
  available: true,
  verifiesIntegrity: true,
  async setup() {
    const blobs = new MemoryBlobStore();
    return { blobs, tamper: async (key, bytes) => blobs.tamper(key, bytes), dispose: async () => undefined };
  },
};

export const s3BlobTarget: BlobStoreTarget = {
  name: 'fauxqs S3',
  available: endpointsFor('dynalite') !== undefined,
  verifiesIntegrity: true,
  async setup() {
    const stack = await createTestStack('dynalite', 's3');
    const bucket = stack.resources.bucket;
    return {
      blobs: new S3BlobStore({ s3: stack.clients.s3, bucket, retry: NO_WAIT_RETRY }),
      async tamper(key, bytes) {
        await stack.clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes }));
      },
      dispose: () => stack.dispose(),
    };
  },
};

export const memoryQueueTarget: StepQueueTarget = {
  name: 'memory',
  available: true,
  async setup() {
    const queue = new MemoryStepQueue();
    return {
      queue,
      async drain() {
        const out: DeliveredTick[] = [];
        for (let m = queue.take(); m; m = queue.take()) out.push({ tick: m.tick, dedupeId: m.dedupeId });
        return out;
      },
      dispose: async () => undefined,
    };
  },
};

export const sqsQueueTarget: StepQueueTarget = {
  name: 'fauxqs SQS FIFO',
  available: endpointsFor('dynalite') !== undefined,
  async setup() {
    const stack = await createTestStack('dynalite', 'sqs');
    const options = { sqs: stack.clients.sqs, queueUrl: stack.resources.queueUrl, retry: NO_WAIT_RETRY };
    const receiver = new SqsTickReceiver(options);
    return {
      queue: new SqsStepQueue(options),
      async drain() {
        const out: DeliveredTick[] = [];
        for (;;) {
          const batch = await receiver.receive({ max: 10 });
          if (batch.length === 0) return out;
          for (const m of batch) {
            if (!m.tick) throw new Error(`malformed tick on the queue: ${m.body}`);
            out.push({ tick: m.tick, dedupeId: m.dedupeId ?? '' });
            await receiver.delete(m.receiptHandle);
          }
        }
      },
      dispose: () => stack.dispose(),
    };
  },
};

export const memoryAdmissionTarget: AdmissionTarget = {
  name: 'memory',
  available: true,
  async setup() {
    return { admission: new MemoryAdmission(), dispose: async () => undefined };
  },
};

export function dynamoAdmissionTarget(target: DynamoTarget): AdmissionTarget {
  return {
    name: target,
    available: endpointsFor(target) !== undefined,
    async setup() {
      const stack = await createTestStack(target, `${target === 'dynalite' ? 'dl' : 'ddb'}-adm`);
      const admission = new DynamoStore({ doc: stack.clients.doc, tableName: stack.resources.tableName, retry: NO_WAIT_RETRY });
      return { admission, dispose: () => stack.dispose() };
    },
  };
}

export const memoryRunStreamTarget: RunStreamTarget = {
  name: 'memory',
  available: true,
  async setup() {
    const clock = new ManualClock();
    const stream = new MemoryRunStream({ now: () => clock.now() });
    return { stream, peer: stream, clock, dispose: async () => undefined };
  },
};

export function dynamoRunStreamTarget(target: DynamoTarget): RunStreamTarget {
  return {
    name: target,
    available: endpointsFor(target) !== undefined,
    async setup() {
      const stack = await createTestStack(target, `${target === 'dynalite' ? 'dl' : 'ddb'}-stream`);
      const clock = new ManualClock();
      const tableName = stack.resources.tableName;
      const peerClients = createLocalAwsClients(stack.endpoints);
      const options = { tableName, now: () => clock.now(), retry: NO_WAIT_RETRY };
      return {
        stream: new DynamoRunStream({ ...options, doc: stack.clients.doc }),
        peer: new DynamoRunStream({ ...options, doc: peerClients.doc }),
        clock,
        async storedTtl(run, callSeq, index) {
          const out = await stack.clients.doc.send(new GetCommand({ TableName: tableName, Key: { pk: pk(run), sk: streamSk(callSeq, index) } }));
          return out.Item?.expiresAtSec as number | undefined;
        },
        async dispose() {
          peerClients.destroy();
          await stack.dispose();
        },
      };
    },
  };
}
