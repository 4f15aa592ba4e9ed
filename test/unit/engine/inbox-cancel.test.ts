import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { requestCancel, requestRunAction } from '../../../lib/engine/requests.js';
import { runStep } from '../../../lib/engine/step-runner.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { spawnWorker } from '../../../lib/testing/world.js';
import { logOf } from './helpers.js';

/** A tool that runs until aborted or released, recording how it ended. */
function slowTool(name: string, policy: 'rerun' | 'verify' | 'escalate', log: string[], release: Promise<void>) {
  return defineTool({
    name,
    version: '1',
    description: name,
    input: z.object({}),
    policy,
    timeoutMs: 100_000,
    ...(policy === 'verify' ? { verify: async () => ({ status: 'not_landed' as const }) } : {}),
    execute: (_a, ctx) =>
      new Promise((resolve, reject) => {
        ctx.signal.addEventListener('abort', () => {
          log.push(`${name}:aborted`);
          reject(ctx.signal.reason);
        });
        void release.then(() => {
          if (ctx.signal.aborted) return;
          log.push(`${name}:finished`);
          resolve('done');
        });
      }),
  });
}

describe('cancel and the inbox', () => {
  it('cancel during long calls: aborts rerun calls, lets escalate calls finish, then run_cancelled', async () => {
    const log: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const t = scriptedWorld({
      tools: [slowTool('read', 'rerun', log, released), slowTool('pay', 'escalate', log, released)],
      script: [{ calls: [{ name: 'read', args: {} }, { name: 'pay', args: {} }] }, { text: 'never' }],
    });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    const step = runStep(t.worker.deps, t.storage.queue.take()!.tick, { owner: 'w', deadlineAt: t.world.clock.now() + 300_000 });
    await new Promise((r) => setTimeout(r, 10));
    await requestCancel(t.worker.deps, t.run, 'alice', 'changed my mind');
    // The heartbeat notices the cancel in the inbox and aborts the read-only call at once.
    await t.world.clock.advance(20_001);
    await new Promise((r) => setTimeout(r, 10));
    expect(log).toEqual(['read:aborted']);
    release(); // the payment call finishes on its own
    await step;
    await driveRun(t.world, t.run, { worker: () => t.worker });
    const { state, types } = await logOf(t.world, t.run);
    expect(log).toEqual(['read:aborted', 'pay:finished']);
    expect(types.filter((x) => x === 'model_started')).toHaveLength(1); // no new calls after cancel
    expect(state.calls['3-0']!.result).toMatchObject({ ok: false, source: 'cancel' });
    expect(state.calls['3-1']!.result).toMatchObject({ ok: true, source: 'tool' });
    expect(state.outcome).toMatchObject({ type: 'cancelled', unresolved: [] });
  });

  it('cancel with an escalated call open lists it as unresolved', async () => {
    const t = scriptedWorld({
      tools: [defineTool({ name: 'pay', version: '1', description: 'p', input: z.object({}), execute: async () => 'paid' })],
      script: [{ calls: [{ name: 'pay', args: {} }] }, { text: 'x' }],
    });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    const dying = spawnWorker(t.world, { at: (p) => { if (p === 'after-tool') throw new Error('boom'); } });
    await runStep(dying.deps, t.storage.queue.take()!.tick, { owner: 'w1', deadlineAt: t.world.clock.now() + 300_000 }).catch(() => undefined);
    dying.kill();
    const w = spawnWorker(t.world);
    const parked = await driveRun(t.world, t.run, { worker: () => w });
    expect(parked.head.status).toBe('parked');
    await requestCancel(w.deps, t.run, 'ops');
    const done = await driveRun(t.world, t.run, { worker: () => w });
    expect(done.head.status).toBe('cancelled');
    const { state } = await logOf(t.world, t.run);
    expect(state.outcome).toMatchObject({ type: 'cancelled', unresolved: ['3-0'] });
    // The ended run lists nothing to answer (GET /runs/{id} shows the call under `unresolved`).
    expect(done.head.attention).toEqual([]);
  });

  it('each inbox item becomes an event exactly once, even when delivered twice', async () => {
    const t = scriptedWorld({ tools: [], script: [{ text: 'hi' }] });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    const item = { id: 'inbox-1', kind: 'cancel' as const, by: 'a' };
    await t.storage.inbox.put(t.run, item);
    await t.storage.inbox.put(t.run, item); // idempotent put
    // A worker crashes right after appending cancel_requested, before deleting the item.
    const dying = spawnWorker(t.world, { at: (p, d) => { if (p === 'after-append' && d.startsWith('cancel_requested')) throw new Error('crash'); } });
    await runStep(dying.deps, t.storage.queue.take()!.tick, { owner: 'w1', deadlineAt: t.world.clock.now() + 300_000 }).catch(() => undefined);
    dying.kill();
    const w = spawnWorker(t.world);
    await driveRun(t.world, t.run, { worker: () => w });
    const { types } = await logOf(t.world, t.run);
    expect(types.filter((x) => x === 'cancel_requested')).toHaveLength(1);
    expect(types.at(-1)).toBe('run_cancelled');
    expect(await t.storage.inbox.list(t.run)).toEqual([]);
  });

  it('a poison run parks on the head after repeated failed claims; retry clears it', async () => {
    const t = scriptedWorld({ tools: [], script: [{ text: 'hi' }] });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    const tick = t.storage.queue.take()!.tick;
    // Five workers die before appending anything.
    for (let i = 0; i < 5; i++) {
      const w = spawnWorker(t.world, { at: () => { throw new Error('segfault'); } });
      await runStep(w.deps, tick, { owner: `w${i}`, deadlineAt: t.world.clock.now() + 300_000 }).catch(() => undefined);
      w.kill();
      await t.world.clock.advance(61_000);
    }
    const w = spawnWorker(t.world);
    const r = await runStep(w.deps, tick, { owner: 'w-final', deadlineAt: t.world.clock.now() + 300_000 });
    expect(r.outcome).toBe('poisoned');
    expect((await t.storage.heads.getHead(t.run))?.park?.reason).toBe('poisoned');
    await requestRunAction(w.deps, t.run, 'retry', 'ops');
    const done = await driveRun(t.world, t.run, { worker: () => w });
    expect(done.head.status).toBe('completed');
  });

  it('a corrupt log parks the run for a person instead of crash-looping', async () => {
    const t = scriptedWorld({ tools: [], script: [{ text: 'hi' }] });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    t.storage.store.corrupt(t.run, 2, { v: 1, seq: 2, type: 'tool_result', garbage: true });
    const r = await runStep(t.worker.deps, t.storage.queue.take()!.tick, { owner: 'w', deadlineAt: t.world.clock.now() + 300_000 });
    expect(r.outcome).toBe('corrupt');
    const head = await t.storage.heads.getHead(t.run);
    expect(head).toMatchObject({ status: 'parked', park: { reason: 'corrupt_log' } });
    expect(head?.park?.detail).toMatch(/seq 2/);
    expect(t.storage.queue.take()).toBeUndefined(); // no re-enqueue, no loop
  });
});
