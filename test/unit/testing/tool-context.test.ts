import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, startRun, type ToolContext } from 'logbook';
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
    const test = toolTestContext({ tenant: 'acme', runId: 'run-7', callId: live.ctx.callId, attempt: live.ctx.attempt, fencingToken: live.ctx.fencingToken });
    const { abort, retry, signal, ...plain } = test;
    const { signal: liveSignal, ...livePlain } = live.ctx;
    expect(plain).toEqual(livePlain);
    expect(live.ctx.idempotencyKey).toBe('acme:run-7:3-0');
    // The fencing token is the lease epoch of the worker that ran the call.
    expect(live.epoch).toBeGreaterThan(0);
    expect(live.ctx.fencingToken).toBe(live.epoch);
    // Every field the engine hands a tool is in the test context too (a field added to
    // ToolContext fails here, and fails the typecheck of tool-context.ts).
    expect(Object.keys(test).filter((k) => k !== 'abort' && k !== 'retry').sort()).toEqual(Object.keys(live.ctx).sort());
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
