import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import dynalite from 'dynalite';
import { buildApp } from 'fauxqs';
import { javaAvailable, startDynamoDbLocal, type RunningEmulator } from './dynamodb-local.js';

export { javaAvailable, startDynamoDbLocal, type RunningEmulator } from './dynamodb-local.js';

export type DynamoEngine = 'dynamodb-local' | 'dynalite';

export interface EmulatorEndpoints {
  dynamodb: string;
  s3: string;
  sqs: string;
}

export interface Emulators {
  endpoints: EmulatorEndpoints;
  /** Which DynamoDB emulator serves `endpoints.dynamodb`. */
  dynamo: DynamoEngine;
  stop(): Promise<void>;
}

export interface StartEmulatorsOptions {
  /** 'auto' (default): DynamoDB Local when `java` runs, dynalite otherwise. */
  dynamo?: 'auto' | DynamoEngine;
  java?: string;
}

/**
 * Starts the local stand-ins for DynamoDB, S3 and SQS on random free ports of 127.0.0.1.
 * DynamoDB Local runs as a child process that dies with this process; dynalite and fauxqs run
 * in-process. Call stop() to free everything.
 */
export async function startEmulators(options: StartEmulatorsOptions = {}): Promise<Emulators> {
  const choice = options.dynamo ?? 'auto';
  const dynamo: DynamoEngine =
    choice === 'auto' ? (javaAvailable(options.java) ? 'dynamodb-local' : 'dynalite') : choice;
  const started: RunningEmulator[] = [];
  try {
    const [ddb, aws] = await Promise.all([
      dynamo === 'dynamodb-local' ? startDynamoDbLocal({ java: options.java }) : startDynalite(),
      startFauxqs(),
    ]);
    started.push(ddb, aws);
    return {
      endpoints: { dynamodb: ddb.endpoint, s3: aws.endpoint, sqs: aws.endpoint },
      dynamo,
      stop: () => stopAll(started),
    };
  } catch (error) {
    await stopAll(started);
    throw error;
  }
}

async function stopAll(emulators: RunningEmulator[]): Promise<void> {
  await Promise.allSettled(emulators.map((e) => e.stop()));
}

/** dynalite in this process, in memory, tables active at once. */
export async function startDynalite(): Promise<RunningEmulator> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  const port = await listen(server);
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () => closeServer(server),
  };
}

/** fauxqs (SQS and S3) in this process. */
export async function startFauxqs(): Promise<RunningEmulator> {
  const app = buildApp({ logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: async () => {
      app.server.closeAllConnections();
      await app.close();
    },
  };
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}
