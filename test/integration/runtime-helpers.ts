import type { SQSRecord } from 'aws-lambda';

/** Poll until `check` returns a value; the deadline only bounds a broken run, nothing is timed. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** An SQS record as Lambda's event source mapping hands it to the worker. */
export function sqsRecord(body: string, id = 'm-1', receiptHandle = `rh-${id}`): SQSRecord {
  return {
    messageId: id,
    receiptHandle,
    body,
    attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'x', ApproximateFirstReceiveTimestamp: '0' },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:q.fifo',
    awsRegion: 'us-east-1',
  };
}
