/**
 * The Lambda worker as Lambda runs it (createWorkerHandler, the environment in process.env, SQS
 * events one by one) on the emulators: the standard OTEL_* variables alone make it export, and
 * OTEL_SDK_DISABLED / OTEL_TRACES_EXPORTER=none keep it from loading the SDK at all.
 */
import { DeleteMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkerHandler } from 'logbook/lambda';
import { startRun } from 'logbook/engine';
import { createLocalAwsClients } from '../../lib/adapters/aws/aws-clients.js';
import { traceIdOf } from '../../lib/engine/tracing/trace-span.js';
import { createRuntime } from '../../lib/lambda/wiring.js';
import { createResources, resourceNames, type CreatedResources } from '../../dev/local/resources.js';
import { LOCAL_TIMINGS } from '../../dev/local/stack.js';
import { lambdaContext } from '../../dev/local/lambda-context.js';
import { toRecord } from '../../dev/local/event-source-runner.js';
import { endpointsFor, uniquePrefix } from '../setup/emulator-context.js';
import { createAgents } from './runtime-agents.fixture.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';
import { orphans, tokenTotals } from './otlp-processes.js';

const endpoints = endpointsFor('dynalite') ?? endpointsFor('dynamodb-local');
let receiver: OtlpReceiver;
let resources: CreatedResources;
const saved = { ...process.env };

function baseEnv(): Record<string, string> {
  return {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    LOGBOOK_TABLE: resources.tableName,
    LOGBOOK_BUCKET: resources.bucket,
    LOGBOOK_QUEUE_URL: resources.queueUrl,
    LOGBOOK_DYNAMODB_ENDPOINT: endpoints?.dynamodb ?? '',
    LOGBOOK_S3_ENDPOINT: endpoints?.s3 ?? '',
    LOGBOOK_SQS_ENDPOINT: endpoints?.sqs ?? '',
    // The local stack's timings (LOCAL_TIMINGS): the default margin is the whole of a 5 s lease.
    LOGBOOK_LEASE_MS: String(LOCAL_TIMINGS.leaseMs),
    LOGBOOK_MARGIN_MS: String(LOCAL_TIMINGS.marginMs),
    LOGBOOK_MODEL_TIMEOUT_MS: String(LOCAL_TIMINGS.modelTimeoutMs),
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    POWERTOOLS_METRICS_DISABLED: 'true',
  };
}

/** One run through the worker handler, each tick received from the queue and handed over as Lambda's event source does. */
async function runOnWorker(otel: Record<string, string>, runId: string) {
  for (const k of Object.keys(process.env)) if (k.startsWith('OTEL_') || k.startsWith('LOGBOOK_')) delete process.env[k];
  Object.assign(process.env, baseEnv(), otel);
  const handler = createWorkerHandler({ agents: createAgents });
  const starter = await createRuntime('test-starter', { agents: createAgents(), env: { ...baseEnv(), OTEL_SDK_DISABLED: 'true' } });
  const sqs = createLocalAwsClients(endpoints as NonNullable<typeof endpoints>);
  const run = { tenant: 'acme', runId };
  try {
    await startRun(starter.engine, { ...run, agent: 'support', input: 'order arrived damaged' });
    for (let i = 0; i < 50; i++) {
      const head = await starter.engine.heads.getHead(run);
      if (head && ['completed', 'failed', 'parked'].includes(head.status)) return head;
      const out = await sqs.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: resources.queueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 1, MessageSystemAttributeNames: ['All'], MessageAttributeNames: ['All'] }),
      );
      for (const message of out.Messages ?? []) {
        const record = toRecord(message, 'arn:aws:sqs:us-east-1:000000000000:steps.fifo', 'us-east-1');
        const response = await handler({ Records: [record] }, lambdaContext('logbook-worker', 60_000));
        if (!response.batchItemFailures.some((f) => f.itemIdentifier === record.messageId)) {
          await sqs.sqs.send(new DeleteMessageCommand({ QueueUrl: resources.queueUrl, ReceiptHandle: record.receiptHandle }));
        }
      }
    }
    throw new Error(`${runId} did not end`);
  } finally {
    starter.clients.destroy();
    sqs.destroy();
  }
}

describe.skipIf(!endpoints)('the Lambda worker with the standard variables', () => {
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    resources = await createResources(endpoints as NonNullable<typeof endpoints>, resourceNames(uniquePrefix('otel-worker')));
  });
  afterAll(async () => {
    process.env = saved;
    await receiver?.close();
  });

  it('OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_METRICS_EXPORTER=otlp: the run as one trace, and its tokens as metrics sent by the end of each invocation', async () => {
    const head = await runOnWorker({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_METRICS_EXPORTER: 'otlp', OTEL_SERVICE_NAME: 'worker-svc' }, 'lambda-otel-1');
    expect(head.status).toBe('completed');
    const trace = traceIdOf({ tenant: 'acme', runId: 'lambda-otel-1' });
    const spans = [...new Map(receiver.spans.filter((s) => s.traceId === trace).map((s) => [s.spanId, s])).values()];
    expect(spans.filter((s) => s.name === 'invoke_agent support')).toHaveLength(1);
    expect(orphans(spans)).toEqual([]);
    expect(spans[0]?.resource['service.name']).toBe('worker-svc');
    // No waiting: the handler returned only after its metrics were sent.
    expect(tokenTotals(receiver.metrics)).toEqual({ input: head.usage.inputTokens, output: head.usage.outputTokens, calls: spans.filter((s) => s.name.startsWith('chat ')).length });
  });

  it.each([
    ['OTEL_SDK_DISABLED=true', { OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp', OTEL_METRICS_EXPORTER: 'otlp' }],
    ['OTEL_TRACES_EXPORTER=none', { OTEL_TRACES_EXPORTER: 'none', LOGBOOK_TRACING: 'otlp' }],
  ])('%s: no SDK, nothing sent, the run as usual', async (_name, otel) => {
    const before = receiver.log.length;
    const runId = `lambda-off-${Object.keys(otel)[0]}`;
    const rt = await createRuntime('logbook-worker', { agents: createAgents(), env: { ...baseEnv(), OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...otel } });
    expect(rt.tracer).toBeUndefined();
    rt.clients.destroy();
    const head = await runOnWorker({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...otel }, runId);
    expect(head.status).toBe('completed');
    expect(receiver.log.length).toBe(before);
  });

  it('the handlers that run no step (API, trigger, sweeper, stream) never set up the SDK, whatever the variables say', async () => {
    const env = { ...baseEnv(), OTEL_TRACES_EXPORTER: 'otlp', OTEL_METRICS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url };
    const api = await createRuntime('logbook-api', { agents: createAgents(), env, runsSteps: false });
    const worker = await createRuntime('logbook-worker', { agents: createAgents(), env });
    expect([api.tracer, worker.tracer?.traces?.url]).toEqual([undefined, `${receiver.url}/v1/traces`]);
    await worker.tracer?.shutdown();
    api.clients.destroy();
    worker.clients.destroy();
  });
});
