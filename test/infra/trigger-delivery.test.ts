// What happens to a run request after EventBridge hands it to the trigger: Lambda's retries are
// bounded, a request the handler never took lands in an encrypted, alarmed queue instead of being
// dropped, and the trigger's concurrency is reserved (and capped). Plus the data key serves the
// AWS services only on behalf of this account.
import { Duration } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULTS, withDefaults } from '../../lib/cdk/config.js';
import { TRIGGER_RETRY_ATTEMPTS } from '../../lib/cdk/constructs/run-events.js';
import { logicalId, synthLogbook, type Synthesized } from './synth.js';

let s: Synthesized;
beforeAll(() => {
  s = synthLogbook({ bundle: false });
});

const functionId = (prefix: string) => logicalId(s.template, 'AWS::Lambda::Function', prefix);

describe('the trigger’s asynchronous invocations', () => {
  it('send a request the handler did not take to the failure queue, after at most 2 retries and 1 hour', () => {
    const queue = logicalId(s.template, 'AWS::SQS::Queue', 'EventsTriggerFailures');
    const configs = Object.values(s.template.findResources('AWS::Lambda::EventInvokeConfig')).map((r) => r.Properties as Record<string, unknown>);
    expect(configs).toHaveLength(1);
    expect(configs[0]).toEqual({
      FunctionName: { Ref: functionId('TriggerFunction') },
      Qualifier: '$LATEST',
      MaximumRetryAttempts: 2,
      MaximumEventAgeInSeconds: 3600,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queue, 'Arn'] } } },
    });
    expect(TRIGGER_RETRY_ATTEMPTS).toBe(2);
    expect(DEFAULTS.triggerMaxEventAge.toSeconds()).toBe(3600);
  });

  it('the failure queue is KMS-encrypted with the data key, TLS-only, keeps messages 14 days, and the trigger may send to it', () => {
    const queue = logicalId(s.template, 'AWS::SQS::Queue', 'EventsTriggerFailures');
    expect(s.template.findResources('AWS::SQS::Queue')[queue]?.Properties).toMatchObject({
      KmsMasterKeyId: { 'Fn::GetAtt': [logicalId(s.template, 'AWS::KMS::Key', 'DataKey'), 'Arn'] },
      MessageRetentionPeriod: 14 * 24 * 3600,
    });
    const policies = Object.values(s.template.findResources('AWS::SQS::QueuePolicy')).filter((p) => JSON.stringify(p).includes(queue));
    expect(JSON.stringify(policies)).toContain('"aws:SecureTransport":"false"');
    const triggerPolicy = Object.entries(s.template.findResources('AWS::IAM::Policy')).find(([id]) => id.startsWith('LogbookTriggerRole'))?.[1];
    expect(JSON.stringify(triggerPolicy)).toContain(JSON.stringify({ Action: 'sqs:SendMessage', Effect: 'Allow', Resource: { 'Fn::GetAtt': [queue, 'Arn'] } }));
  });

  it('an alarm fires on the first message in the failure queue and notifies the alarm topic', () => {
    const queue = logicalId(s.template, 'AWS::SQS::Queue', 'EventsTriggerFailures');
    const topic = logicalId(s.template, 'AWS::SNS::Topic', 'AlarmsTopic');
    const alarms = Object.values(s.template.findResources('AWS::CloudWatch::Alarm'))
      .map((a) => a.Properties as Record<string, unknown>)
      .filter((a) => a.MetricName === 'ApproximateNumberOfMessagesVisible' && JSON.stringify(a.Dimensions).includes(queue));
    expect(alarms).toHaveLength(1);
    expect(alarms[0]).toMatchObject({ Namespace: 'AWS/SQS', Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', Statistic: 'Maximum', AlarmActions: [{ Ref: topic }] });
  });

  it('the trigger has reserved concurrency: 10 by default, as configured otherwise; no other function reserves any', () => {
    const reserved = (synth: Synthesized) =>
      Object.fromEntries(
        Object.entries(synth.template.findResources('AWS::Lambda::Function')).map(([id, r]) => [id.replace(/Function[0-9A-F]{8}$/, ''), (r.Properties as Record<string, unknown>).ReservedConcurrentExecutions]),
      );
    expect(reserved(s)).toEqual({ LogbookWorker: undefined, LogbookApi: undefined, LogbookTrigger: 10, LogbookSweeper: undefined });
    const custom = synthLogbook({ bundle: false, config: { triggerReservedConcurrency: 3, triggerMaxEventAge: Duration.minutes(10) } });
    expect(reserved(custom).LogbookTrigger).toBe(3);
    custom.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', { MaximumEventAgeInSeconds: 600 });
  });

  it('refuses a reserved concurrency or event age that would lose or throttle every request', () => {
    expect(() => withDefaults({ triggerReservedConcurrency: 0 })).toThrow(/triggerReservedConcurrency/);
    expect(() => withDefaults({ triggerReservedConcurrency: 1.5 })).toThrow(/triggerReservedConcurrency/);
    expect(() => withDefaults({ triggerMaxEventAge: Duration.seconds(30) })).toThrow(/triggerMaxEventAge/);
    expect(() => withDefaults({ triggerMaxEventAge: Duration.hours(7) })).toThrow(/triggerMaxEventAge/);
  });
});

describe('the data key’s policy', () => {
  it('lets CloudWatch and EventBridge use the key only on behalf of this account (aws:SourceAccount)', () => {
    const key = Object.values(s.template.findResources('AWS::KMS::Key'))[0]?.Properties as { KeyPolicy: { Statement: Record<string, unknown>[] } };
    const services = key.KeyPolicy.Statement.filter((st) => (st.Principal as { Service?: string }).Service);
    expect(services.map((st) => (st.Principal as { Service: string }).Service).sort()).toEqual(['cloudwatch.amazonaws.com', 'events.amazonaws.com']);
    for (const st of services) {
      expect(st.Condition, JSON.stringify(st.Principal)).toEqual({ StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } });
    }
  });
});
