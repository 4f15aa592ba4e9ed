// The local stack's building blocks: emulators on random ports that die with their parent, and
// resources created from the shared table definition (idempotently, as `npm start` restarts).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { DescribeTableCommand, DescribeTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { createLocalAwsClients } from '../../lib/adapters/aws/aws-clients.js';
import { TABLE } from '../../lib/adapters/aws/table-definition.js';
import { startEmulators, type EmulatorEndpoints } from '../../dev/local/emulators.js';
import { createResources, resourceNames } from '../../dev/local/resources.js';
import { createTestStack, emulators, endpointsFor } from '../setup/emulator-context.js';

const CHILD = fileURLToPath(new URL('../setup/emulator-child.ts', import.meta.url));

async function answers(endpoint: string): Promise<boolean> {
  try {
    await fetch(endpoint, { signal: AbortSignal.timeout(2_000) });
    return true;
  } catch {
    return false;
  }
}

describe('local emulators', () => {
  it('starts dynalite and fauxqs on 127.0.0.1 random ports, creates resources twice, stops', async () => {
    const local = await startEmulators({ dynamo: 'dynalite' });
    try {
      expect(local.dynamo).toBe('dynalite');
      for (const url of Object.values(local.endpoints)) expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const names = resourceNames('Logbook Local_Test');
      expect(names).toEqual({
        table: 'logbook-local-test-runs',
        bucket: 'logbook-local-test-payloads',
        queue: 'logbook-local-test-logbook-steps.fifo',
        deadLetterQueue: 'logbook-local-test-logbook-steps-dlq.fifo',
      });
      const first = await createResources(local.endpoints, names);
      const again = await createResources(local.endpoints, names);
      expect(again).toEqual(first);
      await expectShape(local.endpoints, first.tableName, first.queueUrl);
    } finally {
      await local.stop();
    }
    expect(await answers(local.endpoints.dynamodb)).toBe(false);
  });

  it.runIf(endpointsFor('dynamodb-local'))('creates the table with every GSI of the table definition on DynamoDB Local', async () => {
    const endpoints = endpointsFor('dynamodb-local')!;
    const created = await createResources(endpoints, resourceNames(`shape-${process.pid}`));
    await expectShape(endpoints, created.tableName, created.queueUrl);
  });

  // DynamoDB Local deletes items whose TTL is past by the machine's clock, in its first scan after
  // TTL is enabled: exactly when a test file's first run goes. The worlds on test tables run on a
  // ManualClock from 2026-11-01, so since 2026-12-01 a completed head (30 days' retention) is
  // "expired" to the emulator while fresh to the world, and a child run's head vanished mid-step
  // in CI. Test tables therefore have no TTL; the dev stack's tables keep it, as on AWS.
  it.runIf(endpointsFor('dynamodb-local'))('enables TTL on the dev stack table, and not on test tables (which run on a manual clock)', async () => {
    const endpoints = endpointsFor('dynamodb-local')!;
    const clients = createLocalAwsClients(endpoints);
    const stack = await createTestStack('dynamodb-local', 'ttl');
    try {
      const created = await createResources(endpoints, resourceNames(`ttl-${process.pid}`));
      const ttl = async (table: string) => (await clients.dynamodb.send(new DescribeTimeToLiveCommand({ TableName: table }))).TimeToLiveDescription;
      expect(await ttl(created.tableName)).toMatchObject({ TimeToLiveStatus: 'ENABLED', AttributeName: TABLE.ttlAttribute });
      expect((await ttl(stack.resources.tableName))?.TimeToLiveStatus).toBe('DISABLED');
    } finally {
      await stack.dispose();
      clients.destroy();
    }
  });

  it.runIf(emulators().dynamodbLocal)('kills DynamoDB Local when the process that started it dies, even by SIGKILL', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, 'dynamodb-local'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout! }).once('line', resolve);
        child.once('exit', (code) => reject(new Error(`child exited ${code}`)));
      });
      const { endpoints, dynamo } = JSON.parse(line) as { endpoints: EmulatorEndpoints; dynamo: string };
      expect(dynamo).toBe('dynamodb-local');
      expect(await answers(endpoints.dynamodb)).toBe(true);
      child.kill('SIGKILL'); // no exit handler runs: only the closed pipe can tell java
      let alive = true;
      for (let i = 0; i < 100 && alive; i++) {
        alive = await answers(endpoints.dynamodb);
        if (alive) await new Promise((r) => setTimeout(r, 100));
      }
      expect(alive).toBe(false);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});

async function expectShape(endpoints: EmulatorEndpoints, tableName: string, queueUrl: string): Promise<void> {
  const clients = createLocalAwsClients(endpoints);
  try {
    const table = (await clients.dynamodb.send(new DescribeTableCommand({ TableName: tableName }))).Table;
    expect(table?.KeySchema?.map((k) => k.AttributeName)).toEqual([TABLE.partitionKey, TABLE.sortKey]);
    const indexes = table?.GlobalSecondaryIndexes?.map((g) => [g.IndexName, g.Projection?.ProjectionType]).sort();
    expect(indexes).toEqual(Object.values(TABLE.gsi).map((g) => [g.name, TABLE.gsiProjection]).sort());
    const q = await clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['FifoQueue'] }));
    expect(q.Attributes?.FifoQueue).toBe('true');
  } finally {
    clients.destroy();
  }
}
