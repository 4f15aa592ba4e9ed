import { posix, relative, sep } from 'node:path';
import { Annotations, Stack, Validations, type Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogLevel, NodejsFunction, OutputFormat, SourceMapMode } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { LogbookEnv } from '../../lambda/env.js';
import { METRICS } from '../metrics.js';
import { bedrockModelArns } from './bedrock-model.js';
import type { PayloadBucket, BucketAccess } from './payload-bucket.js';
import type { RunTable, TableAccess } from './run-table.js';
import type { QueueAccess, StepQueue } from './step-queue.js';
import { tracingEnvironment, XRAY_WRITE_ACTIONS, type LogbookTracing } from './tracing.js';

/**
 * Running from Logbook's own TypeScript sources (this repository)? Then bundles resolve `logbook`
 * to its sources too, through the `logbook-source` export condition.
 */
export const LOGBOOK_FROM_SOURCE = import.meta.url.endsWith('.ts');

/** Only names the runtime's env schema knows can be bound (a rename there breaks the build here). */
type LogbookEnvName = keyof LogbookEnv;

export interface LogbookFunctionProps {
  /** Absolute path of the handler file. */
  readonly entry: string;
  /** The application's root: node_modules and the lock file are resolved from here. */
  readonly projectRoot: string;
  readonly depsLockFilePath?: string;
  /** More environment (the application's own settings). */
  readonly environment?: Readonly<Record<string, string>>;
  readonly description: string;
  /** Powertools service name: the `service` dimension of the function's metrics and logs. */
  readonly serviceName: string;
  readonly timeout: Duration;
  readonly memorySize?: number;
  readonly logRetention: logs.RetentionDays;
  readonly removalPolicy: RemovalPolicy;
  /** Only the worker sets ALLOW (its SQS → Lambda → SQS chain is the design, not a bug). */
  readonly recursiveLoop?: lambda.RecursiveLoop;
  /** The KMS key of the table, bucket and queue; bindings add the exact actions they need on it. */
  readonly dataKey: kms.IKey;
  /** Concurrency reserved for (and capping) this function; default none. */
  readonly reservedConcurrentExecutions?: number;
  /**
   * Files or directories (absolute, under projectRoot) copied into the bundle after esbuild, at a
   * path relative to the bundle's root: the stdio MCP servers the worker ships (mcp-servers.ts).
   */
  readonly copyIntoBundle?: readonly { readonly source: string; readonly target: string }[];
}

/** A word for a POSIX shell, whatever it holds. */
const shellWord = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

/**
 * A Logbook Lambda handler with the project's defaults (Node 22 on ARM64, ESM bundle built by the
 * local esbuild with minify, tree shaking and source maps, its own log group with retention, its
 * own role with no managed policies) and bind*() helpers that set the handler's environment and
 * grant the least IAM that binding needs, in one call, so the two cannot drift apart.
 */
export class LogbookFunction extends Construct {
  readonly fn: NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
  private readonly dataKey: kms.IKey;
  /** One statement on the data key per role, holding the union of what the bindings need. */
  private keyStatement: iam.PolicyStatement | undefined;
  private readonly keyActions = new Set<string>();

  constructor(scope: Construct, id: string, props: LogbookFunctionProps) {
    super(scope, id);
    this.dataKey = props.dataKey;
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    // An explicit role instead of AWSLambdaBasicExecutionRole: that managed policy may write to
    // any log group in the account; this one writes to its own group only.
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Logbook ${id} handler`,
    });
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [this.logGroup.logGroupArn],
      }),
    );
    this.fn = new NodejsFunction(this, 'Function', {
      entry: props.entry,
      handler: 'handler',
      projectRoot: props.projectRoot,
      ...(props.depsLockFilePath ? { depsLockFilePath: props.depsLockFilePath } : {}),
      description: props.description,
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout,
      role: this.role,
      logGroup: this.logGroup,
      recursiveLoop: props.recursiveLoop ?? lambda.RecursiveLoop.TERMINATE,
      ...(props.reservedConcurrentExecutions !== undefined ? { reservedConcurrentExecutions: props.reservedConcurrentExecutions } : {}),
      environment: {
        // Stack traces point at the TypeScript sources through the bundled source map.
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: props.serviceName,
        POWERTOOLS_METRICS_NAMESPACE: METRICS.namespace,
        ...props.environment,
      },
      bundling: {
        // esbuild from node_modules; never Docker (none on CI or dev machines).
        forceDockerBundling: false,
        format: OutputFormat.ESM,
        target: 'node22',
        minify: true,
        sourceMap: true,
        sourceMapMode: SourceMapMode.DEFAULT,
        // The map keeps file and line names only; sources stay out of the deployed artifact.
        sourcesContent: false,
        mainFields: ['module', 'main'],
        // Bundled CommonJS dependencies call require(); ESM output has none unless we define it.
        banner: "import { createRequire as __logbookCreateRequire } from 'node:module'; const require = __logbookCreateRequire(import.meta.url);",
        // The AWS SDK v3 is bundled, not taken from the runtime: the deployed code then runs the
        // exact SDK versions package-lock.json pins and the tests exercised, rather than whatever
        // version the Lambda runtime ships this month; tree shaking keeps the added size small.
        bundleAwsSDK: true,
        externalModules: [],
        logLevel: LogLevel.WARNING,
        ...(LOGBOOK_FROM_SOURCE ? { esbuildArgs: { '--conditions': 'logbook-source' } } : {}),
        ...(props.copyIntoBundle?.length ? { commandHooks: copyHooks(props.projectRoot, props.copyIntoBundle) } : {}),
      },
    });
    Validations.of(this.fn).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Logbook targets nodejs22.x on purpose: its pinned dependencies are built and tested on Node 20/22; moving to a newer runtime is a deliberate, tested change.',
    });
  }

  private setEnv(name: LogbookEnvName, value: string): void {
    this.fn.addEnvironment(name, value);
  }

  private useDataKey(actions: readonly string[]): void {
    const missing = actions.filter((a) => !this.keyActions.has(a));
    if (missing.length === 0) return;
    for (const a of missing) this.keyActions.add(a);
    if (this.keyStatement === undefined) {
      this.keyStatement = new iam.PolicyStatement({ actions: missing, resources: [this.dataKey.keyArn] });
      this.role.addToPrincipalPolicy(this.keyStatement);
    } else {
      this.keyStatement.addActions(...missing);
    }
  }

  /** LOGBOOK_TABLE, plus exactly the table and index actions in `access`. */
  bindTable(table: RunTable, access: TableAccess): this {
    this.setEnv('LOGBOOK_TABLE', table.tableName);
    this.useDataKey(table.grant(this.role, access));
    return this;
  }

  /**
   * LOGBOOK_BUCKET, plus the object actions in `access`. The env schema requires the name in every
   * handler, so a function with no access still gets the name and no permission.
   */
  bindBucket(bucket: PayloadBucket, access: BucketAccess): this {
    this.setEnv('LOGBOOK_BUCKET', bucket.bucketName);
    this.useDataKey(bucket.grant(this.role, access, this));
    return this;
  }

  /** LOGBOOK_QUEUE_URL, plus send / change-visibility rights as asked. */
  bindQueue(queue: StepQueue, access: QueueAccess): this {
    this.setEnv('LOGBOOK_QUEUE_URL', queue.queueUrl);
    this.useDataKey(queue.grant(this.role, access));
    return this;
  }

  /**
   * Makes this function the queue's consumer: batch size 1 (one tick is one step), partial batch
   * failure reporting, and a concurrency cap. CDK adds receive/delete/visibility on the queue.
   */
  consumeQueue(queue: StepQueue, maxConcurrency: number): this {
    this.fn.addEventSource(new SqsEventSource(queue.queue, { batchSize: 1, reportBatchItemFailures: true, maxConcurrency }));
    return this;
  }

  /** LOGBOOK_EVENT_BUS and events:PutEvents on that bus only (outcome events). */
  bindEventBus(bus: events.IEventBus): this {
    this.setEnv('LOGBOOK_EVENT_BUS', bus.eventBusName);
    this.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['events:PutEvents'], resources: [bus.eventBusArn] }));
    return this;
  }

  /**
   * bedrock:InvokeModel and InvokeModelWithResponseStream on exactly the Bedrock models the agents pin (`bedrock:<id>`, an id,
   * inference profile id or ARN); other ids (scripted, openai:) need no IAM. Only the worker calls
   * models. Call it again with `bedrock:<foundation model id>` to add the models an application
   * inference profile routes to (those cannot be read offline; synth warns).
   */
  bindModels(modelIds: readonly string[]): this {
    const arns = new Set<string>();
    const findings = new Set<string>();
    for (const id of modelIds) {
      if (!id.startsWith('bedrock:')) continue;
      const { resources, acknowledge, unknownModels } = bedrockModelArns(Stack.of(this), id.slice('bedrock:'.length));
      for (const r of resources) arns.add(r);
      for (const f of acknowledge) findings.add(f);
      if (unknownModels) {
        Annotations.of(this).addWarningV2(
          'logbook:bedrock-routed-models',
          `${id} is a Bedrock ${unknownModels}: the worker may invoke it, but not yet the foundation models it routes to, which synth cannot read. ` +
            "Grant them too: logbook.functions.worker.bindModels(['bedrock:<foundation model id>']).",
        );
      }
    }
    if (arns.size === 0) return this;
    // Converse is authorised by bedrock:InvokeModel (there is no separate Converse action), and
    // ConverseStream (a call that streams its text, onText) by bedrock:InvokeModelWithResponseStream.
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream'], resources: [...arns] }),
    );
    for (const finding of findings) {
      Validations.of(this).acknowledge({
        id: `AwsSolutions-IAM5[${finding}]`,
        reason: 'A cross-region inference profile routes to the same foundation model in several regions; the region is the only wildcard.',
      });
    }
    return this;
  }

  /** Retention of finished runs (the head's TTL), from the deployment's config. */
  bindRetention(retention: { readonly completedDays: number; readonly failedOrParkedDays: number }): this {
    this.setEnv('LOGBOOK_RETENTION_COMPLETED_DAYS', String(retention.completedDays));
    this.setEnv('LOGBOOK_RETENTION_FAILED_DAYS', String(retention.failedOrParkedDays));
    return this;
  }

  /** Per-tenant admission (the API and the trigger refuse starts beyond it; see LogbookConfig.tenantLimits). */
  bindTenantLimits(limits: { readonly maxActiveRuns: number; readonly retryAfterSeconds: number }): this {
    this.setEnv('LOGBOOK_MAX_ACTIVE_RUNS', String(limits.maxActiveRuns));
    this.setEnv('LOGBOOK_ADMISSION_RETRY_AFTER_S', String(limits.retryAfterSeconds));
    return this;
  }

  /** Which JWT claim names the tenant (api handler, JWT authorizer only). */
  bindTenantClaim(claim: string): this {
    this.setEnv('LOGBOOK_TENANT_CLAIM', claim);
    return this;
  }

  /** The lease length the worker claims and heartbeats. */
  bindLease(leaseMs: number): this {
    this.setEnv('LOGBOOK_LEASE_MS', String(leaseMs));
    return this;
  }

  /** OpenTelemetry spans of every step (the worker): the OTLP settings, the ADOT layer and what its exporter needs. */
  bindTracing(tracing: LogbookTracing, serviceName: string): this {
    for (const [name, value] of Object.entries(tracingEnvironment(tracing, serviceName))) this.fn.addEnvironment(name, value);
    if (tracing.adotLayerArn) this.fn.addLayers(lambda.LayerVersion.fromLayerVersionArn(this, 'AdotCollector', tracing.adotLayerArn));
    const actions = tracing.actions ?? (tracing.adotLayerArn ? XRAY_WRITE_ACTIONS : []);
    if (actions.length > 0) {
      this.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: [...actions], resources: ['*'] }));
      Validations.of(this).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'X-Ray write actions (PutTraceSegments, PutTelemetryRecords) support no resource-level permissions: they take only "*".',
      });
    }
    return this;
  }
}

/**
 * Bundling hooks that copy `copies` into the output. The paths are taken relative to the project
 * root, which is the input directory of local bundling and of Docker bundling alike.
 */
function copyHooks(projectRoot: string, copies: readonly { readonly source: string; readonly target: string }[]) {
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir: string, outputDir: string) =>
      copies.flatMap(({ source, target }) => {
        const from = `${inputDir}/${relative(projectRoot, source).split(sep).join('/')}`;
        const to = `${outputDir}/${target}`;
        return [`mkdir -p ${shellWord(posix.dirname(to))}`, `cp -R ${shellWord(from)} ${shellWord(to)}`];
      }),
  };
}
