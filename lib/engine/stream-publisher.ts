import { errorCode, StreamChunkConflictError } from '../core/errors.js';
import type { Clock } from '../ports/clock.js';
import type { RunRef } from '../core/run-ref.js';
import type { RunStream } from '../ports/run-stream.js';
import type { EngineLogger, EngineMetrics } from './engine.js';
import { STREAM_FINAL_FLUSH_MS, STREAM_FLUSH_CHARS, STREAM_FLUSH_MS, STREAM_MAX_CHUNK_CHARS, STREAM_RETENTION_MS } from '../core/limits.js';
import type { RunSession } from './run-session.js';

export interface StreamPublisherOptions {
  stream: RunStream;
  clock: Clock;
  run: RunRef;
  /** The seq of the event holding the call's reservation. */
  callSeq: number;
  writer: { epoch: number; nonce: string };
  /** True once this worker may no longer write for the run (its lease is lost). */
  stale: () => boolean;
  logger?: EngineLogger;
  metrics?: EngineMetrics;
}

/**
 * Publishes one model call's text as it streams, as a preview beside the log (the log's
 * model_response stays the truth). Deltas are batched (limits.ts: at most one write per
 * STREAM_FLUSH_MS, sooner once STREAM_FLUSH_CHARS wait) and written in order, one at a time, off
 * the model call's path: `onText` only buffers and never waits or throws. A failed write, a lost
 * lease or a chunk another worker holds ends publishing for the call; the model call goes on.
 */
export class StreamPublisher {
  /** Chunks written (successful publishes). */
  writes = 0;
  private buffer = '';
  private index = 0;
  private lastWriteAt = Number.NEGATIVE_INFINITY;
  private inFlight: Promise<void> | undefined;
  private timer: AbortController | undefined;
  private stopped = false;

  constructor(private readonly options: StreamPublisherOptions) {}

  /** Give this to the model client as ModelCallOptions.onText. */
  readonly onText = (delta: string): void => {
    if (this.stopped || typeof delta !== 'string' || delta.length === 0) return;
    this.buffer += delta;
    this.pump();
  };

  /** Stop publishing now: nothing buffered is written, a write in flight is left to finish. */
  stop(): void {
    this.stopped = true;
    this.buffer = '';
    this.timer?.abort();
    this.timer = undefined;
  }

  /**
   * The call returned: wait for the write in flight and write what is still buffered (so a reader
   * at the tail has the whole text before the response lands), then stop. Bounded by
   * STREAM_FINAL_FLUSH_MS: the append of the response is never held up longer by a preview.
   * Call it before appending the call's model_response, so no chunk is written after it.
   */
  async finish(): Promise<void> {
    this.timer?.abort();
    this.timer = undefined;
    const flush = async () => {
      while (this.inFlight || (!this.stopped && this.buffer.length > 0)) {
        if (this.inFlight) await this.inFlight;
        else this.write();
      }
    };
    const bound = new AbortController();
    await Promise.race([flush(), this.options.clock.sleep(STREAM_FINAL_FLUSH_MS, bound.signal).catch(() => undefined)]);
    bound.abort();
    this.stop();
  }

  private pump(): void {
    if (this.stopped || this.inFlight || this.buffer.length === 0) return;
    const wait = this.lastWriteAt + STREAM_FLUSH_MS - this.options.clock.now();
    if (wait <= 0 || this.buffer.length >= STREAM_FLUSH_CHARS) {
      this.write();
      return;
    }
    if (this.timer) return;
    const timer = new AbortController();
    this.timer = timer;
    this.options.clock.sleep(wait, timer.signal).then(
      () => {
        if (this.timer === timer) this.timer = undefined;
        this.pump();
      },
      () => undefined,
    );
  }

  private write(): void {
    const { stream, clock, run, callSeq, writer } = this.options;
    if (this.options.stale()) {
      this.stop();
      return;
    }
    this.timer?.abort();
    this.timer = undefined;
    const text = take(this.buffer, STREAM_MAX_CHUNK_CHARS);
    this.buffer = this.buffer.slice(text.length);
    const now = clock.now();
    this.lastWriteAt = now;
    const index = this.index++;
    this.inFlight = stream
      .publish(run, { callSeq, index, text, at: now, writer }, { expiresAt: now + STREAM_RETENTION_MS })
      .then(
        () => {
          this.writes++;
          this.options.metrics?.count('StreamChunks');
        },
        (error: unknown) => {
          // A preview only: the call goes on, its stream ends here (a gap would be worse than a stop).
          this.stop();
          this.options.metrics?.count('StreamWriteFailures');
          const fields = { runId: run.runId, callSeq, index, code: errorCode(error) };
          if (error instanceof StreamChunkConflictError) this.options.logger?.warn('stream chunk held by another worker; streaming stopped', fields);
          else this.options.logger?.warn('stream write failed; streaming stopped for this call', fields);
        },
      )
      .finally(() => {
        this.inFlight = undefined;
        this.pump();
      });
  }
}

/** The first `max` UTF-16 units of `text`, never splitting a surrogate pair. */
function take(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/**
 * The publisher for the model call a session is about to make under the reservation at the
 * session's open model call, or undefined when the engine has no stream port or the call is a
 * context summary (its text is not the conversation's).
 */
export function streamPublisherFor(session: RunSession): StreamPublisher | undefined {
  const { stream, clock, logger, metrics } = session.deps;
  const open = session.state.openModel;
  if (!stream || !open || open.summary) return undefined;
  return new StreamPublisher({
    stream,
    clock,
    run: session.run,
    callSeq: open.seq,
    writer: session.writer,
    stale: () => session.lease.lost || session.fenced,
    ...(logger ? { logger } : {}),
    ...(metrics ? { metrics } : {}),
  });
}
