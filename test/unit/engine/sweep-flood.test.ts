// A flood must not multiply itself through the sweeper: runs whose ticks wait in the queue's
// backlog are not woken while the tick is recorded as queued (SWEEP_QUEUED_MS), and after that
// each run gets spare ticks on a doubling back-off, not one per sweep pass. Counts only.
import { describe, expect, it } from 'vitest';
import { runStep } from '../../../lib/engine/step-runner.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { sweep } from '../../../lib/engine/sweep.js';
import { SWEEP_QUEUED_MS, SWEEP_STALL_MS, sweepBackoffMs } from '../../../lib/ports/sweep-index.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';

const PASS_MS = 2_000; // the local stack's sweep interval
const RUNS = 200;

describe('the sweeper under a flood', () => {
  it('sends each backlogged run a few spare ticks over 30 minutes, not one per pass', async () => {
    const t = scriptedWorld({ tools: [], script: [{ text: 'ok' }] });
    for (let i = 0; i < RUNS; i++) await startRun(t.worker.deps, { tenant: 't', runId: `flood-${i}`, agent: 'agent', input: 'go' });
    const queue = t.storage.stepQueue;
    expect(queue.messages).toHaveLength(RUNS);
    // Nobody takes a tick for 30 minutes (a backlog), while the sweeper runs every 2 s.
    const start = t.world.clock.now();
    const horizon = 30 * 60_000;
    let woken = 0;
    while (t.world.clock.now() - start < horizon) {
      await t.world.clock.advance(PASS_MS);
      woken += (await sweep(t.worker.deps, { limitPerShard: 1_000 })).woken;
    }
    // The schedule each run follows: the queued hold, then the back-off after each wake.
    const wakes: number[] = [];
    for (let at = SWEEP_QUEUED_MS, n = 1; at <= horizon; at += sweepBackoffMs(n), n++) wakes.push(at);
    expect(wakes.length).toBe(4); // 5, 7, 11 and 19 minutes
    expect(woken).toBe(RUNS * wakes.length);
    expect(queue.messages).toHaveLength(RUNS * (1 + wakes.length));
    // The old rule (a fresh tick per pass once stalled) would have sent this many per run.
    expect((horizon - SWEEP_STALL_MS) / PASS_MS).toBeGreaterThan(100 * wakes.length);
  });

  it('a spare tick from a pass that could not record its wake is the same message (FIFO dedupe)', async () => {
    const t = scriptedWorld({ tools: [], script: [{ text: 'ok' }] });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    t.storage.queue.take(); // lost
    await t.world.clock.advance(SWEEP_QUEUED_MS);
    const deps = { ...t.worker.deps, heads: Object.assign(Object.create(t.storage.heads) as typeof t.storage.heads, { markSwept: async () => false }) };
    expect(await sweep(deps)).toEqual({ woken: 1 });
    expect(await sweep(deps)).toEqual({ woken: 1 });
    expect(t.storage.stepQueue.sent).toBe(3); // the start tick and two sweeper sends
    expect(t.storage.stepQueue.messages.map((m) => m.dedupeId)).toEqual([`r:sweep:0:1:1`]);
  });

  it('a received tick ends the hold: a run whose worker died after claiming is woken after the stall time', async () => {
    const t = scriptedWorld({ tools: [], script: [{ text: 'ok' }] });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    t.storage.queue.take();
    await t.storage.heads.claimLease(t.run, { owner: 'died', now: t.world.clock.now(), ttlMs: 1_000 });
    await t.world.clock.advance(SWEEP_STALL_MS);
    expect(await sweep(t.worker.deps)).toEqual({ woken: 1 });
    // Woken again only after the back-off, and the fresh tick completes the run.
    await t.world.clock.advance(sweepBackoffMs(1) - 1);
    expect(await sweep(t.worker.deps)).toEqual({ woken: 0 });
    const tick = t.storage.queue.take()!;
    const r = await runStep(t.worker.deps, tick.tick, { owner: 'w', deadlineAt: t.world.clock.now() + 300_000 });
    expect(r.outcome).toBe('ended');
    await t.world.clock.advance(3_600_000);
    expect(await sweep(t.worker.deps)).toEqual({ woken: 0 });
  });
});
