import { StreamChunkConflictError } from '../../core/errors.js';
import { runKey, type RunRef } from '../../ports/run-ref.js';
import { compareStreamCursors, type RunStream, type StreamChunk, type StreamCursor } from '../../ports/run-stream.js';

/** Streamed chunks in memory, with the DynamoDB adapter's semantics (the contract suite checks both). */
export class MemoryRunStream implements RunStream {
  private readonly runs = new Map<string, StreamChunk[]>();

  async publish(run: RunRef, chunk: StreamChunk): Promise<void> {
    const chunks = this.runs.get(runKey(run)) ?? [];
    const existing = chunks.find((c) => compareStreamCursors(c, chunk) === 0);
    if (existing) {
      if (existing.writer.nonce === chunk.writer.nonce && existing.writer.epoch === chunk.writer.epoch) return;
      throw new StreamChunkConflictError(`${run.tenant}/${run.runId}`, chunk.callSeq, chunk.index);
    }
    chunks.push(structuredClone(chunk));
    chunks.sort(compareStreamCursors);
    this.runs.set(runKey(run), chunks);
  }

  async read(run: RunRef, options: { after?: StreamCursor; limit?: number }): Promise<StreamChunk[]> {
    const after = options.after;
    const chunks = (this.runs.get(runKey(run)) ?? []).filter((c) => !after || compareStreamCursors(c, after) > 0);
    return structuredClone(options.limit !== undefined ? chunks.slice(0, options.limit) : chunks);
  }
}
