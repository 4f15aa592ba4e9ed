import { Duration, Validations, type RemovalPolicy } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/** detail-type of the event that starts a run. */
export const RUN_REQUESTED_DETAIL_TYPE = 'Agent Run Requested';

export interface RunEventsProps {
  readonly trigger: lambda.IFunction;
  readonly sweeper: lambda.IFunction;
  readonly useDefaultEventBus: boolean;
  readonly triggerSources?: readonly string[];
  readonly sweepEvery: Duration;
  readonly key: kms.IKey;
  readonly removalPolicy: RemovalPolicy;
  /** Name of the bus this construct creates (unless useDefaultEventBus); unique per account and region. */
  readonly busName: string;
  /** How long a run request may wait in Lambda's asynchronous queue before it is a failure. */
  readonly triggerMaxEventAge: Duration;
}

/**
 * Attempts Lambda makes after the trigger threw (0..2). Two, spaced by Lambda (about 1 then 2
 * minutes): a transient DynamoDB or SQS failure clears; a persistent one goes to the failure
 * queue within minutes instead of being retried for hours.
 */
export const TRIGGER_RETRY_ATTEMPTS = 2;

/**
 * EventBridge wiring: the bus that carries run requests in and outcome events out, the rule that
 * sends `Agent Run Requested` to the trigger, and the schedule that runs the sweeper.
 */
export class RunEvents extends Construct {
  readonly bus: events.IEventBus;
  readonly runRequestedRule: events.Rule;
  readonly sweepSchedule: events.Rule;
  /** Run requests EventBridge could not deliver to the trigger (invoke refused) after its retries. */
  readonly triggerDeadLetterQueue: sqs.Queue;
  /**
   * Run requests delivered to the trigger that it did not take: the handler threw on every
   * attempt, or the event waited longer than triggerMaxEventAge (throttled). Each message is
   * Lambda's invocation record, the original event under `requestPayload`: re-put it on the bus
   * to start that run (the run id derives from the event id, so a run that did start is not doubled).
   */
  readonly triggerFailureQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: RunEventsProps) {
    super(scope, id);
    this.bus = props.useDefaultEventBus
      ? events.EventBus.fromEventBusName(this, 'DefaultBus', 'default')
      : new events.EventBus(this, 'Bus', {
          eventBusName: props.busName,
          description: 'Logbook: run requests in, run outcomes out',
        });
    this.triggerDeadLetterQueue = new sqs.Queue(this, 'TriggerDeadLetter', {
      // Failed requests carry the agent input: same key as the rest of the run data.
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: props.key,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: props.removalPolicy,
    });
    Validations.of(this.triggerDeadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'This queue is itself a dead-letter queue: the one of the EventBridge target that invokes the trigger.',
    });
    // EventBridge invokes the trigger asynchronously: its retries and dead-letter queue above cover
    // only the hand-over to Lambda. What happens after, when the handler throws or the event waits
    // throttled, is Lambda's: without an on-failure destination Lambda drops the event after its
    // retries, and that run never starts, silently.
    this.triggerFailureQueue = new sqs.Queue(this, 'TriggerFailures', {
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: props.key,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: props.removalPolicy,
    });
    Validations.of(this.triggerFailureQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: "This queue is itself a dead-letter queue: the on-failure destination of the trigger function's asynchronous invocations.",
    });
    props.trigger.configureAsyncInvoke({
      // Not lambda-destinations' SqsDestination: its grant adds kms:ReEncrypt* and
      // kms:GenerateDataKey* to the role. Lambda sends with the function's role, which already
      // holds kms:GenerateDataKey and kms:Decrypt on this key (the table and queue need them).
      onFailure: { bind: () => ({ destination: this.triggerFailureQueue.queueArn }) },
      maxEventAge: props.triggerMaxEventAge,
      retryAttempts: TRIGGER_RETRY_ATTEMPTS,
    });
    props.trigger.addToRolePolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.triggerFailureQueue.queueArn] }));
    this.runRequestedRule = new events.Rule(this, 'RunRequested', {
      eventBus: this.bus,
      description: `${RUN_REQUESTED_DETAIL_TYPE} → trigger handler`,
      eventPattern: {
        detailType: [RUN_REQUESTED_DETAIL_TYPE],
        ...(props.triggerSources ? { source: [...props.triggerSources] } : {}),
      },
      targets: [
        new targets.LambdaFunction(props.trigger, {
          deadLetterQueue: this.triggerDeadLetterQueue,
          retryAttempts: 8,
          maxEventAge: Duration.hours(2),
        }),
      ],
    });
    // Scheduled rules only exist on the default bus, whichever bus carries run requests.
    this.sweepSchedule = new events.Rule(this, 'SweepSchedule', {
      description: 'Wakes runs whose wakeAt has passed, whose lease expired, or that owe a notification',
      schedule: events.Schedule.rate(props.sweepEvery),
      // A missed sweep is redone by the next one a minute later: no retries to pile up.
      targets: [new targets.LambdaFunction(props.sweeper, { retryAttempts: 0, maxEventAge: Duration.minutes(1) })],
    });
  }
}
