import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { QUEUES } from '../../adapters/aws/table-definition.js';
import { MAX_RECEIVE_COUNT, STEP_QUEUE_VISIBILITY_S } from '../../core/limits.js';

export interface QueueAccess {
  /** SendMessage: enqueue a wake-up tick. */
  readonly send?: boolean;
  /** ChangeMessageVisibility: the worker shortens and renews its tick with the lease. */
  readonly changeVisibility?: boolean;
}

export interface StepQueueProps {
  readonly key: kms.IKey;
  readonly removalPolicy: RemovalPolicy;
  /** Queue names are `<namePrefix>-logbook-steps.fifo` (and `-dlq.fifo`); unique per account and region. */
  readonly namePrefix: string;
}

/** SQS allows 80 characters; FIFO names end in `.fifo`, which QUEUES' names already do. */
function queueName(prefix: string, name: string): string {
  const full = `${prefix}-${name}`;
  if (full.length > 80) throw new Error(`queue name ${full} is longer than 80 characters: use a shorter stack name or construct id`);
  return full;
}

/** The FIFO queue of step ticks (one message group per run) and its dead-letter queue. */
export class StepQueue extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: StepQueueProps) {
    super(scope, id);
    const common = {
      fifo: true,
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: props.key,
      // Fewer KMS calls per step; an hour is well inside the 24 h SQS allows.
      dataKeyReuse: Duration.hours(1),
      enforceSSL: true,
      removalPolicy: props.removalPolicy,
    } as const;
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetter', {
      ...common,
      queueName: queueName(props.namePrefix, QUEUES.deadLetter.name),
      retentionPeriod: Duration.days(14),
    });
    this.queue = new sqs.Queue(this, 'Queue', {
      ...common,
      queueName: queueName(props.namePrefix, QUEUES.steps.name),
      visibilityTimeout: Duration.seconds(STEP_QUEUE_VISIBILITY_S),
      // Senders set explicit dedupe ids that name the sender (design: "SQS dedupe ids").
      contentBasedDeduplication: false,
      // High-throughput FIFO: limits apply per run (message group), not per queue. Safe because
      // every dedupe id starts with the run id, which is also the message group id.
      deduplicationScope: sqs.DeduplicationScope.MESSAGE_GROUP,
      fifoThroughputLimit: sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
    });
  }

  get queueUrl(): string {
    return this.queue.queueUrl;
  }

  /**
   * Adds exactly the statements `access` needs (consuming is granted by the event source) and
   * returns the actions the grantee needs on the queue's KMS key.
   */
  grant(grantee: iam.IGrantable, access: QueueAccess): string[] {
    const actions = [...(access.send ? ['sqs:SendMessage'] : []), ...(access.changeVisibility ? ['sqs:ChangeMessageVisibility'] : [])];
    if (actions.length === 0) return [];
    grantee.grantPrincipal.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources: [this.queue.queueArn] }));
    // SSE-KMS producers make a data key and may decrypt a cached one.
    return access.send ? ['kms:Decrypt', 'kms:GenerateDataKey'] : [];
  }
}
