import { createHash } from 'node:crypto';
import { ChangeMessageVisibilityCommand, DeleteMessageCommand, ReceiveMessageCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { ValidationError } from '../../core/errors.js';
import type { StepQueue, Tick, TickVisibility } from '../../ports/step-queue.js';
import { DEFAULT_RETRY, errorName, withRetry, type RetryOptions } from './aws-errors.js';
import { HINT_ATTRIBUTE, parseTick, parseTickHint } from './tick.js';

export { HINT_ATTRIBUTE, parseTick, parseTickHint, tickSchema } from './tick.js';

export interface SqsQueueOptions {
  sqs: SQSClient;
  queueUrl: string;
  retry?: Partial<RetryOptions>;
}

/** SQS FIFO dedupe ids: 1..128 characters, alphanumeric and punctuation. */
const DEDUPE_ID = /^[A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]{1,128}$/;

/**
 * Wake-up ticks on an SQS FIFO queue: MessageGroupId = runId (one tick of a run in flight at a
 * time), MessageDeduplicationId from the caller, which names its sender (worker runId:seq:epoch,
 * API runId:inbox:<id>, sweeper runId:sweep:<epoch>:<lastSeq>:<n>). The body is {tenant, runId} only; a
 * LoadHint rides in the `logbookHint` message attribute, which a worker that does not know it
 * never reads (the body's schema is strict, so a new field there would make it drop the tick).
 *
 * Run ids are scoped by tenant but the queue is shared: two tenants may both have a run "order-1"
 * at seq 5, epoch 2, and FIFO would swallow the second wake-up as a duplicate. So the id sent is
 * the caller's id behind a short hash of the tenant (and wholly hashed if that is too long).
 */
export function sqsDeduplicationId(tenant: string, dedupeId: string): string {
  const scoped = `${createHash('sha256').update(tenant).digest('hex').slice(0, 16)}:${dedupeId}`;
  return scoped.length <= 128 ? scoped : createHash('sha256').update(`${tenant}\n${dedupeId}`).digest('hex');
}

export class SqsStepQueue implements StepQueue {
  readonly stats = { requests: 0, sent: 0 };
  private readonly retry: RetryOptions;

  constructor(private readonly options: SqsQueueOptions) {
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
  }

  async enqueue(tick: Tick, options: { dedupeId: string }): Promise<void> {
    const body = parseTick(JSON.stringify({ tenant: tick.tenant, runId: tick.runId }));
    if (!DEDUPE_ID.test(options.dedupeId)) throw new ValidationError(`invalid dedupe id: ${options.dedupeId}`);
    await withRetry('enqueue', this.retry, () => {
      this.stats.requests++;
      return this.options.sqs.send(
        new SendMessageCommand({
          QueueUrl: this.options.queueUrl,
          MessageBody: JSON.stringify(body),
          MessageGroupId: body.runId,
          MessageDeduplicationId: sqsDeduplicationId(body.tenant, options.dedupeId),
          ...(tick.hint ? { MessageAttributes: { [HINT_ATTRIBUTE]: { DataType: 'String', StringValue: JSON.stringify(tick.hint) } } } : {}),
        }),
      );
    });
    this.stats.sent++;
  }
}

/** Visibility of the tick being processed: shortened at claim, extended with the lease heartbeat. */
export class SqsTickVisibility implements TickVisibility {
  private readonly retry: RetryOptions;

  constructor(private readonly options: SqsQueueOptions) {
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
  }

  async setVisibility(receiptHandle: string, seconds: number): Promise<void> {
    const timeout = Math.max(0, Math.min(43_200, Math.ceil(seconds)));
    try {
      await withRetry('setVisibility', this.retry, () =>
        this.options.sqs.send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: this.options.queueUrl,
            ReceiptHandle: receiptHandle,
            VisibilityTimeout: timeout,
          }),
        ),
      );
    } catch (error) {
      const name = errorName(error);
      if (name === 'ReceiptHandleIsInvalid' || name === 'MessageNotInflight' || name === 'InvalidParameterValue') {
        throw new ValidationError(`cannot change visibility of this tick (${name}): it is no longer in flight`);
      }
      throw error;
    }
  }
}

export interface ReceivedTick {
  messageId: string;
  receiptHandle: string;
  body: string;
  /** Set when the body is a valid tick; otherwise `error` says why not. */
  tick?: Tick;
  error?: ValidationError;
  receiveCount: number;
  dedupeId?: string;
  groupId?: string;
}

/** The consuming side, for the local event-source runner and tests (Lambda's SQS trigger on AWS). */
export class SqsTickReceiver {
  private readonly retry: RetryOptions;

  constructor(private readonly options: SqsQueueOptions) {
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
  }

  async receive(options: { max?: number; waitSeconds?: number; visibilitySeconds?: number } = {}): Promise<ReceivedTick[]> {
    const out = await withRetry('receive', this.retry, () =>
      this.options.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: this.options.queueUrl,
          MaxNumberOfMessages: options.max ?? 1,
          WaitTimeSeconds: options.waitSeconds ?? 0,
          ...(options.visibilitySeconds === undefined ? {} : { VisibilityTimeout: options.visibilitySeconds }),
          MessageSystemAttributeNames: ['ApproximateReceiveCount', 'MessageDeduplicationId', 'MessageGroupId'],
          MessageAttributeNames: [HINT_ATTRIBUTE],
        }),
      ),
    );
    return (out.Messages ?? []).map((m) => {
      const body = m.Body ?? '';
      const received: ReceivedTick = {
        messageId: m.MessageId ?? '',
        receiptHandle: m.ReceiptHandle ?? '',
        body,
        receiveCount: Number(m.Attributes?.ApproximateReceiveCount ?? '1'),
      };
      const dedupe = m.Attributes?.MessageDeduplicationId;
      // The caller's id, without the tenant hash the queue adds (see sqsDeduplicationId).
      if (dedupe) received.dedupeId = /^[0-9a-f]{16}:/.test(dedupe) ? dedupe.slice(17) : dedupe;
      if (m.Attributes?.MessageGroupId) received.groupId = m.Attributes.MessageGroupId;
      try {
        const hint = parseTickHint(m.MessageAttributes?.[HINT_ATTRIBUTE]?.StringValue);
        received.tick = { ...parseTick(body), ...(hint ? { hint } : {}) };
      } catch (error) {
        received.error = error as ValidationError;
      }
      return received;
    });
  }

  async delete(receiptHandle: string): Promise<void> {
    await withRetry('deleteTick', this.retry, () =>
      this.options.sqs.send(new DeleteMessageCommand({ QueueUrl: this.options.queueUrl, ReceiptHandle: receiptHandle })),
    );
  }
}
