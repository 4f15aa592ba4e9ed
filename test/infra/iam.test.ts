import { beforeAll, describe, expect, it } from 'vitest';
import { asArray, describeResource, inLogbook, statementsOf, synthLogbook, type Synthesized } from './synth.js';

// The template alone is enough here: skip bundling.
let s: Synthesized;
beforeAll(() => {
  s = synthLogbook({ bundle: false });
});

/** Every (action, resource) pair a role's policy allows, with logical-id hashes stripped. */
function grantsOf(rolePrefix: string): string[] {
  const pairs = new Set<string>();
  for (const st of statementsOf(s.template, rolePrefix)) {
    expect(st.Effect).toBe('Allow');
    expect(st.Condition).toBeUndefined();
    for (const action of asArray(st.Action as string | string[])) {
      for (const resource of asArray(st.Resource)) {
        // Ids of the Logbook construct's children, without its prefix and the hashes.
        pairs.add(`${action} @ ${describeResource(resource).replace(/[0-9A-F]{8}(?=\.)/g, '').replace(/(^|[^A-Za-z])Logbook(?=[A-Z])/g, '$1')}`);
      }
    }
  }
  return [...pairs].sort();
}

function expand(spec: Record<string, string[]>): string[] {
  return Object.entries(spec)
    .flatMap(([resource, actions]) => actions.map((a) => `${a} @ ${resource}`))
    .sort();
}

const TABLE = 'RunsTable.Arn';
const KEY = 'DataKey.Arn';
const OBJECTS = 'PayloadsBucket.Arn/*';
const BUCKET = 'PayloadsBucket.Arn';
const QUEUE = 'StepsQueue.Arn';

describe('least privilege per handler', () => {
  it('worker: table read/write/delete, bucket read/write, queue send + visibility + consume, PutEvents on the bus', () => {
    expect(grantsOf('WorkerRole')).toEqual(
      expand({
        'WorkerLogs.Arn': ['logs:CreateLogStream', 'logs:PutLogEvents'],
        [TABLE]: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
        [KEY]: ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey'],
        [OBJECTS]: ['s3:GetObject', 's3:PutObject'],
        [BUCKET]: ['s3:ListBucket'],
        [QUEUE]: [
          'sqs:SendMessage',
          'sqs:ChangeMessageVisibility',
          'sqs:ReceiveMessage',
          'sqs:DeleteMessage',
          'sqs:GetQueueAttributes',
          'sqs:GetQueueUrl',
        ],
        'EventsBus.Arn': ['events:PutEvents'],
      }),
    );
  });

  it('api: table read/write/delete plus Query on the two listing indexes, bucket read/write, queue send', () => {
    expect(grantsOf('ApiRole')).toEqual(
      expand({
        'ApiLogs.Arn': ['logs:CreateLogStream', 'logs:PutLogEvents'],
        [TABLE]: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
        [`${TABLE}/index/byTenant`]: ['dynamodb:Query'],
        [`${TABLE}/index/byTenantStatus`]: ['dynamodb:Query'],
        [`${TABLE}/index/byParent`]: ['dynamodb:Query'],
        [KEY]: ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey'],
        [OBJECTS]: ['s3:GetObject', 's3:PutObject'],
        [BUCKET]: ['s3:ListBucket'],
        [QUEUE]: ['sqs:SendMessage'],
      }),
    );
  });

  it('trigger: table read/write, bucket write, reads of the uploads only, queue send, send to its on-failure queue', () => {
    expect(grantsOf('TriggerRole')).toEqual(
      expand({
        'TriggerLogs.Arn': ['logs:CreateLogStream', 'logs:PutLogEvents'],
        [TABLE]: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
        [KEY]: ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey'],
        [OBJECTS]: ['s3:PutObject'],
        [`${OBJECTS.slice(0, -2)}/attachments/*`]: ['s3:GetObject'],
        [BUCKET]: ['s3:ListBucket'],
        [QUEUE]: ['sqs:SendMessage'],
        'EventsTriggerFailures.Arn': ['sqs:SendMessage'],
      }),
    );
  });

  it('sweeper: reads the sweep index and heads, updates heads (its wake-up marks), and sends ticks', () => {
    expect(grantsOf('SweeperRole')).toEqual(
      expand({
        'SweeperLogs.Arn': ['logs:CreateLogStream', 'logs:PutLogEvents'],
        [TABLE]: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem'],
        [`${TABLE}/index/sweep`]: ['dynamodb:Query'],
        [KEY]: ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey'],
        [QUEUE]: ['sqs:SendMessage'],
      }),
    );
  });

  it('no identity policy in the stack has a wildcard action or a `*` resource', () => {
    for (const policy of Object.values(s.template.findResources('AWS::IAM::Policy'))) {
      const doc = (policy.Properties as { PolicyDocument: { Statement: Record<string, unknown>[] } }).PolicyDocument;
      for (const st of doc.Statement) {
        for (const action of asArray(st.Action as string | string[])) expect(action).not.toContain('*');
        for (const resource of asArray(st.Resource)) expect(resource).not.toBe('*');
      }
    }
  });

  it('only Lambda assumes the four roles', () => {
    const roles = Object.values(s.template.findResources('AWS::IAM::Role'));
    expect(roles).toHaveLength(4);
    for (const role of roles) {
      expect((role.Properties as { AssumeRolePolicyDocument: unknown }).AssumeRolePolicyDocument).toEqual({
        Version: '2012-10-17',
        Statement: [{ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } }],
      });
    }
  });
});

describe('environment set by bind*()', () => {
  const envOf = (prefix: string): Record<string, unknown> => {
    const [, fn] = Object.entries(s.template.findResources('AWS::Lambda::Function')).find(([id]) => inLogbook(id, prefix)) ?? [];
    return ((fn?.Properties as { Environment: { Variables: Record<string, unknown> } }).Environment.Variables);
  };

  it('gives every handler the table, bucket and queue the env schema requires', () => {
    for (const prefix of ['WorkerFunction', 'ApiFunction', 'TriggerFunction', 'SweeperFunction']) {
      const env = envOf(prefix);
      expect(env.LOGBOOK_TABLE).toEqual({ Ref: expect.stringMatching(/^LogbookRunsTable/) });
      expect(env.LOGBOOK_BUCKET).toEqual({ Ref: expect.stringMatching(/^LogbookPayloadsBucket/) });
      expect(env.LOGBOOK_QUEUE_URL).toEqual({ Ref: expect.stringMatching(/^LogbookStepsQueue/) });
    }
  });

  it('gives the worker the bus, the lease and retention; only the worker publishes', () => {
    expect(envOf('WorkerFunction')).toMatchObject({
      LOGBOOK_EVENT_BUS: { Ref: expect.stringMatching(/^LogbookEventsBus/) },
      LOGBOOK_LEASE_MS: '60000',
      LOGBOOK_RETENTION_COMPLETED_DAYS: '30',
      LOGBOOK_RETENTION_FAILED_DAYS: '90',
    });
    for (const prefix of ['ApiFunction', 'TriggerFunction', 'SweeperFunction']) expect(envOf(prefix).LOGBOOK_EVENT_BUS).toBeUndefined();
  });

  it('gives the API and the trigger (the two that start runs) the per-tenant limit', () => {
    for (const prefix of ['ApiFunction', 'TriggerFunction']) {
      expect(envOf(prefix)).toMatchObject({ LOGBOOK_MAX_ACTIVE_RUNS: '100', LOGBOOK_ADMISSION_RETRY_AFTER_S: '5' });
    }
    for (const prefix of ['WorkerFunction', 'SweeperFunction']) expect(envOf(prefix).LOGBOOK_MAX_ACTIVE_RUNS).toBeUndefined();
  });
});
