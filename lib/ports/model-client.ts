import type { ModelRequest, ModelResponse } from '../core/messages.js';

export interface ModelClient {
  /**
   * Throws ModelError: retryable ones were already retried within the adapter's bounded time.
   * `request.messages` is read-only: its messages are frozen and reused for later requests of
   * the run (map them to the provider's format; writing into one throws a TypeError).
   */
  complete(request: ModelRequest, options: { signal: AbortSignal }): Promise<ModelResponse>;
}

/** Finds the client for a pinned model id; undefined when that model is gone (the run parks). */
export interface ModelResolver {
  resolve(modelId: string): ModelClient | undefined;
}
