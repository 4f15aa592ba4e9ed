import { runtimeOnce } from '../lib/runtime/cold-start.js';
import { createWorkerHandler } from '../lib/runtime/worker-handler.js';

const getRuntime = runtimeOnce('logbook-worker', { callsModels: true });

/**
 * Lambda's INIT phase: build clients, models and agents before the first event, so a new sandbox
 * reaches its first SQS call (shortening the tick's visibility) as fast as possible. A failure
 * here is retried by the first invocation.
 */
export const ready: Promise<void> = getRuntime().then(
  () => undefined,
  () => undefined,
);

/** SQS FIFO event source: batch size 1, ReportBatchItemFailures. */
export const handler = createWorkerHandler(getRuntime);
