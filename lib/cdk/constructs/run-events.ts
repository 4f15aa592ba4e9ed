import { Duration, Validations, type RemovalPolicy } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
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
}

/**
 * EventBridge wiring: the bus that carries run requests in and outcome events out, the rule that
 * sends `Agent Run Requested` to the trigger, and the schedule that runs the sweeper.
 */
export class RunEvents extends Construct {
  readonly bus: events.IEventBus;
  readonly runRequestedRule: events.Rule;
  readonly sweepSchedule: events.Rule;
  /** Run requests the trigger could not take after EventBridge's retries. */
  readonly triggerDeadLetterQueue: sqs.Queue;

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
