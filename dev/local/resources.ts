import {
  CreateTableCommand,
  DescribeTableCommand,
  UpdateTimeToLiveCommand,
  type AttributeDefinition,
  type DynamoDBClient,
  type GlobalSecondaryIndex,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { createLocalAwsClients } from '../../lib/adapters/aws/aws-clients.js';
import { KEY_ATTRIBUTE_TYPES, QUEUES, TABLE } from '../../lib/adapters/aws/table-definition.js';
import { MAX_RECEIVE_COUNT, STEP_QUEUE_RETENTION_S, STEP_QUEUE_VISIBILITY_S } from '../../lib/core/limits.js';
import type { EmulatorEndpoints } from './emulators.js';

/** Names of one Logbook stack's resources. Queue names end in .fifo. */
export interface ResourceNames {
  table: string;
  bucket: string;
  queue: string;
  deadLetterQueue: string;
}

export interface CreatedResources {
  names: ResourceNames;
  tableName: string;
  bucket: string;
  queueUrl: string;
  deadLetterQueueUrl: string;
}

/**
 * Names derived from a prefix, e.g. a test file's unique id or 'logbook-local'. S3 bucket names
 * allow only lower-case letters, digits, dots and hyphens: the prefix is normalised to that.
 */
export function resourceNames(prefix: string): ResourceNames {
  const p = prefix.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40) || 'logbook';
  return {
    table: `${p}-runs`,
    bucket: `${p}-payloads`,
    queue: `${p}-${QUEUES.steps.name}`,
    deadLetterQueue: `${p}-${QUEUES.deadLetter.name}`,
  };
}

export interface CreateResourcesOptions {
  visibilityTimeoutSeconds?: number;
  /**
   * Enable TTL on the table (default true, as on AWS). Pass false for a table that tests drive
   * with a ManualClock: DynamoDB Local deletes items whose TTL is past by the machine's clock
   * (right after TTL is enabled, in its first scan of the table), so an item a test's clock
   * calls fresh (a head completed "on 2026-11-01" with 30 days' retention) can vanish mid-test
   * once the real date is later. Readers filter expired items by their own clock either way.
   */
  timeToLive?: boolean;
}

/**
 * Creates the table (keys, GSIs, TTL), the bucket and the FIFO queues with their DLQ from the
 * shared table definition, as the CDK stack does on AWS. Safe to call again on existing resources.
 */
export async function createResources(endpoints: EmulatorEndpoints, names: ResourceNames, options: CreateResourcesOptions = {}): Promise<CreatedResources> {
  const clients = createLocalAwsClients(endpoints);
  try {
    const [, , queues] = await Promise.all([
      createTable(clients.dynamodb, names.table, { timeToLive: options.timeToLive ?? true }),
      createBucket(clients.s3, names.bucket),
      createQueues(clients.sqs, names, options.visibilityTimeoutSeconds ?? STEP_QUEUE_VISIBILITY_S),
    ]);
    return { names, tableName: names.table, bucket: names.bucket, ...queues };
  } finally {
    clients.destroy();
  }
}

export async function createTable(dynamodb: DynamoDBClient, tableName: string, options: { timeToLive?: boolean } = {}): Promise<void> {
  const keys = new Set<string>([TABLE.partitionKey, TABLE.sortKey]);
  for (const gsi of Object.values(TABLE.gsi)) keys.add(gsi.partitionKey).add(gsi.sortKey);
  const attributeDefinitions: AttributeDefinition[] = [...keys].map((name) => {
    const type = KEY_ATTRIBUTE_TYPES[name];
    if (!type) throw new Error(`table-definition has no attribute type for key ${name}`);
    return { AttributeName: name, AttributeType: type };
  });
  const indexes: GlobalSecondaryIndex[] = Object.values(TABLE.gsi).map((gsi) => ({
    IndexName: gsi.name,
    KeySchema: [
      { AttributeName: gsi.partitionKey, KeyType: 'HASH' },
      { AttributeName: gsi.sortKey, KeyType: 'RANGE' },
    ],
    // As the CDK stack: see TABLE.gsiProjection.
    Projection: { ProjectionType: TABLE.gsiProjection },
  }));
  try {
    await dynamodb.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: attributeDefinitions,
        KeySchema: [
          { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
          { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: indexes,
      }),
    );
  } catch (error) {
    if ((error as { name?: string }).name !== 'ResourceInUseException') throw error;
  }
  await waitActive(dynamodb, tableName);
  if (options.timeToLive === false) return;
  try {
    await dynamodb.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true },
      }),
    );
  } catch (error) {
    // dynalite has no UpdateTimeToLive; DynamoDB Local refuses enabling it twice. Readers filter
    // expired items themselves, so TTL is only housekeeping here.
    const name = (error as { name?: string }).name;
    if (name !== 'UnknownOperationException' && name !== 'ValidationException') throw error;
  }
}

async function waitActive(dynamodb: DynamoDBClient, tableName: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const out = await dynamodb.send(new DescribeTableCommand({ TableName: tableName }));
    const indexesActive = (out.Table?.GlobalSecondaryIndexes ?? []).every((g) => g.IndexStatus === 'ACTIVE');
    if (out.Table?.TableStatus === 'ACTIVE' && indexesActive) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`table ${tableName} did not become ACTIVE`);
}

export async function createBucket(s3: S3Client, bucket: string): Promise<void> {
  try {
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw error;
  }
}

export async function createQueues(
  sqs: SQSClient,
  names: Pick<ResourceNames, 'queue' | 'deadLetterQueue'>,
  /** Six times the worker's timeout, as on AWS; the local stack runs a shorter worker timeout. */
  visibilityTimeoutSeconds: number = STEP_QUEUE_VISIBILITY_S,
): Promise<{ queueUrl: string; deadLetterQueueUrl: string }> {
  const fifo = { FifoQueue: 'true', ContentBasedDeduplication: 'false' };
  const dlq = await sqs.send(
    new CreateQueueCommand({
      QueueName: names.deadLetterQueue,
      Attributes: { ...fifo, MessageRetentionPeriod: String(14 * 86_400) },
    }),
  );
  const deadLetterQueueUrl = dlq.QueueUrl ?? '';
  const attrs = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: deadLetterQueueUrl, AttributeNames: ['QueueArn'] }),
  );
  const steps = await sqs.send(
    new CreateQueueCommand({
      QueueName: names.queue,
      Attributes: {
        ...fifo,
        VisibilityTimeout: String(visibilityTimeoutSeconds),
        MessageRetentionPeriod: String(STEP_QUEUE_RETENTION_S),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: attrs.Attributes?.QueueArn,
          maxReceiveCount: MAX_RECEIVE_COUNT,
        }),
      },
    }),
  );
  return { queueUrl: steps.QueueUrl ?? '', deadLetterQueueUrl };
}
