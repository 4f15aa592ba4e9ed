import { DeleteMessageCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { sqsRecord } from '../integration/runtime-helpers.js';
import type { TestStack } from '../setup/emulator-context.js';
import type { Sandbox } from './deployed-artifact-sandbox.js';

/**
 * Playing AWS around deployed bundles: API Gateway's HTTP API events (payload v2, after the
 * authorizer) and the SQS event source mapping (receive, invoke with batch size 1, delete unless
 * reported as a batch item failure).
 */

/** An HTTP API (payload v2) request as API Gateway hands it to the integration, after the authorizer. */
export function apiEvent(method: string, path: string, authorizer: unknown, body?: unknown): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: { 'content-type': 'application/json', host: 'abc123.execute-api.us-east-1.amazonaws.com' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'abc123',
      domainName: 'abc123.execute-api.us-east-1.amazonaws.com',
      domainPrefix: 'abc123',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'artifact-test' },
      requestId: `req-${Math.random().toString(36).slice(2)}`,
      routeKey: '$default',
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
      ...(authorizer === undefined ? {} : { authorizer }),
    },
  } as unknown as APIGatewayProxyEventV2;
}

/** The SQS record the event source mapping builds from a received message. */
export function recordOf(m: Message, queueArn: string): SQSEvent['Records'][number] {
  return {
    ...sqsRecord(m.Body ?? '', m.MessageId ?? '', m.ReceiptHandle ?? ''),
    attributes: { ...sqsRecord('').attributes, ...(m.Attributes as object) },
    md5OfBody: m.MD5OfBody ?? '',
    eventSourceARN: queueArn,
  };
}

/**
 * Plays the SQS event source mapping (batch size 1): receive a tick, invoke the worker, delete
 * the message unless the worker reported it as a batch item failure; until `done`.
 */
export async function deliverTicks(stack: TestStack, worker: Sandbox, done: () => Promise<boolean>): Promise<{ invocations: number; itemFailures: number }> {
  const queueArn = `arn:aws:sqs:us-east-1:000000000000:${stack.resources.names.queue}`;
  const { queueUrl } = stack.resources;
  let invocations = 0;
  let itemFailures = 0;
  for (let polls = 0; polls < 60 && !(await done()); polls++) {
    const received = await stack.clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 1, MessageSystemAttributeNames: ['All'] }),
    );
    const message = received.Messages?.[0];
    if (!message) continue;
    const response = await worker.invoke<SQSBatchResponse>({ Records: [recordOf(message, queueArn)] });
    invocations++;
    if (response.batchItemFailures.some((f) => f.itemIdentifier === message.MessageId)) itemFailures++;
    else await stack.clients.sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }));
  }
  return { invocations, itemFailures };
}
