import { randomBytes } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { inject } from 'vitest';
import { createLocalAwsClients, type AwsClients } from '../../lib/adapters/aws/aws-clients.js';
import type { EmulatorEndpoints } from '../../dev/local/emulators.js';
import { createResources, resourceNames, type CreatedResources } from '../../dev/local/resources.js';

/** What the global setup hands to test files: endpoints of the running emulators. */
export interface TestEmulators {
  dynamodbLocal: string | null;
  dynalite: string | null;
  fauxqs: string | null;
  /** Why an emulator is missing, for skip messages. */
  reason: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    emulators: TestEmulators;
  }
}

export type DynamoTarget = 'dynamodb-local' | 'dynalite';

export function emulators(): TestEmulators {
  return inject('emulators');
}

/** Endpoints for one DynamoDB emulator plus fauxqs, or undefined when it is not running. */
export function endpointsFor(target: DynamoTarget): EmulatorEndpoints | undefined {
  const e = emulators();
  const dynamodb = target === 'dynamodb-local' ? e.dynamodbLocal : e.dynalite;
  if (!dynamodb || !e.fauxqs) return undefined;
  return { dynamodb, s3: e.fauxqs, sqs: e.fauxqs };
}

/** A prefix unique to this test file's run: resources never collide across parallel files. */
export function uniquePrefix(label: string): string {
  return `t-${label}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

export interface TestStack {
  target: DynamoTarget;
  endpoints: EmulatorEndpoints;
  clients: AwsClients;
  resources: CreatedResources;
  dispose(): Promise<void>;
}

/** Creates a table, bucket and queues with unique names on the given emulators. */
export async function createTestStack(target: DynamoTarget, label: string): Promise<TestStack> {
  const endpoints = endpointsFor(target);
  if (!endpoints) throw new Error(`${target} is not running: ${emulators().reason}`);
  // No TTL: the worlds on these tables run on a ManualClock (2026-11-01 onwards), and DynamoDB
  // Local would delete what that clock calls fresh but the machine's clock calls expired.
  const resources = await createResources(endpoints, resourceNames(uniquePrefix(label)), { timeToLive: false });
  const clients = createLocalAwsClients(endpoints);
  return {
    target,
    endpoints,
    clients,
    resources,
    async dispose() {
      // Free the emulator's memory (DynamoDB Local keeps everything in its heap).
      await clients.dynamodb.send(new DeleteTableCommand({ TableName: resources.tableName })).catch(() => undefined);
      clients.destroy();
    },
  };
}
