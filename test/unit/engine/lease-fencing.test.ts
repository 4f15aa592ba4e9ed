// The tool-side fence: ctx.leaseFresh() / ctx.assertLeaseFresh() answer from the clock alone
// (last successful renewal vs lease minus margin, and the call's deadline), so a worker that was
// frozen notices on waking; and a lease counts from the claim, not from when the keeper started.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { StaleLeaseError, defineTool, type ToolContext } from '../../../lib/index.js';
import { runStep, startRun } from '../../../lib/engine/index.js';
import { scriptedWorld, spawnWorker } from '../../../lib/testing/index.js';
import { logOf } from './helpers.js';

const LEASE = { leaseMs: 10_000, marginMs: 2_000 };

/** A verify-policy tool that hands its context to the test and waits until told to act. */
function heldTool(timeoutMs = 5_000) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let ctx!: ToolContext;
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  const outcome: { fresh: boolean[]; error?: unknown; acted: number } = { fresh: [], acted: 0 };
  const tool = defineTool({
    name: 'act',
    version: '1',
    description: 'an irreversible act',
    input: z.object({}),
    policy: 'verify',
    timeoutMs,
    async execute(_args, c) {
      ctx = c;
      outcome.fresh.push(c.leaseFresh());
      started();
      await gate;
      try {
        c.assertLeaseFresh();
        outcome.acted++;
        return { done: true };
      } catch (error) {
        outcome.error = error;
        throw error;
      }
    },
    verify: async () => ({ status: outcome.acted > 0 ? 'landed' : 'not_landed', ...(outcome.acted > 0 ? { output: { done: true } } : {}) }) as never,
  });
  return { tool, release, running, outcome, ctx: () => ctx };
}

const script = [{ calls: [{ name: 'act', args: {} }] }, { text: 'finished' }];

describe('the tool-side lease check', () => {
  it('turns false once renewals stop for longer than the lease minus the margin; the stale call is left to its policy', async () => {
    const held = heldTool(30_000);
    const { world, run } = scriptedWorld({ tools: [held.tool], script });
    const worker = spawnWorker(world, undefined, { config: LEASE });
    await startRun(worker.deps, { ...run, agent: 'agent', input: 'go' });
    const tick = world.storage.queue.take()?.tick ?? run;
    const step = runStep(worker.deps, tick, { owner: worker.name, deadlineAt: world.clock.now() + 300_000 });
    await held.running;
    expect(held.outcome.fresh).toEqual([true]);
    expect(held.ctx().notAfter).toBe(world.clock.now() + 30_000);
    // The process freezes: its renewals stop going out while the clock moves on.
    const thaw = worker.freeze();
    await world.clock.advance(LEASE.leaseMs - LEASE.marginMs - 1);
    expect(held.ctx().leaseFresh()).toBe(true);
    await world.clock.advance(2);
    expect(held.ctx().leaseFresh()).toBe(false);
    thaw();
    held.release();
    await step;
    expect(held.outcome.acted).toBe(0);
    expect(held.outcome.error).toBeInstanceOf(StaleLeaseError);
    expect((held.outcome.error as StaleLeaseError).code).toBe('lease_stale');
    // Nothing was recorded for the call: its policy decides later (verify: not landed, so it runs again).
    const { types } = await logOf(world, run);
    expect(types.filter((t) => t === 'tool_result')).toEqual([]);
  });

  it("is false once the call's deadline has passed, even while the lease renews", async () => {
    const held = heldTool();
    const { world, run } = scriptedWorld({ tools: [held.tool], script });
    const worker = spawnWorker(world, undefined, { config: { leaseMs: 60_000, marginMs: 5_000 } });
    await startRun(worker.deps, { ...run, agent: 'agent', input: 'go' });
    const step = runStep(worker.deps, world.storage.queue.take()?.tick ?? run, { owner: worker.name, deadlineAt: world.clock.now() + 300_000 });
    await held.running;
    await world.clock.advance(4_999);
    expect(held.ctx().leaseFresh()).toBe(true);
    await world.clock.advance(1);
    expect(held.ctx().leaseFresh()).toBe(false);
    held.release();
    await step;
    expect(held.outcome.acted).toBe(0);
  });

  it('counts the lease from the claim: a worker frozen right after claiming starts no call', async () => {
    const held = heldTool();
    const { world, run } = scriptedWorld({ tools: [held.tool], script });
    // The claim lands, then the process stalls past the lease before it builds its lease keeper.
    const heads = new Proxy(world.storage.heads, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (prop !== 'claimLease' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
        return async (...args: unknown[]) => {
          const grant = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          await world.clock.advance(LEASE.leaseMs + 1);
          return grant;
        };
      },
    });
    const worker = spawnWorker(world, undefined, { config: LEASE }, { heads });
    await startRun(worker.deps, { ...run, agent: 'agent', input: 'go' });
    held.release(); // were a call started anyway, it would act at once
    const result = await runStep(worker.deps, world.storage.queue.take()?.tick ?? run, { owner: worker.name, deadlineAt: world.clock.now() + 300_000 });
    expect(result.appended).toBe(0);
    const { types } = await logOf(world, run);
    expect(types).toEqual(['run_started']);
    expect(held.outcome.acted).toBe(0);
  });
});
