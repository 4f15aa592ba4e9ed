import { Duration, Validations, type RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/** What the construct deploys of one schedule (read from the agents module's registry.schedules()). */
export interface DeployedSchedule {
  readonly name: string;
  readonly cron: string;
  readonly timezone: string;
  readonly tenant: string;
}

export interface RunSchedulesProps {
  /** The schedule function (createScheduleHandler). */
  readonly handler: lambda.IFunction;
  readonly schedules: readonly DeployedSchedule[];
  readonly key: kms.IKey;
  readonly removalPolicy: RemovalPolicy;
  /** Name prefix of the schedules (unique per account and region). */
  readonly namePrefix: string;
}

/** EventBridge Scheduler's attempts to hand a firing to Lambda, and how long it keeps trying. */
export const SCHEDULE_RETRY = { attempts: 8, maxEventAge: Duration.hours(1) } as const;
/** Lambda's attempts after the schedule handler threw (a store failure, the tenant at its limit). */
export const SCHEDULE_HANDLER_RETRY_ATTEMPTS = 2;

/**
 * One `AWS::Scheduler::Schedule` per schedule of the agents and workflows, each with its own role
 * (lambda:InvokeFunction on the schedule function, nothing else but its dead-letter queue), its
 * time zone, a retry policy and an encrypted dead-letter queue. The target input names the
 * schedule, the tenant and EventBridge Scheduler's `<aws.scheduler.scheduled-time>`: the run id
 * is derived from it (lib/core/cron.ts scheduleRunId), so a redelivered firing starts no second run.
 */
export class RunSchedules extends Construct {
  readonly schedules: scheduler.CfnSchedule[] = [];
  readonly roles: iam.Role[] = [];
  /**
   * Firings EventBridge Scheduler could not hand to the function after its retries, and firings
   * the function threw on for each of Lambda's attempts (its on-failure destination). Redrive
   * one by invoking the function with its input: the run id is the firing's, nothing is doubled.
   */
  readonly deadLetterQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: RunSchedulesProps) {
    super(scope, id);
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetter', {
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: props.key,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: props.removalPolicy,
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'This queue is itself a dead-letter queue: the one of the schedules and of the schedule function.',
    });
    props.handler.configureAsyncInvoke({
      // As the trigger's: no SqsDestination grant (kms:ReEncrypt*); the function's role holds the key already.
      onFailure: { bind: () => ({ destination: this.deadLetterQueue.queueArn }) },
      maxEventAge: Duration.hours(1),
      retryAttempts: SCHEDULE_HANDLER_RETRY_ATTEMPTS,
    });
    props.handler.addToRolePolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.deadLetterQueue.queueArn] }));
    for (const s of props.schedules) {
      const role = new iam.Role(this, `Role-${s.name}`, {
        assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com'),
        description: `Logbook schedule ${s.name}: invokes the schedule function`,
      });
      role.addToPolicy(new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [props.handler.functionArn] }));
      role.addToPolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.deadLetterQueue.queueArn] }));
      role.addToPolicy(new iam.PolicyStatement({ actions: ['kms:GenerateDataKey', 'kms:Decrypt'], resources: [props.key.keyArn] }));
      this.roles.push(role);
      this.schedules.push(
        new scheduler.CfnSchedule(this, `Schedule-${s.name}`, {
          name: `${props.namePrefix}-${s.name}`.slice(0, 64),
          description: `Logbook: starts a run of ${s.name} on ${s.cron}`,
          scheduleExpression: s.cron,
          scheduleExpressionTimezone: s.timezone,
          flexibleTimeWindow: { mode: 'OFF' },
          state: 'ENABLED',
          target: {
            arn: props.handler.functionArn,
            roleArn: role.roleArn,
            input: JSON.stringify({ schedule: s.name, scheduledTime: '<aws.scheduler.scheduled-time>', tenant: s.tenant }),
            retryPolicy: { maximumRetryAttempts: SCHEDULE_RETRY.attempts, maximumEventAgeInSeconds: SCHEDULE_RETRY.maxEventAge.toSeconds() },
            deadLetterConfig: { arn: this.deadLetterQueue.queueArn },
          },
        }),
      );
    }
  }
}
