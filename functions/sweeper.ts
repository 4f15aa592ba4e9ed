import { runtimeOnce } from '../lib/runtime/cold-start.js';
import { createSweeperHandler } from '../lib/runtime/sweeper-handler.js';

/** Scheduled every minute. */
export const handler = createSweeperHandler(runtimeOnce('logbook-sweeper'));
