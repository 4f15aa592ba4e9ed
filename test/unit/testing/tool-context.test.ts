import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { StaleLeaseError, defineTool, type ToolContext } from 'logbook';
import { startRun } from 'logbook/engine';
import { driveRun, effectLog, scriptedWorld, ToolAbort, toolTestContext } from 'logbook/testing';

/** The contexts the engine itself hands a tool, captured from a real run. */
async function engineContexts(): Promise<{ ctx: ToolContext; epoch: number }[]> {
  const seen: { ctx: ToolContext; epoch: number }[] = [];
  const run = { tenant: 'acme', runId: 'run-7' };
  const storage: { heads?: { getHead(r: typeof run): Promise<{ lease?: { epoch: number } } | undefined> } } = {};
  const probe = defineTool({
    name: 'probe',
    version: '1',
    description: 'records its context',
    input: z.object({}),
    policy: 'rerun',
    async execute(_args, ctx) {
      // The lease epoch of the worker running this call, read from the run's head right now.
      const epoch = (await storage.heads?.getHead(run))?.lease?.epoch ?? -1;
      seen.push({ ctx: { ...ctx }, epoch });
      return null;
    },
  });
  const t = scriptedWorld({ tools: [probe], script: [{ calls: [{ name: 'probe', args: {} }] }, { text: 'done' }] });
  storage.heads = t.storage.heads;
  await startRun(t.worker.deps, { ...run, agent: 'agent', input: 'go' });
  const result = await driveRun(t.world, run, { worker: () => t.worker });
  expect(result.head.status).toBe('completed');
  return seen;
}

describe('toolTestContext', () => {
  it('builds the idempotency key and fencing token exactly as the engine does, with the same fields', async () => {
    const [live] = await engineContexts();
    if (!live) throw new Error('the probe tool never ran');
    const test = toolTestContext({
      tenant: 'acme',
      runId: 'run-7',
      callId: live.ctx.callId,
      attempt: live.ctx.attempt,
      fencingToken: live.ctx.fencingToken,
      notAfter: live.ctx.notAfter,
    });
    const { abort, retry, expireLease, signal, leaseFresh, assertLeaseFresh, ...plain } = test;
    const { signal: liveSignal, leaseFresh: liveFresh, assertLeaseFresh: liveAssert, ...livePlain } = live.ctx;
    expect(plain).toEqual(livePlain);
    expect(live.ctx.idempotencyKey).toBe('acme:run-7:3-0');
    // The fencing token is the lease epoch of the worker that ran the call.
    expect(live.epoch).toBeGreaterThan(0);
    expect(live.ctx.fencingToken).toBe(live.epoch);
    // Every field the engine hands a tool is in the test context too (a field added to
    // ToolContext fails here, and fails the typecheck of tool-context.ts).
    expect(Object.keys(test).filter((k) => !['abort', 'retry', 'expireLease'].includes(k)).sort()).toEqual(Object.keys(live.ctx).sort());
    expect([typeof leaseFresh, typeof assertLeaseFresh, typeof liveFresh, typeof liveAssert, typeof expireLease]).toEqual(Array(5).fill('function'));
    expect(signal).toBeInstanceOf(AbortSignal);
    expect(liveSignal).toBeInstanceOf(AbortSignal);
    expect(typeof abort).toBe('function');
    expect(typeof retry).toBe('function');
  });

  it('aborts with the reason the engine would set (timeout, cancel, lost lease), or the error given', () => {
    for (const why of ['timeout', 'cancel', 'lease_lost'] as const) {
      const ctx = toolTestContext();
      expect(ctx.signal.aborted).toBe(false);
      ctx.abort(why);
      expect(ctx.signal.aborted).toBe(true);
      expect(ctx.signal.reason).toBeInstanceOf(ToolAbort);
      expect((ctx.signal.reason as ToolAbort).why).toBe(why);
    }
    const ctx = toolTestContext();
    ctx.abort();
    expect((ctx.signal.reason as ToolAbort).why).toBe('timeout');
    const custom = toolTestContext();
    const error = new Error('socket closed');
    custom.abort(error);
    expect(custom.signal.reason).toBe(error);
  });

  it('lets a test abort a tool mid-call and see it stop', async () => {
    const slow = defineTool({
      name: 'slow',
      version: '1',
      description: 'waits for its signal',
      input: z.object({}),
      policy: 'rerun',
      execute: (_args, ctx) =>
        new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error), { once: true })),
    });
    const ctx = toolTestContext();
    const call = slow.execute({}, ctx);
    ctx.abort('cancel');
    await expect(call).rejects.toBeInstanceOf(ToolAbort);
  });

  it('answers the lease checks as the engine does: expired, lost, or past notAfter', () => {
    let t = 1_000;
    const ctx = toolTestContext({ now: () => t, notAfter: 5_000 });
    expect(ctx.leaseFresh()).toBe(true);
    expect(() => ctx.assertLeaseFresh()).not.toThrow();
    t = 5_000;
    expect(ctx.leaseFresh()).toBe(false);
    expect(() => ctx.assertLeaseFresh()).toThrow(StaleLeaseError);
    expect(() => ctx.assertLeaseFresh()).toThrow('test-tenant/test-run: call 3-0 is 0 ms past its deadline');
    const frozen = toolTestContext();
    frozen.expireLease('frozen past the lease');
    expect(frozen.signal.aborted).toBe(false); // nobody told the frozen worker
    expect(() => frozen.assertLeaseFresh()).toThrow(expect.objectContaining({ code: 'lease_stale', reason: 'frozen past the lease' }));
    const lost = toolTestContext();
    lost.abort('lease_lost');
    expect(lost.leaseFresh()).toBe(false);
    // A successor worker's attempt has a fresh lease and a new deadline.
    const next = frozen.retry();
    expect(next.leaseFresh()).toBe(true);
  });

  it('lets a test show that a tool checks its lease right before the irreversible moment', async () => {
    const ledger = effectLog();
    const charge = defineTool({
      name: 'charge',
      version: '1',
      description: 'irreversible',
      input: z.object({ amount: z.number() }),
      async execute({ amount }, ctx) {
        ctx.assertLeaseFresh();
        return ledger.write('charge', ctx.idempotencyKey, amount).applied;
      },
    });
    const ctx = toolTestContext();
    ctx.expireLease();
    await expect(charge.execute({ amount: 5 }, ctx)).rejects.toBeInstanceOf(StaleLeaseError);
    expect(ledger.all()).toEqual([]);
    expect(await charge.execute({ amount: 5 }, ctx.retry())).toBe(true);
  });

  it('retry() is the next attempt of the same call: same key, attempt + 1, higher fencing token, fresh signal', async () => {
    const first = toolTestContext({ tenant: 'acme', runId: 'r', callId: '5-1' });
    first.abort('lease_lost');
    const second = first.retry();
    expect(second).toMatchObject({ idempotencyKey: 'acme:r:5-1', attempt: 2, fencingToken: 2, callId: '5-1' });
    expect(second.signal.aborted).toBe(false);
    // What the retry is for: show that a keyed write lands once across attempts.
    const ledger = effectLog();
    const reserve = defineTool({
      name: 'reserve',
      version: '1',
      description: 'keyed write',
      input: z.object({ sku: z.string() }),
      policy: 'idempotency_key',
      async execute({ sku }, ctx) {
        return ledger.writeOnce('reserve', ctx.idempotencyKey, sku).applied;
      },
    });
    expect(await reserve.execute({ sku: 'mug' }, first)).toBe(true);
    expect(await reserve.execute({ sku: 'mug' }, second)).toBe(false);
    expect(ledger.all().filter((e) => e.applied)).toHaveLength(1);
  });
});
