import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRICS, SERVICE_NAMES } from '../metrics.js';

export interface RunAlarmsProps {
  readonly key: kms.IKey;
  readonly functions: Readonly<Record<'worker' | 'api' | 'trigger' | 'sweeper', lambda.IFunction>>;
  readonly stepQueue: sqs.IQueue;
  readonly stepDeadLetterQueue: sqs.IQueue;
  readonly triggerDeadLetterQueue: sqs.IQueue;
  readonly triggerFailureQueue: sqs.IQueue;
  readonly thresholds: { readonly ticksWithoutProgress: number; readonly invocationsPerRun: number; readonly runsParked: number };
  readonly alarmEmail?: string;
}

const FIVE_MINUTES = Duration.minutes(5);

/** A custom worker metric, selected exactly as Powertools emits it (namespace + service). */
function workerMetric(name: string, statistic: string): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: METRICS.namespace,
    metricName: name,
    dimensionsMap: { [METRICS.serviceDimension]: SERVICE_NAMES.worker },
    statistic,
    period: FIVE_MINUTES,
  });
}

/**
 * Alarms an operator needs once RecursiveLoop is Allow and AWS no longer stops a runaway chain,
 * and the encrypted topic they notify.
 */
export class RunAlarms extends Construct {
  readonly topic: sns.Topic;
  readonly alarms: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, props: RunAlarmsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.topic = new sns.Topic(this, 'Topic', {
      displayName: 'Logbook alarms',
      masterKey: props.key,
      enforceSSL: true,
    });
    // enforceSSL gives the topic a policy of its own, which replaces SNS's default one: allow this
    // account's CloudWatch alarms to publish explicitly.
    this.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'AllowCloudWatchAlarms',
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnLike: { 'aws:SourceArn': `arn:${stack.partition}:cloudwatch:${stack.region}:${stack.account}:alarm:*` },
        },
      }),
    );
    if (props.alarmEmail) this.topic.addSubscription(new EmailSubscription(props.alarmEmail));

    this.add('StepDeadLetters', {
      metric: props.stepDeadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
      threshold: 1,
      description: 'Step ticks failed 5 receives and were dead-lettered: a run may be stuck (the sweeper re-wakes it, but look).',
    });
    this.add('TriggerDeadLetters', {
      metric: props.triggerDeadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
      threshold: 1,
      description: 'Agent Run Requested events the trigger could not take after retries: those runs never started.',
    });
    this.add('TriggerFailures', {
      metric: props.triggerFailureQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
      threshold: 1,
      description:
        'Agent Run Requested events the trigger threw on after its retries, or that waited throttled past their maximum age: those runs never started. Re-put requestPayload on the bus.',
    });
    this.add('StepBacklog', {
      metric: props.stepQueue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(1), statistic: 'Maximum' }),
      threshold: 900,
      evaluationPeriods: 5,
      description: 'The oldest step tick waited over 15 minutes: workers are not keeping up (or are capped by maxConcurrency).',
    });
    for (const [name, fn] of Object.entries(props.functions)) {
      this.add(`${name[0]?.toUpperCase()}${name.slice(1)}Errors`, {
        metric: fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
        threshold: 1,
        description: `The ${name} handler threw (or timed out). Handlers report expected failures without throwing.`,
      });
    }
    this.add('TicksWithoutProgress', {
      metric: workerMetric(METRICS.names.ticksWithoutProgress, 'Sum'),
      threshold: props.thresholds.ticksWithoutProgress,
      description: 'Many ticks appended nothing: runs are being woken in a loop without moving (runaway guard).',
    });
    this.add('InvocationsPerRun', {
      metric: workerMetric(METRICS.names.invocationsPerRun, 'Maximum'),
      threshold: props.thresholds.invocationsPerRun,
      description: 'One run has been invoked more times than any sane agent needs: RecursiveLoop is Allow, so only budgets stop it.',
    });
    this.add('RunsParked', {
      metric: workerMetric(METRICS.names.runsParked, 'Sum'),
      threshold: props.thresholds.runsParked,
      description: 'Runs parked for attention (escalated call, poison run, missing version): a person must resolve them.',
    });
  }

  private add(id: string, options: { metric: cloudwatch.IMetric; threshold: number; description: string; evaluationPeriods?: number }): void {
    const alarm = new cloudwatch.Alarm(this, id, {
      metric: options.metric,
      threshold: options.threshold,
      evaluationPeriods: options.evaluationPeriods ?? 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      // No data means nothing happened: idle deployments stay green.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: options.description,
    });
    alarm.addAlarmAction(new SnsAction(this.topic));
    alarm.addOkAction(new SnsAction(this.topic));
    this.alarms.push(alarm);
  }
}
