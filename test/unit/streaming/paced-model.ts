import type { ModelRequest, ModelResponse } from '../../../lib/core/messages.js';
import type { Clock } from '../../../lib/ports/clock.js';
import type { ModelCallOptions, ModelClient } from '../../../lib/ports/model-client.js';

/**
 * A model that streams another model's answer: its text in pieces of `size` characters, one every
 * `paceMs` of the (manual) clock, through onText; then resolves to the same response. `pieces`
 * counts the pieces handed out, so a test can act in the middle of a stream.
 */
export class PacedModel implements ModelClient {
  pieces = 0;
  constructor(
    private readonly inner: ModelClient,
    private readonly clock: Clock,
    private readonly options: { size: number; paceMs: number },
  ) {}

  async complete(request: ModelRequest, options: ModelCallOptions): Promise<ModelResponse> {
    const response = await this.inner.complete(request, { signal: options.signal });
    for (let i = 0; i < response.text.length; i += this.options.size) {
      this.pieces++;
      options.onText?.(response.text.slice(i, i + this.options.size));
      await this.clock.sleep(this.options.paceMs, options.signal);
    }
    return response;
  }
}

/** Advance a manual clock in small steps until the promise settles (a step that sleeps on it). */
export async function advanceUntil<T>(clock: { advance(ms: number): Promise<void> }, promise: Promise<T>, stepMs = 10, max = 100_000): Promise<T> {
  let settled = false;
  const watched = promise.finally(() => {
    settled = true;
  });
  for (let i = 0; i < max && !settled; i++) await clock.advance(stepMs);
  return watched;
}
