import { beforeAll, afterAll, describe, expect, it } from 'vitest';
import { AppendConflictError, CorruptLogError, ItemTooLargeError } from '../../lib/core/errors.js';
import { parseEvent, type RunEvent } from '../../lib/core/events.js';
import { DAY, newRun, runStarted, settle, sizedEvent, smallEvent, writer, type StoreTarget, type StoreUnderTest } from './fixtures.js';

/** The EventLog contract: the same assertions for the memory fake and every DynamoDB emulator. */
export function eventLogContract(target: StoreTarget): void {
  describe.runIf(target.available)(`EventLog contract: ${target.name}`, () => {
    let sut: StoreUnderTest;
    beforeAll(async () => {
      sut = await target.setup();
    });
    afterAll(async () => {
      await sut?.dispose();
    });

    async function appendAll(run: ReturnType<typeof newRun>, events: RunEvent[]): Promise<void> {
      for (const e of events) await sut.store.append(run, e);
    }

    it('reads back appended events in seq order, after a seq, and one by one', async () => {
      const run = newRun();
      const by = writer(1);
      await appendAll(run, [1, 2, 3, 4].map((s) => smallEvent(s, by)));
      const all = await sut.store.read(run, { afterSeq: 0 });
      expect(all.events.map((e) => parseEvent(e).seq)).toEqual([1, 2, 3, 4]);
      expect(all.nextAfterSeq).toBeUndefined();
      expect(all.events[1]).toEqual(smallEvent(2, by));
      const tail = await sut.store.read(run, { afterSeq: 2 });
      expect(tail.events.map((e) => parseEvent(e).seq)).toEqual([3, 4]);
      expect(await sut.store.readOne(run, 3)).toEqual(smallEvent(3, by));
      expect(await sut.store.readOne(run, 9)).toBeUndefined();
      expect((await sut.store.read(newRun(), { afterSeq: 0 })).events).toEqual([]);
    });

    it('keeps runs apart: the same run id under another tenant is another log', async () => {
      const run = newRun();
      const other = { tenant: `${run.tenant}-b`, runId: run.runId };
      await sut.store.append(run, smallEvent(1, writer(1)));
      expect(await sut.store.readOne(other, 1)).toBeUndefined();
      await sut.store.append(other, smallEvent(1, writer(1)));
    });

    it('lets exactly one of two racing writers take a seq; the loser cannot append after it', async () => {
      const run = newRun();
      await sut.store.append(run, smallEvent(1, writer(1)));
      const a = writer(2, 'nonce-a');
      const b = writer(3, 'nonce-b');
      const race = await settle([sut.store.append(run, smallEvent(2, a)), sut.peer().append(run, smallEvent(2, b))]);
      expect(race.ok).toHaveLength(1);
      expect(race.errors).toHaveLength(1);
      expect(race.errors[0]).toBeInstanceOf(AppendConflictError);
      const stored = parseEvent(await sut.store.readOne(run, 2));
      const [winner, loser] = stored.by.nonce === a.nonce ? [a, b] : [b, a];
      expect(stored.by).toEqual(winner);
      // The winner goes on; everything the loser tries afterwards is refused.
      await sut.store.append(run, smallEvent(3, winner));
      await expect(sut.store.append(run, smallEvent(2, loser))).rejects.toBeInstanceOf(AppendConflictError);
      await expect(sut.store.append(run, smallEvent(3, loser))).rejects.toBeInstanceOf(AppendConflictError);
      const log = await sut.store.read(run, { afterSeq: 0 });
      expect(log.events.map((e) => parseEvent(e).by.nonce)).toEqual([expect.any(String), winner.nonce, winner.nonce]);
    });

    it('lets only one of many racing writers take a seq', async () => {
      const run = newRun();
      const writers = Array.from({ length: 6 }, (_, i) => writer(i + 1));
      const race = await settle(writers.map((w, i) => (i % 2 ? sut.peer() : sut.store).append(run, smallEvent(1, w))));
      expect(race.ok).toHaveLength(1);
      expect(race.errors.every((e) => e instanceof AppendConflictError)).toBe(true);
    });

    it('recognises a retried append as its own write (same nonce and epoch), nothing else', async () => {
      const run = newRun();
      const by = writer(4);
      const event = smallEvent(1, by);
      await sut.store.append(run, event);
      await sut.store.append(run, event); // the retry of a request whose reply was lost
      await expect(sut.store.append(run, smallEvent(1, writer(4)))).rejects.toBeInstanceOf(AppendConflictError);
      await expect(sut.store.append(run, smallEvent(1, { ...by, epoch: 5 }))).rejects.toBeInstanceOf(AppendConflictError);
      expect((await sut.store.read(run, { afterSeq: 0 })).events).toEqual([event]);
    });

    it('paginates a log larger than 1 MB and returns every event once, in order', async () => {
      const run = newRun('big');
      const by = writer(1);
      const count = 130;
      const events = Array.from({ length: count }, (_, i) => sizedEvent(i + 1, by, 9_000));
      for (let i = 0; i < count; i += 10) await Promise.all(events.slice(i, i + 10).map((e) => sut.store.append(run, e)));
      const before = { ...sut.store.stats };
      const page = await sut.store.read(run, { afterSeq: 0 });
      const requests = sut.store.stats.requests - before.requests;
      expect(page.events).toHaveLength(count);
      expect(page.events.map((e) => parseEvent(e).seq)).toEqual(events.map((e) => e.seq));
      expect(JSON.stringify(page.events).length).toBeGreaterThan(1_100_000);
      expect(requests).toBeGreaterThan(1);
      expect(sut.store.stats.itemsRead - before.itemsRead).toBe(count);
      expect(page.events[count - 1]).toEqual(events[count - 1]);
    });

    it('honours a limit: nextAfterSeq only while more events follow', async () => {
      const run = newRun();
      const by = writer(1);
      await appendAll(run, [1, 2, 3, 4, 5].map((s) => smallEvent(s, by)));
      const first = await sut.store.read(run, { afterSeq: 0, limit: 2 });
      expect(first.events.map((e) => parseEvent(e).seq)).toEqual([1, 2]);
      expect(first.nextAfterSeq).toBe(2);
      const second = await sut.store.read(run, { afterSeq: 2, limit: 3 });
      expect(second.events.map((e) => parseEvent(e).seq)).toEqual([3, 4, 5]);
      expect(second.nextAfterSeq).toBeUndefined();
      expect((await sut.store.read(run, { afterSeq: 5, limit: 3 })).events).toEqual([]);
    });

    it('returns a corrupt record that parseEvent rejects with CorruptLogError', async () => {
      const run = newRun();
      const by = writer(1);
      await appendAll(run, [1, 2].map((s) => smallEvent(s, by)));
      await sut.corrupt(run, 2);
      const page = await sut.store.read(run, { afterSeq: 0 });
      expect(page.events).toHaveLength(2);
      expect(() => parseEvent(page.events[1])).toThrow(CorruptLogError);
    });

    it('stores run_started with its pinned content intact', async () => {
      const run = newRun();
      const now = sut.clock.now();
      const started = runStarted(run, writer(1), { at: now, expiresAt: now + 120 * DAY });
      await sut.store.append(run, started);
      expect(parseEvent(await sut.store.readOne(run, 1))).toEqual(started);
    });

    it.runIf(target.enforcesItemLimit)('refuses an item over 400 KB with ItemTooLargeError and keeps one just under', async () => {
      const run = newRun();
      const by = writer(1);
      await sut.store.append(run, sizedEvent(1, by, 390 * 1024));
      expect(parseEvent(await sut.store.readOne(run, 1))).toEqual(sizedEvent(1, by, 390 * 1024));
      await expect(sut.store.append(run, sizedEvent(2, by, 401 * 1024))).rejects.toBeInstanceOf(ItemTooLargeError);
      expect(await sut.store.readOne(run, 2)).toBeUndefined();
      await sut.store.append(run, smallEvent(2, by)); // the seq is still free for the offloaded version
    });
  });
}
