import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaseHeldError, LeaseLostError, RunNotFoundError, ValidationError } from '../../lib/core/errors.js';
import type { HeadProjection, RunHead } from '../../lib/ports/run-heads.js';
import type { RunRef } from '../../lib/core/run-ref.js';
import { cancelItem, DAY, newHead, newRun, settle, type StoreTarget, type StoreUnderTest } from './fixtures.js';

const TTL = 60_000;

export function projection(now: number, overrides: Partial<HeadProjection> = {}): HeadProjection {
  return {
    status: 'running',
    lastSeq: 2,
    usage: { steps: 1, inputTokens: 10, outputTokens: 5, costUsd: 0.000123 },
    attention: [],
    expiresAt: now + 90 * DAY,
    updatedAt: now,
    ...overrides,
  };
}

/** The RunHeads contract (leases, projection, pointers, listing); the sweeper index is in sweep-index.contract.ts. */
export function runHeadsContract(target: StoreTarget): void {
  describe.runIf(target.available)(`RunHeads contract: ${target.name}`, () => {
    let sut: StoreUnderTest;
    let now: number;
    beforeAll(async () => {
      sut = await target.setup();
      now = sut.clock.now();
    });
    afterAll(async () => {
      await sut?.dispose();
    });

    async function created(overrides: Partial<RunHead> = {}): Promise<RunRef> {
      const run = newRun();
      expect(await sut.store.createHead(newHead(run, now, overrides))).toBe(true);
      return run;
    }

    it('creates a head once and reads every field back', async () => {
      const run = newRun();
      const head = newHead(run, now, {
        status: 'waiting',
        budgets: { maxSteps: 5, maxInputTokens: 100, maxOutputTokens: 100, maxCostUsd: 0.5, deadlineAt: now + DAY },
        attention: [{ seq: 3, reason: 'unknown_outcome', callId: '2-0', detail: 'did it land?', rerunNotBefore: now + 5 }],
        park: { reason: 'poisoned', detail: 'too many attempts', at: now },
        outcome: { status: 'parked', seq: 3, summary: 'needs a person', code: 'unknown_outcome' },
        snapshot: { seq: 2, key: 'snapshots/x', sha256: 'b'.repeat(64), foldVersion: 1 },
        wakeAt: now + 1234,
        usage: { steps: 2, inputTokens: 3, outputTokens: 4, costUsd: 0.1 + 0.2 },
      });
      expect(await sut.store.createHead(head)).toBe(true);
      expect(await sut.store.createHead({ ...head, status: 'running' })).toBe(false);
      expect(await sut.store.getHead(run)).toEqual(head);
      expect(await sut.store.getHead(newRun())).toBeUndefined();
    });

    it('claims a free lease: epoch and attempts grow by one and the grant carries the new head', async () => {
      const run = await created();
      const first = await sut.store.claimLease(run, { owner: 'A', now, ttlMs: TTL });
      // Nobody held it: the head's lastSeq covers every append (LeaseGrant.fromReleased).
      expect(first).toMatchObject({ epoch: 1, attempts: 1, until: now + TTL, fromReleased: true });
      expect(first.head.lease).toEqual({ owner: 'A', until: now + TTL, epoch: 1 });
      expect(first.head.epoch).toBe(1);
      const again = await sut.store.claimLease(run, { owner: 'A', now: now + 1, ttlMs: TTL });
      // Its own lease, still there: not a release.
      expect(again).toMatchObject({ epoch: 2, attempts: 2, until: now + 1 + TTL, fromReleased: false });
      const held = sut.store.claimLease(run, { owner: 'B', now: now + 2, ttlMs: TTL });
      await expect(held).rejects.toBeInstanceOf(LeaseHeldError);
      await expect(held).rejects.toMatchObject({ until: now + 1 + TTL });
      expect((await sut.store.getHead(run))?.lease).toEqual({ owner: 'A', until: now + 1 + TTL, epoch: 2 });
    });

    it('lets exactly one of two workers racing for a free lease win', async () => {
      const run = await created();
      const race = await settle([
        sut.store.claimLease(run, { owner: 'A', now, ttlMs: TTL }),
        sut.peer().claimLease(run, { owner: 'B', now, ttlMs: TTL }),
      ]);
      expect(race.ok).toHaveLength(1);
      expect(race.errors).toHaveLength(1);
      expect(race.errors[0]).toBeInstanceOf(LeaseHeldError);
      expect(race.ok[0]?.epoch).toBe(1);
    });

    it('hands an expired lease to another worker with a higher epoch and rejects the stale one', async () => {
      const run = await created();
      const a = await sut.store.claimLease(run, { owner: 'A', now, ttlMs: 1_000 });
      const b = await sut.peer().claimLease(run, { owner: 'B', now: now + 1_000, ttlMs: TTL });
      expect(b.epoch).toBe(a.epoch + 1);
      expect(b.attempts).toBe(2);
      // A lapsed lease: its holder may have appended past what the head shows.
      expect(b.fromReleased).toBe(false);
      const stale = { owner: 'A', epoch: a.epoch };
      await expect(sut.store.renewLease(run, { ...stale, now: now + 1_001, ttlMs: TTL })).rejects.toBeInstanceOf(LeaseLostError);
      await expect(sut.store.releaseLease(run, { ...stale, inboxVersion: 0 })).rejects.toBeInstanceOf(LeaseLostError);
      await expect(sut.store.resetAttempts(run, stale)).rejects.toBeInstanceOf(LeaseLostError);
      // The same owner name with an old epoch is stale too.
      await expect(sut.store.renewLease(run, { owner: 'B', epoch: a.epoch, now, ttlMs: TTL })).rejects.toBeInstanceOf(LeaseLostError);
      const until = await sut.store.renewLease(run, { owner: 'B', epoch: b.epoch, now: now + 2_000, ttlMs: TTL });
      expect(until).toBe(now + 2_000 + TTL);
      expect((await sut.store.getHead(run))?.lease).toEqual({ owner: 'B', until, epoch: b.epoch });
      expect(await sut.store.releaseLease(run, { owner: 'B', epoch: b.epoch, inboxVersion: 0 })).toBe(true);
      const released = await sut.store.getHead(run);
      expect(released?.lease).toBeUndefined();
      expect(released?.epoch).toBe(b.epoch);
      // Epochs never go back, even after a release; and this claim follows a release.
      const c = await sut.store.claimLease(run, { owner: 'A', now: now + 3_000, ttlMs: TTL });
      expect(c).toMatchObject({ epoch: b.epoch + 1, fromReleased: true });
      await expect(sut.store.releaseLease(run, { owner: 'B', epoch: b.epoch, inboxVersion: 0 })).rejects.toBeInstanceOf(LeaseLostError);
    });

    it('keeps the lease when inbox items arrived after the holder ingested', async () => {
      const run = await created();
      const g = await sut.store.claimLease(run, { owner: 'A', now, ttlMs: TTL });
      await sut.peer().put(run, cancelItem('01-cancel'));
      const version = (await sut.store.getHead(run))?.inboxVersion ?? 0;
      expect(version).toBeGreaterThanOrEqual(1);
      expect(await sut.store.releaseLease(run, { owner: 'A', epoch: g.epoch, inboxVersion: 0 })).toBe(false);
      expect((await sut.store.getHead(run))?.lease?.owner).toBe('A');
      expect(await sut.store.releaseLease(run, { owner: 'A', epoch: g.epoch, inboxVersion: version })).toBe(true);
      // A release ends the step normally: the failure streak starts again from zero.
      expect((await sut.store.getHead(run))?.attempts).toBe(0);
      const head = await sut.store.getHead(run);
      expect(head?.lease).toBeUndefined();
      expect(head?.ingestedInboxVersion).toBe(version);
    });

    it('projects and releases in one write: both, or neither when the inbox moved; only for the holder', async () => {
      const run = await created();
      await sut.store.claimLease(run, { owner: 'A', now, ttlMs: TTL });
      const g = await sut.store.claimLease(run, { owner: 'A', now, ttlMs: TTL });
      await sut.store.markLoaded(run, { owner: 'A', epoch: g.epoch, stalls: 1 });
      const p4 = projection(now + 10, { lastSeq: 4, wakeAt: now + 500 });
      await expect(sut.store.projectAndRelease(run, p4, { owner: 'B', epoch: g.epoch, inboxVersion: 0 })).rejects.toBeInstanceOf(LeaseLostError);
      expect((await sut.store.getHead(run))?.lastSeq).toBe(1);
      await sut.peer().put(run, cancelItem('01-cancel'));
      const version = (await sut.store.getHead(run))?.inboxVersion ?? 0;
      // The inbox moved: nothing is written, the lease is kept.
      expect(await sut.store.projectAndRelease(run, p4, { owner: 'A', epoch: g.epoch, inboxVersion: 0 })).toBe(false);
      expect(await sut.store.getHead(run)).toMatchObject({ lastSeq: 1, lease: { owner: 'A', epoch: g.epoch }, stalls: 1 });
      expect(await sut.store.projectAndRelease(run, p4, { owner: 'A', epoch: g.epoch, inboxVersion: version })).toBe(true);
      const head = await sut.store.getHead(run);
      expect(head).toMatchObject({ ...p4, attempts: 0, ingestedInboxVersion: version, epoch: g.epoch });
      expect(head?.lease).toBeUndefined();
      expect(head?.stalls).toBeUndefined();
      // Released: a second try is a stale holder's.
      await expect(sut.store.projectAndRelease(run, p4, { owner: 'A', epoch: g.epoch, inboxVersion: version })).rejects.toBeInstanceOf(LeaseLostError);
      // A projection older than the head's is skipped, the lease still released.
      const g2 = await sut.store.claimLease(run, { owner: 'A', now, ttlMs: TTL });
      expect(await sut.store.projectAndRelease(run, projection(now + 20, { lastSeq: 3, status: 'completed' }), { owner: 'A', epoch: g2.epoch, inboxVersion: version })).toBe(true);
      const after = await sut.store.getHead(run);
      expect(after).toMatchObject({ lastSeq: 4, status: 'running' });
      expect(after?.lease).toBeUndefined();
    });

    it('resets attempts for the lease holder only', async () => {
      const run = await created();
      await sut.store.claimLease(run, { owner: 'A', now, ttlMs: TTL });
      const g = await sut.store.claimLease(run, { owner: 'A', now, ttlMs: TTL });
      expect(g.attempts).toBe(2);
      await sut.store.resetAttempts(run, { owner: 'A', epoch: g.epoch });
      expect((await sut.store.getHead(run))?.attempts).toBe(0);
      expect((await sut.store.claimLease(run, { owner: 'A', now, ttlMs: TTL })).attempts).toBe(1);
    });

    it('marks a loaded claim (attempts 0, stalls as given) for the lease holder only; progress and release clear stalls', async () => {
      const run = await created();
      await sut.store.claimLease(run, { owner: 'A', now, ttlMs: TTL });
      const g = await sut.store.claimLease(run, { owner: 'A', now, ttlMs: TTL });
      await expect(sut.store.markLoaded(run, { owner: 'B', epoch: g.epoch, stalls: 1 })).rejects.toBeInstanceOf(LeaseLostError);
      await sut.store.markLoaded(run, { owner: 'A', epoch: g.epoch, stalls: 2 });
      expect(await sut.store.getHead(run)).toMatchObject({ attempts: 0, stalls: 2 });
      const g2 = await sut.store.claimLease(run, { owner: 'A', now, ttlMs: TTL });
      expect(g2).toMatchObject({ attempts: 1, head: { stalls: 2 } });
      await sut.store.resetAttempts(run, { owner: 'A', epoch: g2.epoch });
      expect((await sut.store.getHead(run))?.stalls).toBeUndefined();
      await sut.store.markLoaded(run, { owner: 'A', epoch: g2.epoch, stalls: 1 });
      expect(await sut.store.releaseLease(run, { owner: 'A', epoch: g2.epoch, inboxVersion: 0 })).toBe(true);
      expect(await sut.store.getHead(run)).toMatchObject({ attempts: 0 });
      expect((await sut.store.getHead(run))?.stalls).toBeUndefined();
    });

    it('refuses every head operation on a run that does not exist', async () => {
      const run = newRun();
      const lease = { owner: 'A', epoch: 1 };
      const calls: (() => Promise<unknown>)[] = [
        () => sut.store.claimLease(run, { owner: 'A', now, ttlMs: TTL }),
        () => sut.store.renewLease(run, { ...lease, now, ttlMs: TTL }),
        () => sut.store.releaseLease(run, { ...lease, inboxVersion: 0 }),
        () => sut.store.resetAttempts(run, lease),
        () => sut.store.project(run, projection(now)),
        () => sut.store.projectAndRelease(run, projection(now), { ...lease, inboxVersion: 0 }),
        () => sut.store.setPark(run, { reason: 'poisoned', detail: 'x', at: now }, 'parked'),
        () => sut.store.setSnapshot(run, { seq: 5, key: 'k', sha256: 'c'.repeat(64), foldVersion: 1 }),
        () => sut.store.markNotified(run, 3),
      ];
      for (const call of calls) await expect(call()).rejects.toBeInstanceOf(RunNotFoundError);
      expect(await sut.store.getHead(run)).toBeUndefined();
    });

    it('projects the log monotonically: never back to an older lastSeq', async () => {
      const run = await created();
      const p5 = projection(now + 10, {
        status: 'waiting',
        lastSeq: 5,
        attention: [{ seq: 4, reason: 'unknown_outcome', callId: '3-0', detail: 'check' }],
        outcome: { status: 'parked', seq: 4, summary: 'waiting for a person' },
        wakeAt: now + 500,
      });
      expect(await sut.store.project(run, p5)).toBe(true);
      expect(await sut.store.getHead(run)).toMatchObject({ ...p5 });
      expect(await sut.store.project(run, projection(now + 20, { lastSeq: 3, status: 'completed' }))).toBe(false);
      expect((await sut.store.getHead(run))?.status).toBe('waiting');
      // Same seq again is applied; updatedAt never moves back.
      expect(await sut.store.project(run, { ...p5, updatedAt: now + 1 })).toBe(true);
      expect((await sut.store.getHead(run))?.updatedAt).toBe(now + 10);
      const p7 = projection(now + 30, { lastSeq: 7, status: 'running' });
      expect(await sut.store.project(run, p7)).toBe(true);
      const head = await sut.store.getHead(run);
      expect(head).toMatchObject({ status: 'running', lastSeq: 7, updatedAt: now + 30, attention: [] });
      expect(head?.outcome).toBeUndefined();
      expect(head?.wakeAt).toBeUndefined();
    });

    it('projects what the run waits on (approvals, signals) and lists runs awaiting approval by status', async () => {
      const run = await created();
      const waits = [
        { callId: '3-0', tool: 'issue_refund', kind: 'approval' as const, seq: 4, argsHash: 'a'.repeat(64), until: now + DAY },
        { callId: '3-1', tool: 'wait_for_return', kind: 'signal' as const, seq: 3, signal: 'parcel_returned', until: now + 2 * DAY },
      ];
      const outcome = { status: 'awaiting_approval' as const, seq: 4, summary: 'awaits approval: issue_refund (3-0)', code: 'approval_required' };
      expect(await sut.store.project(run, projection(now + 10, { status: 'awaiting_approval', lastSeq: 5, waits, outcome, wakeAt: now + DAY }))).toBe(true);
      expect(await sut.store.getHead(run)).toMatchObject({ status: 'awaiting_approval', waits, outcome, wakeAt: now + DAY });
      const listed = await sut.store.listRuns(run.tenant, { status: 'awaiting_approval', limit: 10 });
      expect(listed.runs.map((h) => h.runId)).toEqual([run.runId]);
      expect(await sut.store.project(run, projection(now + 20, { lastSeq: 6, waits: [] }))).toBe(true);
      expect((await sut.store.getHead(run))?.waits).toBeUndefined();
    });

    it('parks on the head and clears the park with a fresh attempts count', async () => {
      const run = await created();
      await sut.store.claimLease(run, { owner: 'A', now, ttlMs: TTL });
      const park = { reason: 'corrupt_log' as const, detail: 'seq 4 invalid', at: now };
      await sut.store.setPark(run, park, 'parked');
      expect(await sut.store.getHead(run)).toMatchObject({ park, status: 'parked', attempts: 1 });
      await sut.store.setPark(run, null, 'running');
      const head = await sut.store.getHead(run);
      expect(head?.park).toBeUndefined();
      expect(head).toMatchObject({ status: 'running', attempts: 0 });
    });

    it('moves the snapshot pointer forward only', async () => {
      const run = await created();
      const ptr = (seq: number) => ({ seq, key: `snapshots/${seq}`, sha256: 'd'.repeat(64), foldVersion: 1 });
      expect(await sut.store.setSnapshot(run, ptr(10))).toBe(true);
      expect(await sut.store.setSnapshot(run, ptr(5))).toBe(false);
      expect(await sut.store.setSnapshot(run, ptr(10))).toBe(false);
      expect(await sut.store.setSnapshot(run, ptr(20))).toBe(true);
      expect((await sut.store.getHead(run))?.snapshot).toEqual(ptr(20));
    });

    it('raises notifiedSeq forward only', async () => {
      const run = await created();
      await sut.store.markNotified(run, 5);
      await sut.store.markNotified(run, 3);
      expect((await sut.store.getHead(run))?.notifiedSeq).toBe(5);
    });

    it("lists a tenant's runs newest first, by status, page by page", async () => {
      const tenant = newRun().tenant;
      const runs = Array.from({ length: 5 }, (_, i) => ({ tenant, runId: `list-${i}` }));
      for (const [i, run] of runs.entries()) await sut.store.createHead(newHead(run, now + i * 1000));
      for (const run of runs.slice(3)) await sut.store.project(run, projection(now + 9_000, { status: 'completed', lastSeq: 9 }));
      const ids = (heads: RunHead[]) => heads.map((h) => h.runId);
      const p1 = await sut.store.listRuns(tenant, { limit: 2 });
      expect(ids(p1.runs)).toEqual(['list-4', 'list-3']);
      expect(p1.cursor).toBeDefined();
      const p2 = await sut.store.listRuns(tenant, { limit: 2, cursor: p1.cursor });
      expect(ids(p2.runs)).toEqual(['list-2', 'list-1']);
      const p3 = await sut.store.listRuns(tenant, { limit: 2, cursor: p2.cursor });
      expect(ids(p3.runs)).toEqual(['list-0']);
      expect(p3.cursor).toBeUndefined();
      const exact = await sut.store.listRuns(tenant, { limit: 5 });
      expect(exact.runs).toHaveLength(5);
      expect(exact.cursor).toBeUndefined();
      expect(ids((await sut.store.listRuns(tenant, { limit: 10, status: 'completed' })).runs)).toEqual(['list-4', 'list-3']);
      expect(ids((await sut.store.listRuns(tenant, { limit: 10, status: 'running' })).runs)).toEqual(['list-2', 'list-1', 'list-0']);
      expect((await sut.store.listRuns(`${tenant}-other`, { limit: 10 })).runs).toEqual([]);
      expect((await sut.store.listRuns(tenant, { limit: 1 })).runs[0]).toEqual(await sut.store.getHead(runs[4]!));
    });

    it('counts the runs of a tenant per status exactly, past one page, every status present, each count the listing it stands for', async () => {
      const tenant = newRun().tenant;
      const fresh = await sut.store.countRuns(tenant);
      expect(fresh).toEqual({ running: 0, waiting: 0, awaiting_approval: 0, parked: 0, completed: 0, failed: 0, cancelled: 0 });
      // More than a listing page (100) in one status, so a capped count would show.
      const runs = Array.from({ length: 105 }, (_, i) => ({ tenant, runId: `count-${String(i).padStart(3, '0')}` }));
      for (const [i, run] of runs.entries()) await sut.store.createHead(newHead(run, now + i));
      const waits = [{ callId: '3-0', tool: 'issue_refund', kind: 'approval' as const, seq: 4, argsHash: 'a'.repeat(64) }];
      await sut.store.project(runs[0]!, projection(now + 500, { status: 'awaiting_approval', lastSeq: 5, waits }));
      await sut.store.project(runs[1]!, projection(now + 500, { status: 'completed', lastSeq: 9 }));
      await sut.store.project(runs[2]!, projection(now + 500, { status: 'waiting', lastSeq: 9 }));
      await sut.store.setPark(runs[3]!, { reason: 'poisoned', detail: 'kept dying', at: now }, 'parked');
      // A status that changes twice is counted once, in the last one.
      await sut.store.project(runs[4]!, projection(now + 500, { status: 'waiting', lastSeq: 5 }));
      await sut.store.project(runs[4]!, projection(now + 600, { status: 'cancelled', lastSeq: 7 }));
      await sut.store.createHead(newHead({ tenant: `${tenant}-other`, runId: 'count-x' }, now));
      const counts = await sut.store.countRuns(tenant);
      expect(counts).toEqual({ running: 100, waiting: 1, awaiting_approval: 1, parked: 1, completed: 1, failed: 0, cancelled: 1 });
      // Each count is what a listing by that status pages through; together they are every run.
      for (const status of ['running', 'awaiting_approval'] as const) {
        let listed = 0;
        let cursor: string | undefined;
        do {
          const page = await sut.store.listRuns(tenant, { status, limit: 100, ...(cursor ? { cursor } : {}) });
          listed += page.runs.length;
          cursor = page.cursor;
        } while (cursor);
        expect(listed, status).toBe(counts[status]);
      }
      expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(runs.length);
      expect(await sut.store.countRuns(`${tenant}-other`)).toMatchObject({ running: 1 });
    });

    it("lists a run's children (agentTool) newest first, page by page, within the tenant only", async () => {
      const tenant = newRun().tenant;
      const parent = { tenant, runId: 'parent-1' };
      await sut.store.createHead(newHead(parent, now));
      const children = Array.from({ length: 3 }, (_, i) => ({ tenant, runId: `parent-1-c${i + 3}-0` }));
      for (const [i, run] of children.entries()) {
        await sut.store.createHead(newHead(run, now + (i + 1) * 1000, { parent: { runId: 'parent-1', callId: `${i + 3}-0` } }));
      }
      // Another parent's child, and a run of another tenant naming the same parent id.
      await sut.store.createHead(newHead({ tenant, runId: 'other-c3-0' }, now + 5000, { parent: { runId: 'other', callId: '3-0' } }));
      await sut.store.createHead(newHead({ tenant: `${tenant}-x`, runId: 'parent-1-c9-0' }, now + 6000, { parent: { runId: 'parent-1', callId: '9-0' } }));
      const ids = (heads: RunHead[]) => heads.map((h) => h.runId);
      const p1 = await sut.store.listRuns(tenant, { parent: 'parent-1', limit: 2 });
      expect(ids(p1.runs)).toEqual(['parent-1-c5-0', 'parent-1-c4-0']);
      expect(p1.runs[0]?.parent).toEqual({ runId: 'parent-1', callId: '5-0' });
      const p2 = await sut.store.listRuns(tenant, { parent: 'parent-1', limit: 2, cursor: p1.cursor });
      expect(ids(p2.runs)).toEqual(['parent-1-c3-0']);
      expect(p2.cursor).toBeUndefined();
      // The parent itself is no child; the children still appear in the tenant's listing.
      expect(ids((await sut.store.listRuns(tenant, { limit: 10 })).runs)).toContain('parent-1');
      expect((await sut.store.listRuns(`${tenant}-y`, { parent: 'parent-1', limit: 10 })).runs).toEqual([]);
      // A cursor of the children listing is refused by the plain listing and by another parent's.
      await expect(sut.store.listRuns(tenant, { limit: 2, cursor: p1.cursor })).rejects.toBeInstanceOf(ValidationError);
      await expect(sut.store.listRuns(tenant, { parent: 'other', limit: 2, cursor: p1.cursor })).rejects.toBeInstanceOf(ValidationError);
    });

    it('refuses forged cursors and cursors of another listing; a cursor never leaves the caller\'s tenant', async () => {
      const tenant = newRun().tenant;
      const other = newRun().tenant;
      for (const [t, prefix] of [[tenant, 'mine'], [other, 'theirs']] as const) {
        for (let i = 0; i < 3; i++) await sut.store.createHead(newHead({ tenant: t, runId: `${prefix}-${i}` }, now + i * 1000));
      }
      const forged = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      for (const cursor of ['%%%', 'e30', forged({ pk: `RUN#${other}#theirs-1`, sk: 'HEAD', tenantPk: `TENANT#${other}`, tenantSk: 'x' }), forged({ v: 1, s: null, c: 1, r: 'x', tenant: other })]) {
        await expect(sut.store.listRuns(tenant, { limit: 2, cursor }), cursor).rejects.toBeInstanceOf(ValidationError);
      }
      const page = await sut.store.listRuns(other, { limit: 1 });
      await expect(sut.store.listRuns(other, { limit: 1, status: 'running', cursor: page.cursor })).rejects.toBeInstanceOf(ValidationError);
      // Another tenant's cursor names a position, never a key: it pages through the caller's own runs.
      const mine = await sut.store.listRuns(tenant, { limit: 10, cursor: page.cursor });
      expect(mine.runs.length).toBeGreaterThan(0);
      expect(mine.runs.every((r) => r.tenant === tenant)).toBe(true);
    });
  });
}
