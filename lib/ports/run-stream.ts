import type { RunRef } from '../core/run-ref.js';

/**
 * Text a model call produced while it streamed, kept apart from the event log: the log's
 * model_response stays the truth, and a chunk is only a preview of it that expires.
 *
 * A chunk belongs to one attempt at one model call, named by `callSeq`: the seq of the event that
 * holds the call's reservation (its model_started, or the tool_result that carried it). A retried
 * call has a new reservation, so a new callSeq; a reader drops an attempt's partial text once the
 * log shows that reservation answered by model_failed or left unanswered by a later one.
 */
export interface StreamChunk {
  callSeq: number;
  /** 0, 1, 2 ... within the call; publish order. */
  index: number;
  text: string;
  /** Epoch ms the chunk was published. */
  at: number;
  /**
   * The worker that published it. A reader keeps a chunk only when it matches the `by` of the
   * event at callSeq (the worker that made the reservation): a stale worker's chunks are ignored.
   */
  writer: { epoch: number; nonce: string };
}

export interface StreamCursor {
  callSeq: number;
  index: number;
}

export interface RunStream {
  /**
   * Conditional on (run, callSeq, index) being absent: a second write of the same chunk is a no-op
   * when it is the same writer's retry, else refused with StreamChunkConflictError.
   * `expiresAt` (epoch ms) is when the adapter may drop it (DynamoDB TTL).
   */
  publish(run: RunRef, chunk: StreamChunk, options: { expiresAt: number }): Promise<void>;
  /** Chunks after `after` in (callSeq, index) order, strongly consistent; `limit` caps the page. */
  read(run: RunRef, options: { after?: StreamCursor; limit?: number }): Promise<StreamChunk[]>;
}

/** Orders two cursors: negative when a is before b. */
export function compareStreamCursors(a: StreamCursor, b: StreamCursor): number {
  return a.callSeq - b.callSeq || a.index - b.index;
}
