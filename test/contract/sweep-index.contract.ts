import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunHead } from '../../lib/ports/run-heads.js';
import type { RunRef } from '../../lib/core/run-ref.js';
import { SWEEP_BACKOFF_CAP_MS, SWEEP_QUEUED_MS, SWEEP_STALL_MS, sweepBackoffMs, sweepShard } from '../../lib/ports/sweep-index.js';
import { cancelItem, newHead, newRun, type StoreTarget, type StoreUnderTest } from './fixtures.js';
import { projection } from './run-heads.contract.js';

/** A run id of this tenant that falls in `shard`. */
function runInShard(tenant: string, shard: number, label: string): RunRef {
  for (let i = 0; ; i++) {
    const runId = `${label}-${i}`;
    if (sweepShard(runId) === shard) return { tenant, runId };
  }
}

/**
 * The sparse sweeper index: listDue returns exactly the heads that sweepEntry (the one shared rule)
 * says are due, whatever sequence of head writes brought them there.
 */
export function sweepIndexContract(target: StoreTarget): void {
  describe.runIf(target.available)(`RunHeads sweeper index contract: ${target.name}`, () => {
    let sut: StoreUnderTest;
    beforeAll(async () => {
      sut = await target.setup();
    });
    afterAll(async () => {
      await sut?.dispose();
    });

    it('lists exactly the due heads of a shard as runs progress, complete, get notified and get inbox items', async () => {
      const now = sut.clock.now();
      const tenant = newRun().tenant;
      const shard = 7;
      const due = async (at: number) =>
        (await sut.store.listDue(shard, at, 1_000))
          .filter((h: RunHead) => h.tenant === tenant)
          .map((h) => h.runId)
          .sort();
      const [running, finishing, notified, reopened, parked, leased] = [
        'running',
        'finishing',
        'notified',
        'reopened',
        'parked',
        'leased',
      ].map((label) => runInShard(tenant, shard, label)) as [RunRef, RunRef, RunRef, RunRef, RunRef, RunRef];
      for (const run of [running, finishing, notified, reopened, parked, leased]) {
        expect(await sut.store.createHead(newHead(run, now))).toBe(true);
      }
      // A healthy running run is not due until it looks stalled.
      expect(await due(now)).toEqual([]);

      // A run completes: its notice is owed at once, then published.
      const done = projection(now + 100, { status: 'completed', lastSeq: 9, outcome: { status: 'completed', seq: 9, summary: 'ok' } });
      await sut.store.project(finishing, done);
      await sut.store.project(notified, done);
      await sut.store.markNotified(notified, 9);
      await sut.store.project(reopened, done);
      await sut.store.markNotified(reopened, 9);
      expect(await due(now + 100)).toEqual([finishing.runId]);

      // A finished run gets an inbox item: due again. A parked run is due only with inbox items.
      await sut.store.put(reopened, cancelItem('01-late'));
      await sut.store.setPark(parked, { reason: 'poisoned', detail: 'x', at: now }, 'parked');
      expect(await due(now + 100)).toEqual([finishing.runId, reopened.runId].sort());
      await sut.store.put(parked, cancelItem('01-retry'));
      expect(await due(now + 100)).toEqual([finishing.runId, parked.runId, reopened.runId].sort());

      // A live lease pushes the wake-up past its end; its release brings the stall rule back.
      const grant = await sut.store.claimLease(leased, { owner: 'A', now, ttlMs: 5 * SWEEP_STALL_MS });
      await sut.store.project(leased, projection(now + 200, { lastSeq: 3 }));
      const stalled = now + SWEEP_STALL_MS;
      expect(await due(stalled)).toEqual([finishing.runId, parked.runId, reopened.runId, running.runId].sort());
      expect(await due(now + 5 * SWEEP_STALL_MS)).toContain(leased.runId);
      await sut.store.releaseLease(leased, { owner: 'A', epoch: grant.epoch, inboxVersion: 0 });
      expect(await due(now + 200 + SWEEP_STALL_MS)).toContain(leased.runId);
      expect(await due(now + 199 + SWEEP_STALL_MS)).not.toContain(leased.runId);

      // Notices published and inbox items ingested: out of the index.
      await sut.store.markNotified(finishing, 9);
      const p = await sut.store.claimLease(parked, { owner: 'B', now, ttlMs: 1 });
      const v = (await sut.store.getHead(parked))?.inboxVersion ?? 0;
      await sut.store.releaseLease(parked, { owner: 'B', epoch: p.epoch, inboxVersion: v });
      expect(await due(now + 10 * SWEEP_STALL_MS)).toEqual([leased.runId, reopened.runId, running.runId].sort());

      // A waiting run with its own wakeAt later than the stall horizon is due then, not before.
      await sut.store.project(running, projection(now + 300, { status: 'waiting', lastSeq: 4, wakeAt: now + 20 * SWEEP_STALL_MS }));
      expect(await due(now + 10 * SWEEP_STALL_MS)).not.toContain(running.runId);
      expect(await due(now + 20 * SWEEP_STALL_MS)).toContain(running.runId);
      // Awaiting approval: due only when the approval can expire, exactly then.
      await sut.store.project(running, projection(now + 400, { status: 'awaiting_approval', lastSeq: 5 }));
      expect(await due(now + 100 * SWEEP_STALL_MS)).not.toContain(running.runId);
      await sut.store.project(running, projection(now + 500, { status: 'awaiting_approval', lastSeq: 6, wakeAt: now + 30 * SWEEP_STALL_MS }));
      expect(await due(now + 30 * SWEEP_STALL_MS - 1)).not.toContain(running.runId);
      expect(await due(now + 30 * SWEEP_STALL_MS)).toContain(running.runId);
      // And other shards never see them.
      expect((await sut.store.listDue((shard + 1) % 16, now + 100 * SWEEP_STALL_MS, 1_000)).filter((h) => h.tenant === tenant)).toEqual([]);
    });

    it('holds off a run whose tick is recorded as queued, until a claim or SWEEP_QUEUED_MS', async () => {
      const now = sut.clock.now();
      const tenant = newRun().tenant;
      const shard = 9;
      const due = async (at: number) => (await sut.store.listDue(shard, at, 1_000)).filter((h) => h.tenant === tenant).map((h) => h.runId);
      const [queued, claimed, handed] = ['queued', 'claimed', 'handed'].map((l) => runInShard(tenant, shard, l)) as [RunRef, RunRef, RunRef];
      for (const run of [queued, claimed, handed]) expect(await sut.store.createHead(newHead(run, now, { queuedAt: now }))).toBe(true);
      // Stalled by the old rule, but a tick is on its way: nobody is woken before the hold ends.
      expect(await due(now + SWEEP_STALL_MS)).toEqual([]);
      expect(await due(now + SWEEP_QUEUED_MS - 1)).toEqual([]);
      expect((await due(now + SWEEP_QUEUED_MS)).sort()).toEqual([claimed, handed, queued].map((r) => r.runId).sort());

      // A claim receives the tick: the stall rule is back (a worker that dies after claiming is
      // recovered as before), and a release that hands over records the next tick.
      const c = await sut.store.claimLease(claimed, { owner: 'A', now, ttlMs: 1 });
      expect(c.head.queuedAt).toBeUndefined();
      await sut.store.releaseLease(claimed, { owner: 'A', epoch: c.epoch, inboxVersion: 0 });
      const h = await sut.store.claimLease(handed, { owner: 'B', now, ttlMs: 1 });
      expect(await sut.store.projectAndRelease(handed, projection(now + 100, { lastSeq: 3 }), { owner: 'B', epoch: h.epoch, inboxVersion: 0, queuedAt: now + 100 })).toBe(true);
      expect((await sut.store.getHead(handed))?.queuedAt).toBe(now + 100);
      expect(await due(now + SWEEP_STALL_MS)).toEqual([claimed.runId]);
      expect(await due(now + 100 + SWEEP_QUEUED_MS - 1)).not.toContain(handed.runId);
      expect(await due(now + 100 + SWEEP_QUEUED_MS)).toContain(handed.runId);
    });

    it('backs off a run the sweeper woke, doubling per wake without progress, capped, until progress', async () => {
      const now = sut.clock.now();
      const run = runInShard(newRun().tenant, 11, 'swept');
      const due = async (at: number) => (await sut.store.listDue(11, at, 1_000)).some((h) => h.runId === run.runId && h.tenant === run.tenant);
      await sut.store.createHead(newHead(run, now));
      const stalled = now + SWEEP_STALL_MS;
      expect(await due(stalled)).toBe(true);
      const head = (await sut.store.getHead(run))!;

      // The sweeper's mark is conditional on the head it saw: a claim in between wins.
      expect(await sut.store.markSwept(run, { at: stalled, n: 1, seq: head.lastSeq }, { epoch: head.epoch + 1 })).toBe(false);
      expect(await sut.store.markSwept(run, { at: stalled, n: 1, seq: head.lastSeq + 1 }, { epoch: head.epoch })).toBe(false);
      expect((await sut.store.getHead(run))?.swept).toBeUndefined();
      expect(await due(stalled)).toBe(true);

      // Each wake holds the next one off for longer: 2, 4, ... minutes, never more than the cap.
      let at = stalled;
      for (const n of [1, 2, 3, 12]) {
        expect(await sut.store.markSwept(run, { at, n, seq: head.lastSeq }, { epoch: head.epoch })).toBe(true);
        expect(await due(at)).toBe(false);
        expect(await due(at + sweepBackoffMs(n) - 1)).toBe(false);
        expect(await due(at + sweepBackoffMs(n))).toBe(true);
        at += sweepBackoffMs(n);
      }
      expect(sweepBackoffMs(1)).toBe(2 * SWEEP_STALL_MS);
      expect(sweepBackoffMs(2)).toBe(4 * SWEEP_STALL_MS);
      expect(sweepBackoffMs(12)).toBe(SWEEP_BACKOFF_CAP_MS);

      // Progress (a projection past the seq the sweeper saw) ends the streak: the stall rule again.
      expect(await sut.store.markSwept(run, { at, n: 13, seq: head.lastSeq }, { epoch: head.epoch })).toBe(true);
      await sut.store.project(run, projection(at, { lastSeq: head.lastSeq + 1 }));
      expect(await due(at + SWEEP_STALL_MS - 1)).toBe(false);
      expect(await due(at + SWEEP_STALL_MS)).toBe(true);
    });

    it('returns at most `limit` heads, earliest first', async () => {
      const now = sut.clock.now();
      const tenant = newRun().tenant;
      const shard = 3;
      const runs = [0, 1, 2].map((i) => runInShard(tenant, shard, `limit${i}`));
      for (const [i, run] of runs.entries()) {
        await sut.store.createHead(newHead(run, now - 10 * SWEEP_STALL_MS + i, { status: 'completed', outcome: { status: 'completed', seq: 2, summary: 'ok' } }));
      }
      const heads = (await sut.store.listDue(shard, now, 1_000)).filter((h) => h.tenant === tenant);
      expect(heads.map((h) => h.runId)).toEqual(runs.map((r) => r.runId));
      // This suite's table holds no other due heads in this shard.
      expect((await sut.store.listDue(shard, now, 2)).map((h) => h.runId)).toEqual(runs.slice(0, 2).map((r) => r.runId));
    });
  });
}
