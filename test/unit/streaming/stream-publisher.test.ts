// The publisher's batching and its failure rules, on a manual clock: how many writes a stream of
// N characters over T ms costs, that the text arrives whole and in order, that a write never
// overlaps another, and that a failed write, a stale lease or a chunk held by another worker
// ends publishing without ever throwing into the model call.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../lib/adapters/memory/manual-clock.js';
import { MemoryRunStream } from '../../../lib/adapters/memory/memory-run-stream.js';
import { StreamChunkConflictError, TransientStoreError } from '../../../lib/core/errors.js';
import { STREAM_FLUSH_CHARS, STREAM_FLUSH_MS, STREAM_MAX_CHUNK_CHARS, STREAM_RETENTION_MS } from '../../../lib/core/limits.js';
import { StreamPublisher } from '../../../lib/engine/stream-publisher.js';
import type { RunStream, StreamChunk } from '../../../lib/ports/run-stream.js';

const run = { tenant: 't', runId: 'r' };
const writer = { epoch: 3, nonce: 'n-1' };

function setup(stream: RunStream = new MemoryRunStream(), stale = () => false) {
  const clock = new ManualClock();
  const warnings: string[] = [];
  const counts: string[] = [];
  const publisher = new StreamPublisher({
    stream,
    clock,
    run,
    callSeq: 12,
    writer,
    stale,
    logger: { info() {}, warn: (m) => warnings.push(m), error() {} },
    metrics: { count: (name) => counts.push(name), duration() {}, cost() {} },
  });
  return { clock, publisher, warnings, counts };
}

/** Feed `n` deltas of `size` characters, one every `everyMs`, then finish. */
async function feed(t: ReturnType<typeof setup>, n: number, size: number, everyMs: number): Promise<string> {
  let text = '';
  for (let i = 0; i < n; i++) {
    const delta = String.fromCharCode(97 + (i % 26)).repeat(size);
    text += delta;
    t.publisher.onText(delta);
    await t.clock.advance(everyMs);
  }
  await t.publisher.finish();
  return text;
}

describe('StreamPublisher', () => {
  it('a steady stream costs at most one write per STREAM_FLUSH_MS (plus the first and the last), and the chunks are the text', async () => {
    const stream = new MemoryRunStream();
    const t = setup(stream);
    // 400 deltas of 4 characters, one every 10 ms: 1,600 characters over 4 s, under the size trigger.
    const text = await feed(t, 400, 4, 10);
    const chunks = await stream.read(run, {});
    const seconds = 4;
    expect(chunks.map((c) => c.text).join('')).toBe(text);
    expect(chunks.map((c) => c.index)).toEqual(chunks.map((_, i) => i));
    // The first delta is written at once, then one write per 250 ms, then the rest at the end.
    expect(chunks.length).toBeLessThanOrEqual((seconds * 1000) / STREAM_FLUSH_MS + 2);
    expect(chunks.length).toBeGreaterThanOrEqual((seconds * 1000) / STREAM_FLUSH_MS);
    expect(chunks.length / seconds).toBeLessThanOrEqual(5);
    for (let i = 1; i < chunks.length - 1; i++) expect(chunks[i]!.at - chunks[i - 1]!.at).toBeGreaterThanOrEqual(STREAM_FLUSH_MS);
    expect(t.publisher.writes).toBe(chunks.length);
    expect(t.counts.filter((c) => c === 'StreamChunks')).toHaveLength(chunks.length);
  });

  it('writes sooner when STREAM_FLUSH_CHARS are waiting, and caps a chunk at STREAM_MAX_CHUNK_CHARS', async () => {
    const stream = new MemoryRunStream();
    const t = setup(stream);
    const text = await feed(t, 30, 1_000, 10); // 30,000 characters in 300 ms
    const chunks = await stream.read(run, {});
    expect(chunks.map((c) => c.text).join('')).toBe(text);
    for (let i = 1; i < chunks.length - 1; i++) {
      const early = chunks[i]!.at - chunks[i - 1]!.at < STREAM_FLUSH_MS;
      if (early) expect(chunks[i]!.text.length).toBeGreaterThanOrEqual(STREAM_FLUSH_CHARS);
    }
    expect(chunks.some((c) => c.at - chunks[0]!.at < STREAM_FLUSH_MS && c.index > 0)).toBe(true);
    // One big delta is split, never written as one oversized item (and never through a surrogate pair).
    const big = new MemoryRunStream();
    const b = setup(big);
    const huge = 'x'.repeat(STREAM_MAX_CHUNK_CHARS - 1) + '🌍' + 'y'.repeat(10);
    b.publisher.onText(huge);
    await b.publisher.finish();
    const parts = await big.read(run, {});
    expect(parts.map((c) => c.text).join('')).toBe(huge);
    expect(Math.max(...parts.map((c) => c.text.length))).toBeLessThanOrEqual(STREAM_MAX_CHUNK_CHARS);
    expect(parts[0]!.text.endsWith('x')).toBe(true);
  });

  it('chunks carry the call, the writer and an expiry STREAM_RETENTION_MS ahead', async () => {
    const seen: { chunk: StreamChunk; expiresAt: number }[] = [];
    const stream: RunStream = { publish: async (_r, chunk, o) => void seen.push({ chunk, expiresAt: o.expiresAt }), read: async () => [] };
    const t = setup(stream);
    t.publisher.onText('Hello');
    await t.publisher.finish();
    expect(seen).toEqual([{ chunk: { callSeq: 12, index: 0, text: 'Hello', at: t.clock.now(), writer }, expiresAt: t.clock.now() + STREAM_RETENTION_MS }]);
  });

  it('never has two writes in flight: deltas wait for the write before them', async () => {
    let inFlight = 0;
    let most = 0;
    const gates: (() => void)[] = [];
    const stream: RunStream = {
      publish: () => {
        inFlight++;
        most = Math.max(most, inFlight);
        return new Promise<void>((r) => gates.push(() => (inFlight--, r())));
      },
      read: async () => [],
    };
    const t = setup(stream);
    t.publisher.onText('a');
    for (let i = 0; i < 20; i++) {
      t.publisher.onText('b'.repeat(STREAM_FLUSH_CHARS)); // the size trigger, while the first write hangs
      await t.clock.advance(STREAM_FLUSH_MS);
    }
    expect(gates).toHaveLength(1);
    gates.shift()!();
    await t.clock.advance(1);
    expect(gates).toHaveLength(1);
    expect(most).toBe(1);
    const finished = t.publisher.finish();
    while (gates.length > 0) {
      gates.shift()!();
      await t.clock.advance(1);
    }
    await finished;
    expect(most).toBe(1);
  });

  it('a failed write stops publishing for the call: logged and counted, nothing thrown, nothing written after it', async () => {
    let calls = 0;
    const stream: RunStream = {
      publish: async () => {
        calls++;
        throw new TransientStoreError('publishChunk: throttled');
      },
      read: async () => [],
    };
    const t = setup(stream);
    await feed(t, 50, 3, 50);
    expect(calls).toBe(1);
    expect(t.warnings).toEqual(['stream write failed; streaming stopped for this call']);
    expect(t.counts).toEqual(['StreamWriteFailures']);
  });

  it('a chunk another worker holds stops publishing (StreamChunkConflictError)', async () => {
    const stream = new MemoryRunStream();
    await stream.publish(run, { callSeq: 12, index: 0, text: 'theirs', at: 0, writer: { epoch: 9, nonce: 'other' } }, { expiresAt: 1 });
    const t = setup(stream);
    await feed(t, 20, 3, 100);
    expect(await stream.read(run, {})).toHaveLength(1);
    expect(t.warnings).toEqual(['stream chunk held by another worker; streaming stopped']);
    expect(new StreamChunkConflictError({ tenant: 't', runId: 'r' }, 12, 0).code).toBe('stream_chunk_conflict');
  });

  it('a stale lease writes nothing, and stop() drops what is buffered', async () => {
    const stream = new MemoryRunStream();
    let stale = false;
    const t = setup(stream, () => stale);
    t.publisher.onText('first');
    await t.clock.advance(1);
    t.publisher.onText('second');
    stale = true;
    await t.clock.advance(STREAM_FLUSH_MS);
    t.publisher.onText('third');
    await t.publisher.finish();
    expect((await stream.read(run, {})).map((c) => c.text)).toEqual(['first']);
    const other = new MemoryRunStream();
    const s = setup(other);
    s.publisher.onText('one');
    s.publisher.onText('two');
    s.publisher.stop();
    await s.clock.advance(STREAM_FLUSH_MS * 2);
    await s.publisher.finish();
    expect((await other.read(run, {})).map((c) => c.text)).toEqual(['one']);
  });

  it('the final flush is bounded: a hung write cannot hold the response past STREAM_FINAL_FLUSH_MS', async () => {
    const stream: RunStream = { publish: () => new Promise<void>(() => undefined), read: async () => [] };
    const t = setup(stream);
    t.publisher.onText('stuck');
    let done = false;
    const finished = t.publisher.finish().then(() => (done = true));
    await t.clock.advance(1_000);
    expect(done).toBe(false);
    await t.clock.advance(1_000);
    await finished;
    expect(done).toBe(true);
  });
});
