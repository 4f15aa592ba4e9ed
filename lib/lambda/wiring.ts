import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { LOCAL_CREDENTIALS, createAwsClients, type AwsClients } from '../adapters/aws/aws-clients.js';
import { DynamoStore } from '../adapters/aws/dynamo-store.js';
import { DynamoRunStream } from '../adapters/aws/dynamo-run-stream.js';
import { createEventBridgePublisher } from '../adapters/aws/eventbridge-publisher.js';
import { S3BlobStore } from '../adapters/aws/s3-blob-store.js';
import { SqsStepQueue, SqsTickVisibility } from '../adapters/aws/sqs-step-queue.js';
import { CryptoIds } from '../adapters/system/crypto-ids.js';
import { SystemClock } from '../support/system-clock.js';
import { createEngine, type EngineConfig, type EngineDeps } from '../engine/engine.js';
import { otelConfig } from '../engine/tracing/otel-env.js';
import { otlpTracing, type OtlpTracing } from '../engine/tracing/otlp-setup.js';
import type { ModelResolver } from '../ports/model-client.js';
import type { OutcomeNotice, OutcomePublisher } from '../ports/outcome-publisher.js';
import { AgentRegistry } from '../authoring/registry.js';
import { resolveAgents } from '../authoring/define-agents.js';
import { type AgentsSource } from '../authoring/define-agents.js';
import { loadEnv, type LogbookEnv } from './env.js';
import { createLogger, createMetrics, engineLogger, engineMetrics } from './telemetry.js';

/** Everything a handler needs, built once per cold start. */
export interface Runtime {
  env: LogbookEnv;
  engine: EngineDeps;
  logger: Logger;
  metrics: Metrics;
  clients: AwsClients;
  visibility: SqsTickVisibility;
  /**
   * Set when the OTEL_* variables (or LOGBOOK_TRACING=otlp) turn spans or the GenAI metrics on:
   * every step sends its spans before it releases its run; the worker sends its metrics after each
   * invocation.
   */
  tracer?: OtlpTracing;
}

/**
 * Without a bus (the local stack), outcome notices go to the log as one structured line each, so
 * a notice is still "published" once and the head stops owing it.
 */
export class LogOutcomePublisher implements OutcomePublisher {
  constructor(private readonly logger: Pick<Logger, 'info'>) {}
  async publish(notice: OutcomeNotice): Promise<void> {
    this.logger.info('outcome', {
      detailType: notice.detailType,
      id: `${notice.runId}:${notice.seq}`,
      tenant: notice.tenant,
      runId: notice.runId,
      seq: notice.seq,
      status: notice.status,
      ...(notice.code ? { code: notice.code } : {}),
      ...(notice.workflow ? { workflow: `${notice.workflow.name}@${notice.workflow.version}` } : {}),
    });
  }
}

export function engineConfigFromEnv(env: LogbookEnv): Partial<EngineConfig> {
  return {
    leaseMs: env.LOGBOOK_LEASE_MS,
    maxClaimAttempts: env.LOGBOOK_MAX_ATTEMPTS,
    retentionCompletedMs: env.LOGBOOK_RETENTION_COMPLETED_DAYS * 86_400_000,
    retentionFailedMs: env.LOGBOOK_RETENTION_FAILED_DAYS * 86_400_000,
    maxActiveRuns: env.LOGBOOK_MAX_ACTIVE_RUNS,
    admissionRetryAfterS: env.LOGBOOK_ADMISSION_RETRY_AFTER_S,
    ...(env.LOGBOOK_MARGIN_MS !== undefined ? { marginMs: env.LOGBOOK_MARGIN_MS } : {}),
    ...(env.LOGBOOK_MODEL_TIMEOUT_MS !== undefined ? { modelTimeoutMs: env.LOGBOOK_MODEL_TIMEOUT_MS } : {}),
  };
}

export interface RuntimeOptions {
  /** The application's agents; the sweeper needs none. */
  agents?: AgentsSource;
  /** The environment to read (default process.env). */
  env?: Record<string, string | undefined>;
  /**
   * The built-in model providers, for the process that calls models (the worker). The API, trigger
   * and sweeper only pin model ids, so they pass none: passed in rather than imported here, their
   * bundles carry no provider SDK (the Bedrock client alone is ~150 KB minified).
   */
  builtInModels?: (env: Record<string, string | undefined>) => ModelResolver;
  /**
   * `false` for a process that runs no step (the API, trigger, sweeper and stream handlers): it
   * never sets up OpenTelemetry, whatever the OTEL_* variables say (an application that sets them
   * on every function loads the SDK only in the worker). Default true.
   */
  runsSteps?: boolean;
}

/**
 * The SDK when the standard variables say so (otel-env.ts), else nothing (never loaded). What was
 * wrong with them is logged once per cold start, a line each, as a warning.
 */
async function tracingFromEnv(source: Record<string, string | undefined>, env: LogbookEnv, serviceName: string, logger: Logger) {
  const switches = { serviceName, ...(env.LOGBOOK_TRACING ? { traces: env.LOGBOOK_TRACING === 'otlp' } : {}) };
  const config = otelConfig(source, switches);
  const warn = (message: string) => logger.warn(`OpenTelemetry: ${message}`);
  if (!config.traces && !config.metrics) {
    for (const w of config.warnings) warn(w);
    return undefined;
  }
  // otlpTracing reads the same variables with the same switches, and says the same warnings.
  return otlpTracing({ env: source, serviceName, traces: config.traces !== undefined, payloads: env.LOGBOOK_TRACING_PAYLOADS === 'true', warn });
}

/** A resolver for processes that never call a model. */
const NO_MODELS = { resolve: () => undefined };

/** Wire adapters, models and agents from the validated environment. */
export async function createRuntime(serviceName: string, options: RuntimeOptions = {}): Promise<Runtime> {
  const source = options.env ?? process.env;
  const env = loadEnv(source);
  const logger = createLogger(serviceName, source.POWERTOOLS_LOG_LEVEL);
  const metrics = createMetrics(serviceName);
  const local = env.LOGBOOK_DYNAMODB_ENDPOINT !== undefined;
  const clients = createAwsClients({
    region: env.AWS_REGION,
    ...(local
      ? {
          endpoints: {
            dynamodb: env.LOGBOOK_DYNAMODB_ENDPOINT,
            ...(env.LOGBOOK_S3_ENDPOINT ? { s3: env.LOGBOOK_S3_ENDPOINT } : {}),
            ...(env.LOGBOOK_SQS_ENDPOINT ? { sqs: env.LOGBOOK_SQS_ENDPOINT } : {}),
          },
          credentials: LOCAL_CREDENTIALS,
        }
      : {}),
  });
  const store = new DynamoStore({ doc: clients.doc, tableName: env.LOGBOOK_TABLE });
  const queueOptions = { sqs: clients.sqs, queueUrl: env.LOGBOOK_QUEUE_URL };
  const agents = await resolveAgents(options.agents);
  // The application's own clients first, then the built-in providers for any other pinned id.
  const builtIn = options.builtInModels?.(source) ?? NO_MODELS;
  const models = { resolve: (id: string) => agents?.model(id) ?? builtIn.resolve(id) };
  const publisher: OutcomePublisher = env.LOGBOOK_EVENT_BUS
    ? createEventBridgePublisher({
        busName: env.LOGBOOK_EVENT_BUS,
        region: env.AWS_REGION,
        source: env.LOGBOOK_EVENT_SOURCE,
        ...(env.LOGBOOK_EVENTS_ENDPOINT ? { endpoint: env.LOGBOOK_EVENTS_ENDPOINT } : {}),
      })
    : new LogOutcomePublisher(logger);
  const tracer = options.runsSteps === false ? undefined : await tracingFromEnv(source, env, serviceName, logger);
  const engine = createEngine(
    {
      log: store,
      heads: store,
      inbox: store,
      admission: store,
      blobs: new S3BlobStore({ s3: clients.s3, bucket: env.LOGBOOK_BUCKET }),
      queue: new SqsStepQueue(queueOptions),
      models,
      registry: agents?.registry ?? new AgentRegistry(),
      clock: new SystemClock(),
      ids: new CryptoIds(),
      publisher,
      // Streamed model text (on unless LOGBOOK_STREAMING=off): the worker writes it, the API reads it.
      // Two attempts, not six: a chunk is a preview, and the publisher gives up on the call's stream anyway.
      ...(env.LOGBOOK_STREAMING === 'on' ? { stream: new DynamoRunStream({ doc: clients.doc, tableName: env.LOGBOOK_TABLE, retry: { maxAttempts: 2 } }) } : {}),
      logger: engineLogger(logger),
      metrics: engineMetrics(metrics),
      ...(tracer ? { tracer } : {}),
    },
    { config: engineConfigFromEnv(env), ...(agents?.redaction ? { redaction: agents.redaction } : {}) },
  );
  return { env, engine, logger, metrics, clients, visibility: new SqsTickVisibility(queueOptions), ...(tracer ? { tracer } : {}) };
}
