import { MODEL_ERROR, TransientModelFailure, abortReason, modelError } from './model-errors.js';

/**
 * Where a streaming adapter sends answer text: the caller's `onText`, guarded. A preview must
 * never fail the call, so a throw (or an async onText's rejection) is swallowed. It remembers
 * whether any text went out, because text already shown cannot be taken back by a retry.
 */
export class TextSink {
  private sent = false;
  constructor(private readonly onText: ((delta: string) => void) | undefined) {}

  /** True once a non-empty delta was passed on. */
  get emitted(): boolean {
    return this.sent;
  }

  emit(delta: string): void {
    if (this.onText === undefined || delta === '') return;
    this.sent = true;
    try {
      const result: unknown = this.onText(delta);
      // `(d) => void` admits an async function: its rejection must not become an unhandled one.
      if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function') {
        (result as Promise<unknown>).then(undefined, () => undefined);
      }
    } catch {
      // Ignored on purpose: see the class comment.
    }
  }
}

/**
 * A failure inside a streaming attempt, as the retry loop should see it. Once text went to
 * onText, retrying inside the adapter would send the answer again from its start to a reader that
 * already shows part of it: the failure becomes a retryable ModelError instead, so the engine
 * logs it and the next attempt is a new model call (whose chunks readers tell apart by attempt).
 */
export function streamFailure(error: unknown, sink: TextSink, provider: string): unknown {
  if (!sink.emitted || !(error instanceof TransientModelFailure)) return error;
  const code = error.kind === 'rate_limited' ? MODEL_ERROR.rateLimited : MODEL_ERROR.unavailable;
  return modelError(code, `${provider}: ${error.message} (after part of the answer was streamed: not retried within the call)`, error);
}

/** The stream stopped before the provider said the answer was complete: worth another attempt. */
export function brokenStream(provider: string, what: string, cause?: unknown): TransientModelFailure {
  const detail = cause === undefined ? '' : `: ${cause instanceof Error ? cause.message : String(cause)}`;
  return new TransientModelFailure('unavailable', `${provider}: the stream broke ${what}${detail}`, undefined, cause === undefined ? undefined : { cause });
}

/**
 * Iterates `source` until it ends or `signal` aborts. An abort rejects at once with the signal's
 * reason, even while the source is waiting for a server that sends nothing, and tells the source
 * to stop (its `return`, which closes an SDK stream or cancels a ReadableStream's reader).
 */
export async function* untilAborted<T>(source: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(abortReason(signal));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  // The race below may never read it (the source ended first): keep it from being "unhandled".
  aborted.catch(() => undefined);
  let finished = false;
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), aborted]);
      if (next.done) {
        finished = true;
        return;
      }
      yield next.value;
    }
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
    // Early exit (abort, an error in the consumer): let the source release its connection. Not
    // awaited: a source stuck in a read may only settle when its own signal fires.
    if (!finished) void Promise.resolve(iterator.return?.()).catch(() => undefined);
  }
}

/** A ReadableStream (web or an AI SDK provider's) as an async iterable, whatever the runtime's support. */
export function streamIterable<T>(stream: ReadableStream<T>): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator]() {
      const reader = stream.getReader();
      return {
        next: () => reader.read() as Promise<IteratorResult<T>>,
        return: async () => {
          await reader.cancel().catch(() => undefined);
          return { done: true, value: undefined };
        },
      };
    },
  };
}
