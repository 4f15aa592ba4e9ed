import { createApiHandler } from '../lib/runtime/api-handler.js';
import { runtimeOnce } from '../lib/runtime/cold-start.js';

/** API Gateway HTTP API (payload v2), IAM or JWT authorizer. */
export const handler = createApiHandler(runtimeOnce('logbook-api'));
