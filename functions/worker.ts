import { createWorkerHandler } from 'logbook/lambda';
import agents from '../examples/support-agent/agents.js';

/** SQS FIFO event source of the step queue. `warm` lets a local host build the runtime before the first event. */
export const handler = createWorkerHandler({ agents });
export const warm = handler.warm;
