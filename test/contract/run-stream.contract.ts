import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../lib/adapters/memory/manual-clock.js';
import { StreamChunkConflictError } from '../../lib/core/errors.js';
import type { RunRef } from '../../lib/core/run-ref.js';
import type { RunStream, StreamChunk } from '../../lib/ports/run-stream.js';
import { newRun } from './fixtures.js';

export interface RunStreamTarget {
  name: string;
  available: boolean;
  setup(): Promise<{
    stream: RunStream;
    /** A second client on the same data (another container). */
    peer: RunStream;
    clock: ManualClock;
    /** The TTL attribute as stored (epoch seconds), where the target has one. */
    storedTtl?(run: RunRef, callSeq: number, index: number): Promise<number | undefined>;
    dispose(): Promise<void>;
  }>;
}

const W1 = { epoch: 1, nonce: 'w1' };
const W2 = { epoch: 2, nonce: 'w2' };

function chunk(callSeq: number, index: number, text: string, writer = W1): StreamChunk {
  return { callSeq, index, text, at: 1_000 + index, writer };
}

/** RunStream: chunks written once per (run, callSeq, index), read back in order after a cursor, expiring. */
export function runStreamContract(target: RunStreamTarget): void {
  describe.runIf(target.available)(`RunStream contract: ${target.name}`, () => {
    let sut: Awaited<ReturnType<RunStreamTarget['setup']>>;
    let expiresAt: number;
    beforeAll(async () => {
      sut = await target.setup();
      expiresAt = sut.clock.now() + 3_600_000;
    });
    afterAll(async () => {
      await sut?.dispose();
    });

    it('reads chunks in (callSeq, index) order whatever the publish order, after a cursor, up to a limit', async () => {
      const run = newRun();
      for (const c of [chunk(12, 1, 'lo'), chunk(5, 0, 'old'), chunk(12, 0, 'Hel'), chunk(12, 2, ' 🌍 "x" <b>'), chunk(30, 0, 'next')]) {
        await sut.stream.publish(run, c, { expiresAt });
      }
      const all = await sut.peer.read(run, {});
      expect(all.map((c) => [c.callSeq, c.index, c.text])).toEqual([
        [5, 0, 'old'],
        [12, 0, 'Hel'],
        [12, 1, 'lo'],
        [12, 2, ' 🌍 "x" <b>'],
        [30, 0, 'next'],
      ]);
      expect(all[1]).toEqual(chunk(12, 0, 'Hel'));
      const after = await sut.peer.read(run, { after: { callSeq: 12, index: 0 } });
      expect(after.map((c) => `${c.callSeq}.${c.index}`)).toEqual(['12.1', '12.2', '30.0']);
      const fromCall = await sut.peer.read(run, { after: { callSeq: 12, index: -1 }, limit: 2 });
      expect(fromCall.map((c) => `${c.callSeq}.${c.index}`)).toEqual(['12.0', '12.1']);
      expect(await sut.peer.read(run, { after: { callSeq: 30, index: 0 } })).toEqual([]);
      expect(await sut.peer.read(newRun(), {})).toEqual([]);
    });

    it("a chunk is written once: the same writer's retry is a no-op, another writer is refused and the text stays", async () => {
      const run = newRun();
      await sut.stream.publish(run, chunk(7, 0, 'first'), { expiresAt });
      await sut.peer.publish(run, chunk(7, 0, 'first'), { expiresAt });
      await expect(sut.peer.publish(run, chunk(7, 0, 'stale', W2), { expiresAt })).rejects.toBeInstanceOf(StreamChunkConflictError);
      // Another epoch with the same nonce is another writer too.
      await expect(sut.peer.publish(run, chunk(7, 0, 'x', { epoch: 9, nonce: 'w1' }), { expiresAt })).rejects.toBeInstanceOf(StreamChunkConflictError);
      expect((await sut.stream.read(run, {})).map((c) => [c.text, c.writer])).toEqual([['first', W1]]);
    });

    it('two writers racing for one chunk: exactly one lands', async () => {
      const run = newRun();
      const results = await Promise.allSettled([
        sut.stream.publish(run, chunk(3, 0, 'a', W1), { expiresAt }),
        sut.peer.publish(run, chunk(3, 0, 'b', W2), { expiresAt }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const stored = await sut.stream.read(run, {});
      expect(stored).toHaveLength(1);
      const winner = results[0]!.status === 'fulfilled' ? 'a' : 'b';
      expect(stored[0]!.text).toBe(winner);
    });

    it('keeps tenants apart', async () => {
      const run = newRun();
      await sut.stream.publish(run, chunk(2, 0, 'mine'), { expiresAt });
      expect(await sut.stream.read({ tenant: `${run.tenant}-other`, runId: run.runId }, {})).toEqual([]);
    });

    it('an expired chunk is not read, and the TTL attribute is the expiry in epoch seconds', async () => {
      const run = newRun();
      const soon = sut.clock.now() + 10_000;
      await sut.stream.publish(run, chunk(4, 0, 'short'), { expiresAt: soon });
      await sut.stream.publish(run, chunk(4, 1, 'long'), { expiresAt });
      if (sut.storedTtl) expect(await sut.storedTtl(run, 4, 0)).toBe(Math.ceil(soon / 1000));
      expect((await sut.stream.read(run, {})).map((c) => c.text)).toEqual(['short', 'long']);
      await sut.clock.advance(10_001);
      expect((await sut.stream.read(run, {})).map((c) => c.text)).toEqual(['long']);
    });
  });
}
