import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CfnOutput, Duration, Stack, Tags } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { TABLE } from '../adapters/aws/table-definition.js';
import { LEASE_MS, WORKER_TIMEOUT_S } from '../core/limits.js';
import { MCP_BUNDLE_DIR, MCP_MANIFEST_ENV } from '../tools/mcp/shipped-servers.js';
import { discoverAgentsModule, generatedEntry, generatedEntryDir, projectPath, type HandlerKind } from './agents-module.js';
import { withDefaults, type LogbookConfig } from './config.js';
import { DataKey } from './constructs/data-key.js';
import type { LogbookTracing } from './constructs/tracing.js';
import { LogbookFunction } from './constructs/logbook-function.js';
import { shipMcpServers } from './mcp-servers.js';
import { PayloadBucket } from './constructs/payload-bucket.js';
import { RunAlarms } from './constructs/run-alarms.js';
import { RunApi } from './constructs/run-api.js';
import { RunEvents } from './constructs/run-events.js';
import { RunTable } from './constructs/run-table.js';
import { RunSchedules, type DeployedSchedule } from './constructs/run-schedules.js';
import { StepQueue } from './constructs/step-queue.js';
import { SERVICE_NAMES } from './metrics.js';

export interface LogbookProps extends Partial<LogbookConfig> {
  /**
   * The application's agents module (e.g. `src/agents.ts`, relative to `projectRoot`): its default
   * export is `defineAgents(...)` or a function returning it. It is bundled into the worker, API and
   * trigger functions with esbuild.
   */
  readonly agents: string;
  /**
   * The application's own handler files, when it has any (`export const handler =
   * createWorkerHandler({ agents })`). Without them the construct writes those one-liners itself.
   */
  readonly handlers?: Partial<Readonly<Record<HandlerKind | 'schedule', string>>>;
  /**
   * The schedules to deploy (docs/guides/deploying.md#schedules). Default: read from the agents
   * module with the model ids (every `schedule` of its agents and workflows); with `models`
   * given, the module is not loaded and only these are deployed.
   */
  readonly schedules?: readonly DeployedSchedule[];
  /**
   * Model ids the agents pin, for the worker's IAM (`bedrock:<id>`, an inference profile id or a
   * Bedrock ARN, gets bedrock:InvokeModel on exactly that model). Default: read from the agents
   * module at synth time, by loading it once in a child process with `environment` set. Loading it
   * is also how the construct finds the stdio MCP servers the agents use and ships them with the
   * worker (`transport.bundle`, docs/guides/mcp.md): with `models` given, the module is not loaded
   * and no MCP server is checked or shipped.
   */
  readonly models?: readonly string[];
  /**
   * Environment for the worker, API and trigger functions (the application's own settings), also
   * set while the agents module is loaded at synth time. Lambda shows these values to anyone who
   * can read the function's configuration: pass secrets by name (a Secrets Manager id), not value.
   */
  readonly environment?: Readonly<Record<string, string>>;
  /** Where package.json and node_modules are. Default: the current directory (where `cdk` runs). */
  readonly projectRoot?: string;
  /** Default: package-lock.json in projectRoot when it exists. */
  readonly depsLockFilePath?: string;
  /**
   * OpenTelemetry spans of every step from the worker (docs/guides/tracing.md): an OTLP/HTTP
   * endpoint, or the ADOT collector layer (X-Ray by default). Default: off.
   */
  readonly tracing?: LogbookTracing;
}

/** The construct id whose outputs and resource names carry no extra prefix. */
const DEFAULT_ID = 'Logbook';

/**
 * One Logbook deployment for an application's agents: the run table, the payload bucket, the FIFO
 * step queue and its DLQ, the worker, API, trigger and sweeper functions, the HTTP API, the event
 * bus and rules, the alarms, and one KMS key that encrypts them all. Nothing in it bills by the
 * hour while no step runs (except the key and the alarms). Secure by default: IAM or JWT on the
 * API, least-privilege roles, encryption at rest and in transit, retained data.
 */
export class Logbook extends Construct {
  readonly config: LogbookConfig;
  /** The model ids the worker may invoke. */
  readonly modelIds: readonly string[];
  readonly key: DataKey;
  readonly table: RunTable;
  readonly bucket: PayloadBucket;
  readonly queue: StepQueue;
  readonly functions: Readonly<Record<HandlerKind, LogbookFunction>>;
  readonly api: RunApi;
  /** With `streamUrl`: the SSE function and its function URL (IAM-authorized, response streaming). */
  readonly stream?: { readonly function: LogbookFunction; readonly url: lambda.FunctionUrl };
  readonly events: RunEvents;
  readonly alarms: RunAlarms;
  /** With schedules: the schedule function and one EventBridge Scheduler schedule per schedule. */
  readonly schedules?: { readonly function: LogbookFunction; readonly schedules: RunSchedules };

  constructor(scope: Construct, id: string, props: LogbookProps) {
    super(scope, id);
    const { agents, handlers, models, schedules, environment, projectRoot: root, depsLockFilePath: lockFile, tracing, ...options } = props;
    const config = withDefaults(options);
    this.config = config;
    const projectRoot = resolve(root ?? process.cwd());
    const lock = lockFile ?? join(projectRoot, 'package-lock.json');
    const depsLockFilePath = existsSync(lock) ? lock : undefined;
    const agentsModule = projectPath(projectRoot, agents, 'agents');
    const entries = Object.fromEntries(
      (['worker', 'api', 'trigger', 'sweeper'] as const).map((kind) => [
        kind,
        handlers?.[kind] ? projectPath(projectRoot, handlers[kind], `handlers.${kind}`) : generatedEntry(projectRoot, agentsModule, kind),
      ]),
    ) as Record<HandlerKind, string>;
    const facts = models ? undefined : discoverAgentsModule(agentsModule, environment, projectRoot);
    this.modelIds = models ?? facts?.modelIds ?? [];
    // Stdio MCP servers go with the worker; their tool listings with every function that pins tools.
    const mcp = facts ? shipMcpServers(facts.mcp, { projectRoot, stagingRoot: generatedEntryDir(projectRoot, agentsModule) }) : undefined;
    const mcpEnv: Record<string, string> = mcp ? { [MCP_MANIFEST_ENV]: mcp.bundlePath } : {};
    const manifestOnly = mcp ? { copyIntoBundle: [{ source: mcp.manifest, target: mcp.bundlePath }] } : {};
    const durable = { removalPolicy: config.removalPolicy };
    // Named resources (queues, bus) carry the stack name, and the construct id unless it is the
    // default `Logbook`, so a second deployment in the same stack or account never collides.
    const stackName = Stack.of(this).stackName;
    const namePrefix = id === DEFAULT_ID ? stackName : `${stackName}-${id}`;
    Tags.of(this).add('app', 'logbook');

    this.key = new DataKey(this, 'DataKey', durable);
    this.table = new RunTable(this, 'Runs', { key: this.key.key, ...durable, deletionProtection: config.deletionProtection });
    this.bucket = new PayloadBucket(this, 'Payloads', {
      key: this.key.key,
      ...durable,
      expirationDays: config.retention.eventsDays + config.maxRunDays,
    });
    this.queue = new StepQueue(this, 'Steps', { key: this.key.key, ...durable, namePrefix });

    const fnDefaults = {
      logRetention: config.logRetention,
      removalPolicy: config.removalPolicy,
      dataKey: this.key.key,
      projectRoot,
      ...(depsLockFilePath ? { depsLockFilePath } : {}),
    };
    const appEnv = { environment: { ...props.environment, ...mcpEnv } };
    const worker = new LogbookFunction(this, 'Worker', {
      ...fnDefaults,
      entry: entries.worker,
      ...appEnv,
      ...(mcp ? { copyIntoBundle: [{ source: mcp.dir, target: MCP_BUNDLE_DIR }] } : {}),
      description: 'Logbook worker: one step of one run per SQS tick',
      serviceName: SERVICE_NAMES.worker,
      timeout: Duration.seconds(WORKER_TIMEOUT_S),
      memorySize: config.workerMemoryMb,
      // Required: the worker enqueues its own next tick, and AWS would stop that SQS → Lambda →
      // SQS chain after about 16 hops. Step budgets and the alarms below are the guard instead.
      recursiveLoop: lambda.RecursiveLoop.ALLOW,
    });
    worker
      .bindTable(this.table, { read: true, write: true, delete: true })
      .bindBucket(this.bucket, { read: true, write: true })
      .bindQueue(this.queue, { send: true, changeVisibility: true })
      .consumeQueue(this.queue, config.workerMaxConcurrency)
      .bindModels(this.modelIds)
      .bindRetention(config.retention)
      .bindLease(LEASE_MS);
    if (tracing) worker.bindTracing(tracing, SERVICE_NAMES.worker);

    const api = new LogbookFunction(this, 'Api', {
      ...fnDefaults,
      entry: entries.api,
      ...appEnv,
      ...manifestOnly,
      description: 'Logbook HTTP API: start, list, inspect, cancel and resolve runs',
      serviceName: SERVICE_NAMES.api,
      // API Gateway gives up on an integration after 30 seconds.
      timeout: Duration.seconds(29),
    });
    api
      .bindTable(this.table, {
        read: true,
        write: true,
        delete: true,
        queryIndexes: [TABLE.gsi.byTenant.name, TABLE.gsi.byTenantStatus.name, TABLE.gsi.byParent.name],
      })
      // write: starting a run offloads a large input or pinned prompt before run_started, and
      // POST /attachments stores uploads; read: blobs, uploads, and the check of a run's references.
      .bindBucket(this.bucket, { read: true, write: true })
      .bindQueue(this.queue, { send: true })
      .bindRetention(config.retention)
      .bindTenantLimits(config.tenantLimits);
    if (config.jwt?.tenantClaim) api.bindTenantClaim(config.jwt.tenantClaim);

    const trigger = new LogbookFunction(this, 'Trigger', {
      ...fnDefaults,
      entry: entries.trigger,
      ...appEnv,
      ...manifestOnly,
      description: 'Logbook trigger: starts a run from an Agent Run Requested event',
      serviceName: SERVICE_NAMES.trigger,
      timeout: Duration.seconds(30),
      reservedConcurrentExecutions: config.triggerReservedConcurrency,
    });
    trigger
      // read: an idempotent create reads back run_started to tell a retry from a conflict.
      .bindTable(this.table, { read: true, write: true })
      // readAttachments: a run requested with attachments is checked against the tenant's uploads.
      .bindBucket(this.bucket, { write: true, readAttachments: true })
      .bindQueue(this.queue, { send: true })
      .bindRetention(config.retention)
      .bindTenantLimits(config.tenantLimits);

    const sweeper = new LogbookFunction(this, 'Sweeper', {
      ...fnDefaults,
      entry: entries.sweeper,
      description: 'Logbook sweeper: wakes runs that are due (wakeAt, expired lease, owed notification)',
      serviceName: SERVICE_NAMES.sweeper,
      // Shorter than the schedule, so sweeps do not overlap.
      timeout: Duration.seconds(55),
    });
    sweeper
      // The sweep GSI, consistent head reads (the GSI lags), and UpdateItem for one thing: it
      // records each wake-up on the head (markSwept), which holds the run off for its back-off
      // and repairs the index entry; without it every pass would wake a backlogged run again.
      .bindTable(this.table, { read: true, update: true, queryIndexes: [TABLE.gsi.sweep.name] })
      .bindBucket(this.bucket, {})
      .bindQueue(this.queue, { send: true });

    this.functions = { worker, api, trigger, sweeper };

    if (config.streamUrl) {
      // True SSE beside the HTTP API: API Gateway buffers a whole response (and gives up after
      // 30 s), a function URL with RESPONSE_STREAM sends each message as it is written.
      const stream = new LogbookFunction(this, 'Stream', {
        ...fnDefaults,
        entry: generatedEntry(projectRoot, agentsModule, 'stream'),
        description: 'Logbook stream: a run as Server-Sent Events (function URL, response streaming)',
        serviceName: SERVICE_NAMES.stream,
        // Billed while a client listens: each response ends before this (the client reconnects
        // with Last-Event-ID, as EventSource does by itself).
        timeout: Duration.minutes(5),
      });
      // Reads only: the head (tenant check), the log and the chunks, and the payload bucket for
      // GET /runs/{id}/chat (an answer, a call's arguments or result offloaded there is shown
      // whole). The queue URL is set because every handler's environment requires it; no right
      // comes with it.
      stream.bindTable(this.table, { read: true }).bindBucket(this.bucket, { read: true }).bindQueue(this.queue, {});
      const url = stream.fn.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.AWS_IAM, invokeMode: lambda.InvokeMode.RESPONSE_STREAM });
      this.stream = { function: stream, url };
    }

    const deployed = schedules ?? facts?.schedules ?? [];
    if (deployed.length > 0) {
      const fn = new LogbookFunction(this, 'Schedule', {
        ...fnDefaults,
        entry: handlers?.schedule ? projectPath(projectRoot, handlers.schedule, 'handlers.schedule') : generatedEntry(projectRoot, agentsModule, 'schedule'),
        ...appEnv,
        ...manifestOnly,
        description: 'Logbook schedule: starts the run of one firing of a schedule',
        serviceName: SERVICE_NAMES.schedule,
        timeout: Duration.seconds(30),
      });
      // As the trigger: an idempotent create reads back run_started; skip reads earlier firings' heads.
      fn.bindTable(this.table, { read: true, write: true })
        .bindBucket(this.bucket, { write: true, readAttachments: true })
        .bindQueue(this.queue, { send: true })
        .bindRetention(config.retention)
        .bindTenantLimits(config.tenantLimits);
      const runSchedules = new RunSchedules(this, 'Schedules', {
        handler: fn.fn,
        schedules: deployed,
        key: this.key.key,
        removalPolicy: config.removalPolicy,
        namePrefix,
      });
      this.schedules = { function: fn, schedules: runSchedules };
    }

    this.api = new RunApi(this, 'Http', {
      handler: api.fn,
      jwt: config.jwt,
      throttle: config.apiThrottle,
      logRetention: config.logRetention,
      removalPolicy: config.removalPolicy,
    });
    this.events = new RunEvents(this, 'Events', {
      trigger: trigger.fn,
      sweeper: sweeper.fn,
      useDefaultEventBus: config.useDefaultEventBus,
      triggerSources: config.triggerSources,
      sweepEvery: config.sweepEvery,
      key: this.key.key,
      removalPolicy: config.removalPolicy,
      busName: namePrefix,
      triggerMaxEventAge: config.triggerMaxEventAge,
    });
    worker.bindEventBus(this.events.bus);

    this.alarms = new RunAlarms(this, 'Alarms', {
      key: this.key.key,
      functions: { worker: worker.fn, api: api.fn, trigger: trigger.fn, sweeper: sweeper.fn },
      stepQueue: this.queue.queue,
      stepDeadLetterQueue: this.queue.deadLetterQueue,
      triggerDeadLetterQueue: this.events.triggerDeadLetterQueue,
      triggerFailureQueue: this.events.triggerFailureQueue,
      thresholds: config.alarms,
      alarmEmail: config.alarmEmail,
    });

    const outputs: [string, string, string?][] = [
      ['ApiUrl', this.api.url, 'HTTP API base URL (SigV4 or JWT)'],
      ['TableName', this.table.tableName],
      ['BucketName', this.bucket.bucketName],
      ['QueueUrl', this.queue.queueUrl],
      ['EventBusName', this.events.bus.eventBusName],
      ['AlarmTopicArn', this.alarms.topic.topicArn],
      ...(this.stream
        ? [
            [
              'StreamUrl',
              this.stream.url.url,
              'Function URL of GET /runs/{runId}/stream as SSE and GET /runs/{runId}/chat as the AI SDK UI message stream (SigV4, service lambda)',
            ] as [string, string, string],
          ]
        : []),
    ];
    for (const [name, value, description] of outputs) {
      const output = new CfnOutput(this, name, { value, ...(description ? { description } : {}) });
      // Stable output names (`ApiUrl`), prefixed only when a stack holds a second deployment.
      output.overrideLogicalId(id === DEFAULT_ID ? name : `${id}${name}`);
    }
  }
}
