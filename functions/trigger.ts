import { runtimeOnce } from '../lib/runtime/cold-start.js';
import { createTriggerHandler } from '../lib/runtime/trigger-handler.js';

/** EventBridge rule target for `Agent Run Requested`. */
export const handler = createTriggerHandler(runtimeOnce('logbook-trigger'));
