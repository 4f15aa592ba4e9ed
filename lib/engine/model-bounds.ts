import { ModelError } from '../core/errors.js';
import type { BoundedCallOptions } from './bounded-call.js';
import type { RunSession } from './run-session.js';

/**
 * The bounds of a model call, a turn's or the context policy's summary: the engine's model
 * timeout (a retryable model_timeout) and the worker's lease. A model that ignores its abort is
 * not waited for: it has no effect outside the call, and its late answer is never recorded.
 */
export function modelCallBounds(session: RunSession): BoundedCallOptions {
  const { clock, config } = session.deps;
  return {
    clock,
    timeoutMs: config.modelTimeoutMs,
    lease: session.lease.signal,
    reason: (why) => (why === 'timeout' ? new ModelError('model_timeout', `no response within ${config.modelTimeoutMs} ms`, true) : new Error('lease lost')),
  };
}
