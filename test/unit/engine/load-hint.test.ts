import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { runStep, type StepResult } from '../../../lib/engine/step-runner.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { requestCancel } from '../../../lib/engine/requests.js';
import { SWEEP_QUEUED_MS } from '../../../lib/ports/sweep-index.js';
import { sweep } from '../../../lib/engine/sweep.js';
import type { RunHeads } from '../../../lib/ports/run-heads.js';
import type { Tick } from '../../../lib/ports/step-queue.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { spawnWorker, type WorkerProcess } from '../../../lib/testing/world.js';
import { haltAt, logOf } from './helpers.js';

/**
 * A tick's LoadHint lets a cold worker read the log beside its claim. Whatever was appended
 * between those reads and the claim must still be in the state it acts on: these tests put a
 * whole step of another worker in that gap. Without the head check (a released lease) or the
 * read after a lapsed one, the late worker's first append would hit a taken seq (fenced).
 */
describe('reads beside the claim (LoadHint)', () => {
  const lookup = defineTool({ name: 'lookup', version: '1', description: 'look', input: z.object({ q: z.string() }), policy: 'rerun', execute: async ({ q }) => `found ${q}` });
  const script = [1, 2, 3, 4].map((i) => ({ calls: [{ name: 'lookup', args: { q: `q${i}` } }] }));

  async function setup() {
    const t = scriptedWorld({ tools: [lookup], script: [...script, { text: 'done' }] });
    const order: string[] = [];
    const read = t.world.storage.log.read.bind(t.world.storage.log);
    t.world.storage.log.read = async (run, options) => {
      order.push(`read after ${options.afterSeq}`);
      return read(run, options);
    };
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    const step = (w: WorkerProcess, tick: Tick = t.run): Promise<StepResult> =>
      // One turn per step; time enough for it even after a gap that outlasts a lease.
      runStep(w.deps, tick, { owner: w.name, deadlineAt: t.world.clock.now() + 3_600_000, maxTurns: 1 });
    const hinted = async (): Promise<Tick> => ({ ...t.run, hint: { snapshot: (await t.world.storage.heads.getHead(t.run))?.snapshot ?? null } });
    /** A worker whose claim first lets `before` run (the gap between its reads and its claim). */
    const late = (before: () => Promise<void>) => {
      const heads = t.world.storage.heads;
      const gapped: RunHeads = Object.assign(Object.create(heads) as RunHeads, {
        claimLease: async (...args: Parameters<RunHeads['claimLease']>) => {
          order.push('claim');
          await before();
          // The claim lands after the gap: at the clock's time then.
          return heads.claimLease(args[0], { ...args[1], now: t.world.clock.now() });
        },
      });
      return spawnWorker(t.world, undefined, {}, { heads: gapped });
    };
    return { t, order, step, hinted, late };
  }

  async function everyLookupOnceInOrder(t: ReturnType<typeof scriptedWorld>) {
    const { state, events } = await logOf(t.world, t.run);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const calls = Object.values(state.calls);
    expect(calls.map((c) => c.name)).toEqual(calls.map(() => 'lookup'));
    expect(calls.map((c) => c.args)).toEqual(calls.map((_, i) => ({ kind: 'inline', value: { q: `q${i + 1}` } })));
    return state;
  }

  it('a cold worker with a hint reads before its claim lands, and no more after it when nothing moved', async () => {
    const { t, order, step, hinted, late } = await setup();
    await step(spawnWorker(t.world));
    order.length = 0;
    const b = late(async () => undefined);
    const result = await step(b, await hinted());
    expect(result.appended).toBeGreaterThan(0);
    // The read went out first (beside the claim), and the released lease needed no second one.
    expect(order).toEqual(['read after 0', 'claim']);
    // Without a hint the same step reads after its claim.
    order.length = 0;
    await step(late(async () => undefined));
    expect(order).toEqual(['claim', 'read after 0']);
    await everyLookupOnceInOrder(t);
  });

  it('another worker steps and releases between the reads and the claim: the head shows it, the late worker reads the rest', async () => {
    const { t, order, step, hinted, late } = await setup();
    const a = spawnWorker(t.world);
    await step(a);
    const tick = await hinted();
    const before = (await logOf(t.world, t.run)).state.lastSeq;
    const b = late(async () => {
      // Warm (its own release was the last thing), so it reads nothing: it appends and releases.
      expect((await step(a)).appended).toBeGreaterThan(0);
    });
    order.length = 0;
    const result = await step(b, tick);
    expect(result.outcome).not.toBe('fenced');
    expect(result.appended).toBeGreaterThan(0);
    // The prefetched read stopped at `before`; the claimed head was past it: one read from there.
    expect(order.filter((o) => o.startsWith('read after 0')).length).toBe(1);
    expect(order).toContain(`read after ${before}`);
    const state = await everyLookupOnceInOrder(t);
    expect(Object.keys(state.calls)).toHaveLength(3);
  });

  it('a worker dies after appending and its lease lapses in the gap: the head does not show its appends, the late worker reads after its claim', async () => {
    const { t, order, step, hinted, late } = await setup();
    // Warm for its second step (it reads nothing), and halted inside it after an append.
    const checkpoints = { armed: false, halt: haltAt('after-append:tool_result') };
    // A short lease, so that it lapses in a gap that leaves the late worker's own lease young.
    const dying = spawnWorker(t.world, { at: (point, detail) => (checkpoints.armed ? checkpoints.halt.at(point, detail) : undefined) }, { config: { leaseMs: 2_000, marginMs: 100, modelTimeoutMs: 500 } });
    await step(dying);
    checkpoints.armed = true;
    const tick = await hinted();
    const before = (await logOf(t.world, t.run)).state.lastSeq;
    const b = late(async () => {
      await expect(step(dying)).rejects.toThrow('worker halted');
      dying.kill();
      const head = await t.world.storage.heads.getHead(t.run);
      expect(head?.lease).toBeDefined(); // never released, and the head never saw its appends
      expect(head?.lastSeq).toBeLessThan((await logOf(t.world, t.run)).state.lastSeq);
      await t.world.clock.advance(head!.lease!.until - t.world.clock.now() + 1);
    });
    order.length = 0;
    const result = await step(b, tick);
    expect(result.outcome).not.toBe('fenced');
    expect(result.appended).toBeGreaterThan(0);
    // A lapsed lease: the read after the claim is made whatever the head says (the 'read after 0'
    // between is this test's own look at the log).
    expect(order).toEqual(['read after 0', 'claim', 'read after 0', `read after ${before}`]);
    await everyLookupOnceInOrder(t);
  });

  it('every sender that holds the head names its snapshot in the tick: start, handover, sweeper, API wake-ups', async () => {
    const { t, step } = await setup();
    const first = t.storage.queue.take();
    expect(first?.tick).toEqual({ ...t.run, hint: { snapshot: null } });
    await step(spawnWorker(t.world));
    expect(t.storage.queue.take()?.tick).toEqual({ ...t.run, hint: { snapshot: null } });
    const pointer = { seq: 3, key: 'snapshots/t/r/0000000003-x.json', sha256: 'e'.repeat(64), foldVersion: 1 };
    await t.storage.heads.setSnapshot(t.run, pointer);
    await requestCancel(t.worker.deps, t.run, 'user:test');
    expect(t.storage.queue.take()?.tick).toEqual({ ...t.run, hint: { snapshot: pointer } });
    // Due (an inbox item pending) once the hand-over's tick, recorded and never claimed here,
    // no longer holds the sweeper off: it wakes the run with the same hint.
    await t.world.clock.advance(SWEEP_QUEUED_MS + 1);
    await sweep(t.worker.deps);
    expect(t.storage.queue.take()?.tick).toEqual({ ...t.run, hint: { snapshot: pointer } });
  });
});
