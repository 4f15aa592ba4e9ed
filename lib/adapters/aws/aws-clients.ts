import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * How to reach AWS or the local emulators. On AWS leave `endpoints` and `credentials` unset (the
 * default provider chain applies); locally pass the emulator endpoints and test/test.
 */
export interface AwsClientConfig {
  region?: string;
  endpoints?: { dynamodb?: string; s3?: string; sqs?: string };
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Per-request timeout; a timed-out request is retried by the adapters' retry loop. */
  requestTimeoutMs?: number;
  connectionTimeoutMs?: number;
}

export interface AwsClients {
  dynamodb: DynamoDBClient;
  /** Document client over `dynamodb`: plain JS values in and out. */
  doc: DynamoDBDocumentClient;
  s3: S3Client;
  sqs: SQSClient;
  destroy(): void;
}

/** Credentials the emulators accept (DynamoDB Local rejects non-alphanumeric key ids). */
export const LOCAL_CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test' } as const;

export function createAwsClients(config: AwsClientConfig = {}): AwsClients {
  const common = {
    region: config.region ?? process.env.AWS_REGION ?? 'us-east-1',
    ...(config.credentials ? { credentials: config.credentials } : {}),
    // The adapters retry with backoff and jitter themselves (aws-errors.ts): one attempt here.
    maxAttempts: 1,
    requestHandler: {
      requestTimeout: config.requestTimeoutMs ?? 10_000,
      connectionTimeout: config.connectionTimeoutMs ?? 3_000,
    },
  };
  const dynamodb = new DynamoDBClient({ ...common, ...endpoint(config.endpoints?.dynamodb) });
  const doc = DynamoDBDocumentClient.from(dynamodb, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
  const s3 = new S3Client({
    ...common,
    requestHandler: { ...common.requestHandler, requestTimeout: config.requestTimeoutMs ?? 30_000 },
    ...endpoint(config.endpoints?.s3),
    // Local endpoints have no virtual-hosted bucket names.
    forcePathStyle: config.endpoints?.s3 !== undefined,
  });
  const sqs = new SQSClient({
    ...common,
    ...endpoint(config.endpoints?.sqs),
    // Queue URLs from emulators name hosts that do not resolve: always use the configured endpoint.
    useQueueUrlAsEndpoint: config.endpoints?.sqs === undefined,
  });
  return {
    dynamodb,
    doc,
    s3,
    sqs,
    destroy() {
      doc.destroy();
      dynamodb.destroy();
      s3.destroy();
      sqs.destroy();
    },
  };
}

/** Clients for the local emulators: the given endpoints, test credentials, us-east-1. */
export function createLocalAwsClients(endpoints: { dynamodb: string; s3: string; sqs: string }): AwsClients {
  return createAwsClients({ region: 'us-east-1', endpoints, credentials: LOCAL_CREDENTIALS });
}

function endpoint(url: string | undefined): { endpoint?: string } {
  return url === undefined ? {} : { endpoint: url };
}
