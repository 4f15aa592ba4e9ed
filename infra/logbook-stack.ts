import { CfnOutput, Duration, Stack, Tags, type StackProps } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { TABLE, WORKER } from '../lib/adapters/aws/table-definition.js';
import type { LogbookConfig } from './config.js';
import { DataKey } from './constructs/data-key.js';
import { LogbookFunction } from './constructs/logbook-function.js';
import { PayloadBucket } from './constructs/payload-bucket.js';
import { RunAlarms } from './constructs/run-alarms.js';
import { RunApi } from './constructs/run-api.js';
import { RunEvents } from './constructs/run-events.js';
import { RunTable } from './constructs/run-table.js';
import { StepQueue } from './constructs/step-queue.js';
import { SERVICE_NAMES } from './metrics.js';

export interface LogbookStackProps extends StackProps {
  readonly config: LogbookConfig;
}

/** Everything one Logbook deployment needs; nothing runs (or bills by the hour) while no step runs. */
export class LogbookStack extends Stack {
  readonly key: DataKey;
  readonly table: RunTable;
  readonly bucket: PayloadBucket;
  readonly queue: StepQueue;
  readonly functions: Readonly<Record<'worker' | 'api' | 'trigger' | 'sweeper', LogbookFunction>>;
  readonly api: RunApi;
  readonly events: RunEvents;
  readonly alarms: RunAlarms;

  constructor(scope: Construct, id: string, props: LogbookStackProps) {
    super(scope, id, props);
    const { config } = props;
    const durable = { removalPolicy: config.removalPolicy };
    Tags.of(this).add('app', 'logbook');

    this.key = new DataKey(this, 'DataKey', durable);
    this.table = new RunTable(this, 'Runs', { key: this.key.key, ...durable, deletionProtection: config.deletionProtection });
    this.bucket = new PayloadBucket(this, 'Payloads', {
      key: this.key.key,
      ...durable,
      expirationDays: config.retention.eventsDays + config.maxRunDays,
    });
    this.queue = new StepQueue(this, 'Steps', { key: this.key.key, ...durable });

    const fnDefaults = { logRetention: config.logRetention, removalPolicy: config.removalPolicy, dataKey: this.key.key };
    const worker = new LogbookFunction(this, 'Worker', {
      ...fnDefaults,
      entry: 'functions/worker.ts',
      description: 'Logbook worker: one step of one run per SQS tick',
      serviceName: SERVICE_NAMES.worker,
      timeout: Duration.seconds(WORKER.timeoutSeconds),
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
      .bindModel(config.model, { invoke: true })
      .bindRetention(config.retention)
      .bindLease(WORKER.leaseMs);

    const api = new LogbookFunction(this, 'Api', {
      ...fnDefaults,
      entry: 'functions/api.ts',
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
        queryIndexes: [TABLE.gsi.byTenant.name, TABLE.gsi.byTenantStatus.name],
      })
      // write: starting a run offloads a large input or pinned prompt before run_started.
      .bindBucket(this.bucket, { read: true, write: true })
      .bindQueue(this.queue, { send: true })
      .bindModel(config.model, { invoke: false })
      .bindRetention(config.retention);
    if (config.jwt?.tenantClaim) api.bindTenantClaim(config.jwt.tenantClaim);

    const trigger = new LogbookFunction(this, 'Trigger', {
      ...fnDefaults,
      entry: 'functions/trigger.ts',
      description: 'Logbook trigger: starts a run from an Agent Run Requested event',
      serviceName: SERVICE_NAMES.trigger,
      timeout: Duration.seconds(30),
    });
    trigger
      // read: an idempotent create reads back run_started to tell a retry from a conflict.
      .bindTable(this.table, { read: true, write: true })
      .bindBucket(this.bucket, { write: true })
      .bindQueue(this.queue, { send: true })
      .bindModel(config.model, { invoke: false })
      .bindRetention(config.retention);

    const sweeper = new LogbookFunction(this, 'Sweeper', {
      ...fnDefaults,
      entry: 'functions/sweeper.ts',
      description: 'Logbook sweeper: wakes runs that are due (wakeAt, expired lease, owed notification)',
      serviceName: SERVICE_NAMES.sweeper,
      // Shorter than the schedule, so sweeps do not overlap.
      timeout: Duration.seconds(55),
    });
    sweeper
      // Read-only: the sweep GSI, plus consistent head reads (the GSI lags). The sweeper's
      // optional index repair is skipped on AccessDenied by design; workers repair on write.
      .bindTable(this.table, { read: true, queryIndexes: [TABLE.gsi.sweep.name] })
      .bindBucket(this.bucket, {})
      .bindQueue(this.queue, { send: true });

    this.functions = { worker, api, trigger, sweeper };

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
    });
    worker.bindEventBus(this.events.bus);

    this.alarms = new RunAlarms(this, 'Alarms', {
      key: this.key.key,
      functions: { worker: worker.fn, api: api.fn, trigger: trigger.fn, sweeper: sweeper.fn },
      stepQueue: this.queue.queue,
      stepDeadLetterQueue: this.queue.deadLetterQueue,
      triggerDeadLetterQueue: this.events.triggerDeadLetterQueue,
      thresholds: config.alarms,
      alarmEmail: config.alarmEmail,
    });

    new CfnOutput(this, 'ApiUrl', { value: this.api.url, description: 'HTTP API base URL (SigV4 or JWT)' });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'BucketName', { value: this.bucket.bucketName });
    new CfnOutput(this, 'QueueUrl', { value: this.queue.queueUrl });
    new CfnOutput(this, 'EventBusName', { value: this.events.bus.eventBusName });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.alarms.topic.topicArn });
  }
}
