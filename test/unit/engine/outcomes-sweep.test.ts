import { describe, expect, it } from 'vitest';
import { runStep } from '../../../lib/engine/step-runner.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { sweep } from '../../../lib/engine/sweep.js';
import { SWEEP_QUEUED_MS } from '../../../lib/ports/sweep-index.js';
import type { OutcomeNotice } from '../../../lib/ports/outcome-publisher.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { spawnWorker } from '../../../lib/testing/world.js';

describe('outcome notices and the sweeper', () => {
  it('publishes a terminal outcome once, and the sweeper leaves finished runs alone', async () => {
    const t = scriptedWorld({ tools: [], script: [{ text: 'the answer' }] });
    const notices: OutcomeNotice[] = [];
    const w = spawnWorker(t.world, undefined, {}, { publisher: { publish: async (n) => void notices.push(n) } });
    await startRun(w.deps, { ...t.run, agent: 'agent', input: 'go' });
    const done = await driveRun(t.world, t.run, { worker: () => w });
    expect(done.head.status).toBe('completed');
    expect(notices).toMatchObject([{ detailType: 'Agent Run Completed', runId: 'r', status: 'completed', summary: 'the answer' }]);
    expect(done.head.notifiedSeq).toBe(notices[0]!.seq);
    await t.world.clock.advance(3_600_000);
    expect(await sweep(w.deps)).toEqual({ woken: 0 });
  });

  it('repairs a lost enqueue: a running run whose tick vanished is woken by the sweeper', async () => {
    const t = scriptedWorld({ tools: [], script: [{ text: 'ok' }] });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    t.storage.queue.take(); // the tick is lost (crash between append and enqueue)
    expect(await sweep(t.worker.deps)).toEqual({ woken: 0 }); // not stalled yet
    await t.world.clock.advance(61_000);
    // Stalled, but the head says a tick was sent and none claimed: it may still be in a backlog.
    expect(await sweep(t.worker.deps)).toEqual({ woken: 0 });
    await t.world.clock.advance(SWEEP_QUEUED_MS - 61_000);
    expect(await sweep(t.worker.deps)).toEqual({ woken: 1 });
    const tick = t.storage.queue.take()!;
    const r = await runStep(t.worker.deps, tick.tick, { owner: 'w', deadlineAt: t.world.clock.now() + 300_000 });
    expect(r.outcome).toBe('ended');
  });
});

describe('duplicate and reordered ticks', () => {
  it('extra ticks neither repeat work nor append anything once the run is done', async () => {
    const t = scriptedWorld({ tools: [], script: [{ text: 'ok' }] });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    const tick = t.storage.queue.take()!.tick;
    const first = await runStep(t.worker.deps, tick, { owner: 'a', deadlineAt: t.world.clock.now() + 300_000 });
    expect(first.outcome).toBe('ended');
    const before = (await t.storage.log.read(t.run, { afterSeq: 0 })).events.length;
    for (const owner of ['b', 'c', 'd']) {
      const again = await runStep(spawnWorker(t.world).deps, tick, { owner, deadlineAt: t.world.clock.now() + 300_000 });
      expect(again).toMatchObject({ outcome: 'ended', appended: 0 });
    }
    expect((await t.storage.log.read(t.run, { afterSeq: 0 })).events.length).toBe(before);
  });

  it('a tick that arrives while another worker holds the lease is told to come back after it', async () => {
    const t = scriptedWorld({ tools: [], script: [{ text: 'ok' }] });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    await t.storage.heads.claimLease(t.run, { owner: 'other', now: t.world.clock.now(), ttlMs: 60_000 });
    const r = await runStep(t.worker.deps, t.run, { owner: 'me', deadlineAt: t.world.clock.now() + 300_000 });
    expect(r.outcome).toBe('busy');
    expect(r.retryAfterMs).toBeGreaterThan(60_000);
  });
});

describe('per-turn metrics', () => {
  it('reports turns, tokens, cost and model/tool latency through the metrics port', async () => {
    const t = scriptedWorld({ tools: [], script: [{ text: 'done' }] });
    const seen: Record<string, number> = {};
    const add = (name: string, v: number) => (seen[name] = (seen[name] ?? 0) + v);
    const metrics = { count: (n: string, v = 1) => add(n, v), duration: (n: string, ms: number) => add(n, ms + 1), cost: (usd: number) => add('CostUsd', usd) };
    const w = spawnWorker(t.world, undefined, {}, { metrics });
    await startRun(w.deps, { ...t.run, agent: 'agent', input: 'go' });
    await driveRun(t.world, t.run, { worker: () => w });
    expect(seen.Turns).toBeGreaterThanOrEqual(1);
    expect(seen.InputTokens).toBeGreaterThan(0);
    expect(seen.OutputTokens).toBeGreaterThan(0);
    expect(seen.CostUsd).toBeGreaterThan(0);
    expect(seen.ModelLatency).toBeGreaterThan(0);
  });
});
