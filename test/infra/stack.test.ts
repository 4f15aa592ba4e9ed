import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { QUEUES, RETENTION, TABLE } from '../../lib/adapters/aws/table-definition.js';
import { MAX_RECEIVE_COUNT, STEP_QUEUE_VISIBILITY_S, WORKER_TIMEOUT_S } from '../../lib/core/limits.js';
import { DEFAULTS } from '../../lib/cdk/config.js';
import { METRICS, SERVICE_NAMES } from '../../lib/cdk/metrics.js';
import { logicalId, synthLogbook, type Synthesized } from './synth.js';

// One real synth for the whole file: bundling runs the local esbuild, as `cdk synth` does.
let s: Synthesized;
beforeAll(() => {
  s = synthLogbook({ bundle: true });
});

describe('cdk-nag', () => {
  it('reports no unsuppressed AwsSolutions findings', () => {
    expect(s.nagViolations).toEqual([]);
  });
});

describe('table', () => {
  it('has the keys, GSIs, TTL and settings of table-definition', () => {
    s.template.resourceCountIs('AWS::DynamoDB::Table', 1);
    s.template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
        { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^LogbookDataKey'), 'Arn'] } },
      TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true },
      DeletionProtectionEnabled: true,
      GlobalSecondaryIndexes: Object.values(TABLE.gsi).map((g) => ({
        IndexName: g.name,
        KeySchema: [
          { AttributeName: g.partitionKey, KeyType: 'HASH' },
          { AttributeName: g.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      })),
    });
  });

  it('is retained when the stack is deleted (default removal policy)', () => {
    s.template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
  });

  it('uses a rotated customer-managed key', () => {
    s.template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    s.template.hasResource('AWS::KMS::Key', { DeletionPolicy: 'Retain' });
  });
});

describe('payload bucket', () => {
  const payloads = () => logicalId(s.template, 'AWS::S3::Bucket', 'PayloadsBucket');

  it('blocks public access, is KMS-encrypted with a bucket key, logs access, and expires payloads after their events', () => {
    const bucket = s.template.findResources('AWS::S3::Bucket')[payloads()]?.Properties as Record<string, unknown>;
    expect(bucket).toMatchObject({
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ BucketKeyEnabled: true, ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms' } }],
      },
      LoggingConfiguration: { DestinationBucketName: { Ref: expect.stringMatching(/^LogbookPayloadsAccessLogs/) } },
      LifecycleConfiguration: {
        Rules: [{ Status: 'Enabled', ExpirationInDays: RETENTION.eventsDays + DEFAULTS.maxRunDays, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } }],
      },
    });
    expect(bucket.VersioningConfiguration).toBeUndefined();
  });

  it('denies every request that is not TLS, on both buckets', () => {
    const policies = s.template.findResources('AWS::S3::BucketPolicy');
    expect(Object.keys(policies)).toHaveLength(2);
    for (const policy of Object.values(policies)) {
      expect(JSON.stringify(policy)).toContain('"aws:SecureTransport":"false"');
    }
  });

  it('lets no principal outside the account read it (no public statement)', () => {
    for (const policy of Object.values(s.template.findResources('AWS::S3::BucketPolicy'))) {
      const statements = (policy.Properties as { PolicyDocument: { Statement: Record<string, unknown>[] } }).PolicyDocument.Statement;
      for (const st of statements.filter((x) => x.Effect === 'Allow')) {
        expect(st.Principal).toEqual({ Service: 'logging.s3.amazonaws.com' });
      }
    }
  });
});

describe('step queue', () => {
  it('is FIFO, KMS-encrypted, with visibility 6 x the worker timeout and a FIFO DLQ after 5 receives', () => {
    expect(STEP_QUEUE_VISIBILITY_S).toBeGreaterThanOrEqual(6 * WORKER_TIMEOUT_S);
    s.template.hasResourceProperties('AWS::SQS::Queue', {
      QueueName: `Logbook-${QUEUES.steps.name}`,
      FifoQueue: true,
      ContentBasedDeduplication: false,
      VisibilityTimeout: STEP_QUEUE_VISIBILITY_S,
      KmsMasterKeyId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^LogbookDataKey'), 'Arn'] },
      RedrivePolicy: {
        deadLetterTargetArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^LogbookStepsDeadLetter'), 'Arn'] },
        maxReceiveCount: MAX_RECEIVE_COUNT,
      },
    });
    s.template.hasResourceProperties('AWS::SQS::Queue', {
      QueueName: `Logbook-${QUEUES.deadLetter.name}`,
      FifoQueue: true,
      KmsMasterKeyId: Match.anyValue(),
      MessageRetentionPeriod: 14 * 24 * 3600,
    });
  });

  it('enforces TLS on every queue', () => {
    const queues = Object.keys(s.template.findResources('AWS::SQS::Queue'));
    const policies = Object.values(s.template.findResources('AWS::SQS::QueuePolicy'));
    for (const id of queues) {
      const covering = policies.filter((p) => JSON.stringify(p).includes(`"${id}"`) && JSON.stringify(p).includes('"aws:SecureTransport":"false"'));
      expect(covering, id).not.toHaveLength(0);
    }
  });
});

describe('functions', () => {
  it('are four ARM64 nodejs22.x functions with their own log groups', () => {
    s.template.resourceCountIs('AWS::Lambda::Function', 4);
    for (const fn of Object.values(s.template.findResources('AWS::Lambda::Function'))) {
      expect(fn.Properties).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        LoggingConfig: { LogGroup: { Ref: expect.stringMatching(/Logs/) } },
        Environment: { Variables: { NODE_OPTIONS: '--enable-source-maps', POWERTOOLS_METRICS_NAMESPACE: METRICS.namespace } },
      });
    }
    for (const lg of Object.values(s.template.findResources('AWS::Logs::LogGroup'))) {
      expect((lg.Properties as { RetentionInDays?: number }).RetentionInDays).toBe(30);
    }
  });

  it('uses roles without AWS managed policies', () => {
    for (const role of Object.values(s.template.findResources('AWS::IAM::Role'))) {
      expect((role.Properties as { ManagedPolicyArns?: unknown }).ManagedPolicyArns).toBeUndefined();
    }
  });

  it('lets only the worker loop through SQS (RecursiveLoop Allow), with the timeout of limits.ts', () => {
    s.template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ POWERTOOLS_SERVICE_NAME: SERVICE_NAMES.worker }) },
      RecursiveLoop: 'Allow',
      Timeout: WORKER_TIMEOUT_S,
    });
    const allowing = Object.values(s.template.findResources('AWS::Lambda::Function')).filter(
      (f) => (f.Properties as { RecursiveLoop?: string }).RecursiveLoop === 'Allow',
    );
    expect(allowing).toHaveLength(1);
  });

  it('feeds the worker one tick at a time, with partial batch failures and a concurrency cap', () => {
    s.template.resourceCountIs('AWS::Lambda::EventSourceMapping', 1);
    s.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^LogbookStepsQueue'), 'Arn'] },
      FunctionName: { Ref: Match.stringLikeRegexp('^LogbookWorkerFunction') },
      BatchSize: 1,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: DEFAULTS.workerMaxConcurrency },
    });
  });

  it('were bundled by the local esbuild as minified ESM with a require shim and a source map', () => {
    const manifest = JSON.parse(readFileSync(join(s.outdir, 'Logbook.assets.json'), 'utf8')) as {
      files: Record<string, { source: { path: string; packaging?: string } }>;
    };
    const bundles = Object.values(manifest.files).filter((f) => f.source.packaging === 'zip');
    expect(bundles).toHaveLength(4);
    for (const bundle of bundles) {
      const dir = join(s.outdir, bundle.source.path);
      const code = readFileSync(join(dir, 'index.mjs'), 'utf8');
      expect(code.startsWith("import { createRequire as __logbookCreateRequire } from 'node:module'; const require =")).toBe(true);
      expect(code).toContain('export{');
      expect(code).toMatch(/sourceMappingURL=index\.mjs\.map/);
      expect(existsSync(join(dir, 'index.mjs.map'))).toBe(true);
      // Sources stay out of the artifact; the map only names files and lines.
      expect(readFileSync(join(dir, 'index.mjs.map'), 'utf8')).not.toContain('sourcesContent');
    }
  });

  it('load as ES modules in plain Node and export a handler (the require shim works)', () => {
    const manifest = JSON.parse(readFileSync(join(s.outdir, 'Logbook.assets.json'), 'utf8')) as {
      files: Record<string, { source: { path: string; packaging?: string } }>;
    };
    const urls = Object.values(manifest.files)
      .filter((f) => f.source.packaging === 'zip')
      .map((f) => pathToFileURL(join(s.outdir, f.source.path, 'index.mjs')).href);
    // A separate Node process loads the bundles as Lambda's runtime does (no test transform), with
    // the environment the stack binds, in stand-in values, in case a handler reads it on import.
    const script = `for (const u of ${JSON.stringify(urls)}) { const m = await import(u); console.log(typeof m.handler); }`;
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH,
        LOGBOOK_TABLE: 'table',
        LOGBOOK_BUCKET: 'bucket',
        LOGBOOK_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/Logbook-logbook-steps.fifo',
        AWS_REGION: 'us-east-1',
      },
    });
    expect(result.stderr).toBe('');
    expect(result.stdout.trim().split('\n')).toEqual(['function', 'function', 'function', 'function']);
  });
});

describe('HTTP API', () => {
  it('routes everything to the api handler behind IAM authorization', () => {
    s.template.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
    s.template.hasResourceProperties('AWS::ApiGatewayV2::Api', { ProtocolType: 'HTTP' });
    const routes = Object.values(s.template.findResources('AWS::ApiGatewayV2::Route'));
    expect(routes.length).toBeGreaterThan(0);
    for (const route of routes) expect((route.Properties as { AuthorizationType: string }).AuthorizationType).toBe('AWS_IAM');
    s.template.resourceCountIs('AWS::ApiGatewayV2::Authorizer', 0);
    s.template.hasResourceProperties('AWS::ApiGatewayV2::Integration', {
      IntegrationType: 'AWS_PROXY',
      IntegrationUri: { 'Fn::GetAtt': [Match.stringLikeRegexp('^LogbookApiFunction'), 'Arn'] },
    });
  });

  it('throttles and writes JSON access logs without headers or bodies', () => {
    s.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: DEFAULTS.apiThrottle.rateLimit, ThrottlingBurstLimit: DEFAULTS.apiThrottle.burstLimit },
      AccessLogSettings: { DestinationArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^LogbookHttpAccessLogs'), 'Arn'] }, Format: Match.anyValue() },
    });
    const stage = Object.values(s.template.findResources('AWS::ApiGatewayV2::Stage'))[0];
    const format = JSON.parse((stage?.Properties as { AccessLogSettings: { Format: string } }).AccessLogSettings.Format) as Record<string, string>;
    expect(format.requestId).toBe('$context.requestId');
    expect(Object.values(format).join(' ')).not.toMatch(/header|body|authorization/i);
  });
});

describe('EventBridge', () => {
  it('sends Agent Run Requested on the Logbook bus to the trigger, with retries and a DLQ', () => {
    s.template.resourceCountIs('AWS::Events::EventBus', 1);
    s.template.hasResourceProperties('AWS::Events::Rule', {
      EventBusName: { Ref: Match.stringLikeRegexp('^LogbookEventsBus') },
      EventPattern: { 'detail-type': ['Agent Run Requested'] },
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^LogbookTriggerFunction'), 'Arn'] },
          DeadLetterConfig: { Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^LogbookEventsTriggerDeadLetter'), 'Arn'] } },
          RetryPolicy: Match.objectLike({ MaximumRetryAttempts: 8 }),
        }),
      ],
    });
  });

  it('runs the sweeper every minute from the default bus', () => {
    s.template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^LogbookSweeperFunction'), 'Arn'] } })],
    });
  });

  it('lets EventBridge invoke only the trigger and the sweeper, each from its own rule', () => {
    const permissions = Object.values(s.template.findResources('AWS::Lambda::Permission')).map((p) => p.Properties as Record<string, unknown>);
    const fromEvents = permissions.filter((p) => p.Principal === 'events.amazonaws.com');
    expect(fromEvents.map((p) => (p.FunctionName as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0]).sort()).toEqual([
      expect.stringMatching(/^LogbookSweeperFunction/),
      expect.stringMatching(/^LogbookTriggerFunction/),
    ]);
    for (const p of fromEvents) expect(p.SourceArn).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^LogbookEvents/), 'Arn'] });
  });
});

describe('alarms', () => {
  const alarms = () => Object.values(s.template.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties as Record<string, unknown>);

  it('watch both dead-letter queues', () => {
    for (const prefix of ['StepsDeadLetter', 'EventsTriggerDeadLetter']) {
      const found = alarms().filter(
        (a) => a.MetricName === 'ApproximateNumberOfMessagesVisible' && JSON.stringify(a.Dimensions).includes(prefix),
      );
      expect(found, prefix).toHaveLength(1);
      expect(found[0]).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
    }
  });

  it('watch worker errors (and every other handler)', () => {
    const errors = alarms().filter((a) => a.MetricName === 'Errors' && a.Namespace === 'AWS/Lambda');
    expect(errors).toHaveLength(4);
    expect(errors.some((a) => JSON.stringify(a.Dimensions).includes('WorkerFunction'))).toBe(true);
  });

  it('watch the runaway guards and parked runs on the worker EMF metrics', () => {
    const expected = [
      [METRICS.names.ticksWithoutProgress, 'Sum', DEFAULTS.alarms.ticksWithoutProgress],
      [METRICS.names.invocationsPerRun, 'Maximum', DEFAULTS.alarms.invocationsPerRun],
      [METRICS.names.runsParked, 'Sum', DEFAULTS.alarms.runsParked],
    ] as const;
    for (const [name, statistic, threshold] of expected) {
      const alarm = alarms().find((a) => a.MetricName === name);
      expect(alarm, name).toMatchObject({
        Namespace: 'Logbook',
        Statistic: statistic,
        Threshold: threshold,
        Dimensions: [{ Name: 'service', Value: SERVICE_NAMES.worker }],
        TreatMissingData: 'notBreaching',
      });
    }
  });

  it('notify an SNS topic that is KMS-encrypted and TLS-only', () => {
    const topic = logicalId(s.template, 'AWS::SNS::Topic', 'AlarmsTopic');
    s.template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^LogbookDataKey'), 'Arn'] } });
    expect(JSON.stringify(s.template.findResources('AWS::SNS::TopicPolicy'))).toContain('"aws:SecureTransport":"false"');
    for (const alarm of alarms()) expect(alarm.AlarmActions).toEqual([{ Ref: topic }]);
  });

  it('the key lets CloudWatch and EventBridge encrypt notifications and dead letters', () => {
    const key = Object.values(s.template.findResources('AWS::KMS::Key'))[0]?.Properties as { KeyPolicy: { Statement: Record<string, unknown>[] } };
    const services = key.KeyPolicy.Statement.map((st) => (st.Principal as { Service?: string }).Service).filter(Boolean);
    expect(services.sort()).toEqual(['cloudwatch.amazonaws.com', 'events.amazonaws.com']);
    // The account root statement delegates key use to IAM, so the roles' exact kms:* grants apply.
    expect(key.KeyPolicy.Statement).toContainEqual(
      expect.objectContaining({ Action: 'kms:*', Effect: 'Allow', Principal: { AWS: expect.objectContaining({ 'Fn::Join': expect.anything() }) } }),
    );
  });
});

describe('outputs', () => {
  it('name the API URL, table, bucket, queue URL and bus', () => {
    const outputs = s.template.findOutputs('*');
    expect(Object.keys(outputs).sort()).toEqual(['AlarmTopicArn', 'ApiUrl', 'BucketName', 'EventBusName', 'QueueUrl', 'TableName']);
    expect(outputs.TableName?.Value).toEqual({ Ref: expect.stringMatching(/^LogbookRunsTable/) });
    expect(outputs.QueueUrl?.Value).toEqual({ Ref: expect.stringMatching(/^LogbookStepsQueue/) });
    expect(outputs.EventBusName?.Value).toEqual({ Ref: expect.stringMatching(/^LogbookEventsBus/) });
  });
});
