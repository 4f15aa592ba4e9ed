import { runtimeOnce } from '../lib/runtime/cold-start.js';
import { createWorkerHandler } from '../lib/runtime/worker-handler.js';

/** SQS FIFO event source: batch size 1, ReportBatchItemFailures. */
export const handler = createWorkerHandler(runtimeOnce('logbook-worker', { callsModels: true }));
