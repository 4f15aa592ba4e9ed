import { runtimeOnce } from '../lib/runtime/cold-start.js';
import { createWorkerHandler } from '../lib/runtime/worker-handler.js';

const getRuntime = runtimeOnce('logbook-worker', { callsModels: true });

/**
 * Build clients, models and agents ahead of the first event (a host's init phase), so a new
 * sandbox reaches its first SQS call (shortening the tick's visibility) as fast as possible. A
 * failure here is retried by the first invocation. Not run on import: importing stays free of I/O.
 */
export const warm = (): Promise<void> =>
  getRuntime().then(
    () => undefined,
    () => undefined,
  );

/** SQS FIFO event source: batch size 1, ReportBatchItemFailures. */
export const handler = createWorkerHandler(getRuntime);
