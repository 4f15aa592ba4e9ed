import type { Template } from 'aws-cdk-lib/assertions';
import { Logbook } from 'logbook/cdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { DIGEST_CRON, NIGHTLY_CRON } from '../fixtures/apps/scheduled-agents/agents.js';
import { asArray, describeResource } from './synth.js';
import { userApp } from './user-app.js';

const SCHEDULED_AGENTS = 'test/fixtures/apps/scheduled-agents/agents.ts';
type Statement = { Action: string | string[]; Resource: unknown; Effect: string };
type Json = Record<string, unknown>;

describe('schedules of the agents module, deployed', () => {
  let logbook: Logbook;
  let template: Template;
  let nag: unknown[];
  const scheduleFnId = () =>
    Object.entries(template.findResources('AWS::Lambda::Function')).find(([, r]) =>
      String((r.Properties as Json).Description).startsWith('Logbook schedule'),
    )![0];
  beforeAll(() => {
    const u = userApp();
    logbook = new Logbook(u.stack, 'Logbook', { agents: SCHEDULED_AGENTS });
    expect(logbook.schedules?.schedules.schedules).toHaveLength(2);
    ({ template, nagViolations: nag } = u.synth());
  });

  it('is cdk-nag clean', () => {
    expect(nag).toEqual([]);
  });

  it('one AWS::Scheduler::Schedule per schedule, with its cron, time zone, target input, retry policy and dead-letter queue', () => {
    const found = Object.values(template.findResources('AWS::Scheduler::Schedule')).map((r) => r.Properties as Json);
    expect(found).toHaveLength(2);
    const byExpr = new Map(found.map((p) => [p.ScheduleExpression as string, p]));
    const nightly = byExpr.get(NIGHTLY_CRON)!;
    const digest = byExpr.get(DIGEST_CRON)!;
    expect(nightly.ScheduleExpressionTimezone).toBe('Europe/Paris');
    expect(digest.ScheduleExpressionTimezone).toBe('UTC');
    const dlqs = Object.keys(template.findResources('AWS::SQS::Queue')).filter((id) => id.includes('SchedulesDeadLetter'));
    expect(dlqs).toHaveLength(1);
    for (const p of found) {
      const target = p.Target as Json;
      expect(describeResource(target.Arn)).toBe(`${scheduleFnId()}.Arn`);
      expect(target.RetryPolicy).toEqual({ MaximumRetryAttempts: 8, MaximumEventAgeInSeconds: 3600 });
      expect(describeResource((target.DeadLetterConfig as Json).Arn)).toBe(`${dlqs[0]}.Arn`);
      expect(p.FlexibleTimeWindow).toEqual({ Mode: 'OFF' });
    }
    expect(JSON.parse((nightly.Target as Json).Input as string)).toEqual({
      schedule: 'nightly-report',
      scheduledTime: '<aws.scheduler.scheduled-time>',
      tenant: 'acme',
    });
    expect(JSON.parse((digest.Target as Json).Input as string)).toMatchObject({ schedule: 'digest', tenant: 'default' });
    // The dead-letter queue is encrypted with the deployment's key.
    const dlq = template.findResources('AWS::SQS::Queue')[dlqs[0]!]!.Properties as Json;
    expect(describeResource(dlq.KmsMasterKeyId)).toMatch(/DataKey/);
  });

  it('each schedule has its own role, trusted by EventBridge Scheduler only, that may invoke the schedule function and nothing else', () => {
    const found = Object.values(template.findResources('AWS::Scheduler::Schedule')).map((r) => r.Properties as Json);
    const roleIds = found.map((p) => describeResource((p.Target as Json).RoleArn).replace(/\.Arn$/, ''));
    expect(new Set(roleIds).size).toBe(2);
    const roles = template.findResources('AWS::IAM::Role');
    const policies = Object.values(template.findResources('AWS::IAM::Policy')).map((r) => r.Properties as Json);
    for (const roleId of roleIds) {
      const trust = (roles[roleId]!.Properties as Json).AssumeRolePolicyDocument as { Statement: { Principal: Json }[] };
      expect(trust.Statement.map((s) => s.Principal)).toEqual([{ Service: 'scheduler.amazonaws.com' }]);
      const statements = policies
        .filter((p) => asArray(p.Roles as unknown[]).some((r) => describeResource(r) === `Ref:${roleId}`))
        .flatMap((p) => (p.PolicyDocument as { Statement: Statement[] }).Statement);
      const actions = statements.flatMap((s) => asArray(s.Action)).sort();
      expect(actions).toEqual(['kms:Decrypt', 'kms:GenerateDataKey', 'lambda:InvokeFunction', 'sqs:SendMessage']);
      const invoke = statements.find((s) => asArray(s.Action).includes('lambda:InvokeFunction'))!;
      expect(asArray(invoke.Resource).map(describeResource)).toEqual([`${scheduleFnId()}.Arn`]);
    }
  });

  it('an agents module without schedules deploys no schedule function', () => {
    const u = userApp();
    new Logbook(u.stack, 'Logbook', { agents: 'test/fixtures/apps/scripted-agents/agents.ts' });
    const t = u.synth().template;
    expect(Object.keys(t.findResources('AWS::Scheduler::Schedule'))).toEqual([]);
    expect(
      Object.values(t.findResources('AWS::Lambda::Function')).filter((r) => String((r.Properties as Json).Description).startsWith('Logbook schedule')),
    ).toEqual([]);
  });
});
