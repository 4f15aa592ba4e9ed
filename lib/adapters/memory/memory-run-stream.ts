import { StreamChunkConflictError } from '../../core/errors.js';
import { runName, type RunRef } from '../../core/run-ref.js';
import { compareStreamCursors, type RunStream, type StreamChunk, type StreamCursor } from '../../ports/run-stream.js';

interface Stored {
  chunk: StreamChunk;
  expiresAt: number;
}

/** Streamed chunks in memory, with the DynamoDB adapter's semantics (the contract suite checks both). */
export class MemoryRunStream implements RunStream {
  private readonly runs = new Map<string, Stored[]>();
  /** Chunks published, for tests that count writes. */
  writes = 0;

  /** `now`: the clock expiry is judged by (as the DynamoDB adapter's); without it nothing expires. */
  constructor(private readonly options: { now?: () => number } = {}) {}

  async publish(run: RunRef, chunk: StreamChunk, options: { expiresAt: number }): Promise<void> {
    const stored = this.runs.get(runName(run)) ?? [];
    const existing = stored.find((s) => compareStreamCursors(s.chunk, chunk) === 0);
    if (existing) {
      if (existing.chunk.writer.nonce === chunk.writer.nonce && existing.chunk.writer.epoch === chunk.writer.epoch) return;
      throw new StreamChunkConflictError(run, chunk.callSeq, chunk.index);
    }
    this.writes++;
    stored.push({ chunk: structuredClone(chunk), expiresAt: options.expiresAt });
    stored.sort((a, b) => compareStreamCursors(a.chunk, b.chunk));
    this.runs.set(runName(run), stored);
  }

  async read(run: RunRef, options: { after?: StreamCursor; limit?: number }): Promise<StreamChunk[]> {
    const after = options.after;
    const now = this.options.now?.();
    // TTL as DynamoDB's is read: expired once its second has passed.
    const live = (s: Stored) => now === undefined || Math.ceil(s.expiresAt / 1000) * 1000 > now;
    const chunks = (this.runs.get(runName(run)) ?? []).filter((s) => live(s) && (!after || compareStreamCursors(s.chunk, after) > 0)).map((s) => s.chunk);
    return structuredClone(options.limit !== undefined ? chunks.slice(0, options.limit) : chunks);
  }
}
