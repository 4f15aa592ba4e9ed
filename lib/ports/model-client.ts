import type { ModelRequest, ModelResponse } from '../core/messages.js';

export interface ModelClient {
  /**
   * Throws ModelError: retryable ones were already retried within the adapter's bounded time.
   * `request.messages` is read-only: its messages are frozen and reused for later requests of
   * the run (map them to the provider's format; writing into one throws a TypeError).
   */
  complete(request: ModelRequest, options: ModelCallOptions): Promise<ModelResponse>;
}

export interface ModelCallOptions {
  signal: AbortSignal;
  /**
   * When set, the adapter streams (Bedrock ConverseStream, OpenAI-compatible `stream: true`, the
   * scripted model's chunks) and calls it with each piece of answer text as it arrives, in order.
   * The resolved ModelResponse is the same as without it: the log records that, not the deltas.
   * A throwing onText is ignored by the adapter (a preview must never fail the call).
   */
  onText?: (delta: string) => void;
}

/** Finds the client for a pinned model id; undefined when that model is gone (the run parks). */
export interface ModelResolver {
  resolve(modelId: string): ModelClient | undefined;
}
