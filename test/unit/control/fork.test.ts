import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { foldLog } from '../../../lib/core/fold.js';
import type { ModelRequest } from '../../../lib/core/messages.js';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { WorkerHalt, type Checkpoints } from '../../../lib/engine/checkpoints.js';
import { forkRun, type ForkRequest } from '../../../lib/engine/fork.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { spawnWorker } from '../../../lib/testing/world.js';
import { haltAt, logOf } from '../engine/helpers.js';
import { drain, headOf } from './helpers.js';

const lastTool = (r: ModelRequest) => [...r.messages].reverse().find((m) => m.role === 'tool');

/**
 * v1's fetch_invoice is broken; v2 fixes it (and takes an optional currency, so its schema, and
 * its hash, differ); v3 requires a currency the copied calls never had.
 */
function invoiceWorld(options: { inlineLimitBytes?: number } = {}) {
  const keys: string[] = [];
  const search = defineTool({
    name: 'search_orders',
    version: '1',
    description: 'Find orders.',
    input: z.object({ customer: z.string() }),
    policy: 'rerun',
    async execute({ customer }, ctx) {
      keys.push(`search ${ctx.idempotencyKey}`);
      return { orders: [{ id: 'o-1', note: 'x'.repeat(options.inlineLimitBytes ? options.inlineLimitBytes * 2 : 1) }], customer };
    },
  });
  const broken = defineTool({
    name: 'fetch_invoice',
    version: '1',
    description: 'Fetch an invoice.',
    input: z.object({ orderId: z.string() }),
    policy: 'rerun',
    async execute(_args, ctx) {
      keys.push(`broken ${ctx.idempotencyKey}`);
      throw new Error('TypeError: cannot read properties of undefined (reading "total")');
    },
  });
  const fixed = defineTool({
    name: 'fetch_invoice',
    version: '2',
    description: 'Fetch an invoice.',
    input: z.object({ orderId: z.string(), currency: z.string().optional() }),
    policy: 'rerun',
    async execute({ orderId }, ctx) {
      keys.push(`fixed ${ctx.idempotencyKey}`);
      return { orderId, totalCents: 1299 };
    },
  });
  const strict = defineTool({ ...fixed, version: '3', input: z.object({ orderId: z.string(), currency: z.string() }) });
  const t = scriptedWorld({
    tools: [search, broken],
    budgets: { maxSteps: 3 },
    script: [
      { calls: [{ name: 'search_orders', args: { customer: 'c_77' } }] },
      (r) => {
        const last = lastTool(r);
        if (r.system.includes('terse')) return { text: 'Order o-1 found.' }; // v2's prompt takes another path
        if (last?.name === 'fetch_invoice' && !last.isError) return { text: `invoice: ${last.content}` };
        return { calls: [{ name: 'fetch_invoice', args: { orderId: 'o-1' } }] };
      },
    ],
  });
  const spec = { name: 'agent', model: t.agent.model, system: t.agent.system, budgets: { maxSteps: 3 }, graceMs: 1_000 };
  t.world.registry.register(defineAgent({ ...spec, version: '2', tools: [search, fixed] }));
  t.world.registry.register(defineAgent({ ...spec, version: '2-terse', system: { version: 'p2', text: 'Be terse.' }, tools: [search, fixed] }));
  t.world.registry.register(defineAgent({ ...spec, version: '3', tools: [search, strict] }));
  const worker = options.inlineLimitBytes ? spawnWorker(t.world, undefined, { inlineLimitBytes: options.inlineLimitBytes }) : t.worker;
  return { ...t, worker, keys };
}

/** A source run that failed: the broken tool errs until the step budget runs out. */
async function failedSource(options: Parameters<typeof invoiceWorld>[0] = {}) {
  const t = invoiceWorld(options);
  await startRun(t.worker.deps, { ...t.run, agent: 'agent', version: '1', input: 'invoice for c_77' });
  await drain(t.world, t.worker);
  const { state, types } = await logOf(t.world, t.run);
  expect(state.outcome).toMatchObject({ type: 'failed', code: 'budget_exceeded:steps' });
  // 1 run_started, 2-3 the first model call, 4-5 search (its result carries the next call's
  // reservation), 6-8 and 9-11 two broken invoice turns, 12 run_failed.
  expect(types).toEqual(['run_started', 'model_started', 'model_response', 'tool_started', 'tool_result', 'model_response', 'tool_started', 'tool_result', 'model_response', 'tool_started', 'tool_result', 'run_failed']);
  return t;
}

const forkOf = (t: { run: { tenant: string; runId: string } }, more: Partial<ForkRequest> & { atSeq: number }): ForkRequest => ({ tenant: t.run.tenant, from: t.run.runId, ...more });

describe('fork / rerun from a step', () => {
  it('reruns a failed run from its last good step after a tool fix: nothing copied runs again, new calls get the fork\'s keys', async () => {
    const t = await failedSource();
    const source = await logOf(t.world, t.run);
    const out = await forkRun(t.worker.deps, forkOf(t, { atSeq: 5, runId: 'fixed-1', version: '2' }));
    expect(out).toEqual({ runId: 'fixed-1', created: true, status: 'running', forkedFrom: { runId: 'r', seq: 5 } });
    const keysBefore = [...t.keys];
    await drain(t.world, t.worker);
    const fork = await logOf(t.world, { tenant: 't', runId: 'fixed-1' });
    expect(fork.events[0]).toMatchObject({ type: 'run_started', runId: 'fixed-1', agent: { version: '2' }, forkedFrom: { runId: 'r', seq: 5 } });
    // The copied prefix is the source's, seq for seq (so call ids stay valid), except the next
    // model call's reservation on the last result: that call is the fork's own.
    expect(source.events[4]).toHaveProperty('reservation');
    expect(fork.events.slice(1, 5).map(({ by: _by, ...e }) => e)).toEqual(source.events.slice(1, 5).map(({ by: _by, reservation: _r, ...e }) => e));
    expect(fork.events[5]).toMatchObject({ type: 'model_started', step: 2 });
    expect(fork.state.outcome).toMatchObject({ type: 'completed', answer: { value: 'invoice: {"orderId":"o-1","totalCents":1299}' } });
    // search_orders ran once, in the source; the fork's new call carries the fork's run id.
    expect(t.keys.slice(keysBefore.length)).toEqual(['fixed t:fixed-1:7-0']);
    expect(t.keys.filter((k) => k.startsWith('search'))).toEqual(['search t:r:3-0']);
  });

  it('counts the copied usage in the fork\'s budgets: no fork gets a fresh budget', async () => {
    const t = await failedSource();
    const source = await logOf(t.world, t.run);
    // At the boundary: before the next model call, so without the reservation the last result carried.
    const { reservation: _next, ...boundary } = source.events[4]!;
    const prefixUsage = foldLog([...source.events.slice(0, 4), boundary]).usage;
    expect(prefixUsage.steps).toBe(1);
    await forkRun(t.worker.deps, forkOf(t, { atSeq: 5, runId: 'f-usage', version: '2' }));
    const head = await headOf(t.world, { tenant: 't', runId: 'f-usage' });
    expect(head.usage).toEqual(prefixUsage);
    expect(head.budgets?.maxSteps).toBe(3);
    await drain(t.world, t.worker);
    const fork = await logOf(t.world, { tenant: 't', runId: 'f-usage' });
    expect(fork.state.usage.steps).toBe(3); // 1 copied + 2 of its own, within the source's 3
    // Without the fix the fork fails exactly as the source did, on the same budget.
    await forkRun(t.worker.deps, forkOf(t, { atSeq: 5, runId: 'f-broken' }));
    await drain(t.world, t.worker);
    const broken = await logOf(t.world, { tenant: 't', runId: 'f-broken' });
    expect(broken.state.outcome).toMatchObject({ type: 'failed', code: 'budget_exceeded:steps' });
    expect(broken.state.usage.steps).toBe(3);
  });

  it('tries another path from a step (a re-pinned prompt), and reruns from the start with another input', async () => {
    const t = await failedSource();
    await forkRun(t.worker.deps, forkOf(t, { atSeq: 5, runId: 'terse', version: '2-terse' }));
    await forkRun(t.worker.deps, forkOf(t, { atSeq: 1, runId: 'again', input: 'invoice for c_88 instead' }));
    await drain(t.world, t.worker);
    const terse = await logOf(t.world, { tenant: 't', runId: 'terse' });
    expect(terse.state.outcome).toMatchObject({ type: 'completed', answer: { value: 'Order o-1 found.' } });
    const again = await logOf(t.world, { tenant: 't', runId: 'again' });
    expect(again.events[0]).toMatchObject({ input: { value: 'invoice for c_88 instead' }, forkedFrom: { seq: 1 } });
    expect(again.events.length).toBeGreaterThan(1);
    expect(t.keys).toContain('search t:again:3-0');
  });

  it('refuses a point that is not a turn boundary with a 409 naming the call', async () => {
    const t = await failedSource();
    await expect(forkRun(t.worker.deps, forkOf(t, { atSeq: 4 }))).rejects.toMatchObject({
      code: 'fork_conflict',
      message: 'seq 4 is not a turn boundary: call 3-0 (search_orders) started and has no result there',
    });
    await expect(forkRun(t.worker.deps, forkOf(t, { atSeq: 3 }))).rejects.toThrow('call 3-0 has no result there');
    await expect(forkRun(t.worker.deps, forkOf(t, { atSeq: 2 }))).rejects.toThrow('the model call at seq 2 has no response there');
    await expect(forkRun(t.worker.deps, forkOf(t, { atSeq: 12 }))).rejects.toThrow('seq 12 is run_failed, the end of the run');
    await expect(forkRun(t.worker.deps, forkOf(t, { atSeq: 99 }))).rejects.toMatchObject({ code: 'validation_error', issues: [{ path: 'atSeq', message: 'the log ends at seq 12' }] });
    await expect(forkRun(t.worker.deps, forkOf(t, { atSeq: 5, version: '9' }))).rejects.toMatchObject({ code: 'validation_error', issues: [{ path: 'version' }] });
    await expect(forkRun(t.worker.deps, { tenant: 't', from: 'nope', atSeq: 1 })).rejects.toMatchObject({ code: 'run_not_found' });
    await expect(forkRun(t.worker.deps, { tenant: 'other', from: 'r', atSeq: 1 })).rejects.toMatchObject({ code: 'run_not_found' });
  });

  it('refuses to re-pin a version whose schemas a copied call does not fit (409 naming the call)', async () => {
    const t = await failedSource();
    await expect(forkRun(t.worker.deps, forkOf(t, { atSeq: 8, version: '3' }))).rejects.toMatchObject({
      code: 'fork_conflict',
      message: expect.stringMatching(/^call 6-0 \(fetch_invoice\) does not fit fetch_invoice@3 of agent@3: currency: /),
    });
  });

  it('is idempotent on its runId; the same id with another request is a 409', async () => {
    const t = await failedSource();
    const first = await forkRun(t.worker.deps, forkOf(t, { atSeq: 5, runId: 'same', version: '2' }));
    const again = await forkRun(t.worker.deps, forkOf(t, { atSeq: 5, runId: 'same', version: '2' }));
    expect([first.created, again.created]).toEqual([true, false]);
    expect((await logOf(t.world, { tenant: 't', runId: 'same' })).events).toHaveLength(5);
    await expect(forkRun(t.worker.deps, forkOf(t, { atSeq: 1, runId: 'same' }))).rejects.toMatchObject({ code: 'run_conflict' });
    await expect(forkRun(t.worker.deps, forkOf(t, { atSeq: 5, runId: 'r' }))).rejects.toMatchObject({ code: 'run_conflict' });
  });

  it('survives a crash at every point halfway through its creation: the retry finishes the same fork', async () => {
    const reference = await failedSource();
    await forkRun(reference.worker.deps, forkOf(reference, { atSeq: 8, runId: 'ref' }));
    const expected = (await logOf(reference.world, { tenant: 't', runId: 'ref' })).events;
    const labels: string[] = [];
    const counting: Checkpoints = { at: (p, d) => void labels.push(`${p}:${d}`) };
    const probe = await failedSource();
    await forkRun(spawnWorker(probe.world, counting).deps, forkOf(probe, { atSeq: 8, runId: 'ref' }));
    expect(labels).toHaveLength(16); // before and after each of the 8 appends
    for (let i = 0; i < labels.length; i++) {
      const t = await failedSource();
      let n = 0;
      const dying = spawnWorker(t.world, { at: () => { if (n++ === i) throw new WorkerHalt(labels[i] ?? ''); } });
      await expect(forkRun(dying.deps, forkOf(t, { atSeq: 8, runId: 'ref' }))).rejects.toBeInstanceOf(WorkerHalt);
      dying.kill();
      // Until the retry, nothing can run it: no head, no tick.
      expect(await t.storage.heads.getHead({ tenant: 't', runId: 'ref' }), labels[i]).toBeUndefined();
      const retry = await forkRun(t.worker.deps, forkOf(t, { atSeq: 8, runId: 'ref' }));
      expect(retry.created, labels[i]).toBe(i === 0);
      const events = (await logOf(t.world, { tenant: 't', runId: 'ref' })).events;
      const strip = (list: typeof events) => list.map(({ at: _a, by: _b, ...e }) => e);
      expect(strip(events), labels[i]).toEqual(strip(expected));
      expect(new Set(events.map((e) => JSON.stringify(e.by))).size, labels[i]).toBe(1);
      await drain(t.world, t.worker);
      expect((await headOf(t.world, { tenant: 't', runId: 'ref' })).status, labels[i]).toBe('failed');
    }
  });

  it('shares payload references with the source instead of copying them', async () => {
    const t = await failedSource({ inlineLimitBytes: 200 });
    const source = await logOf(t.world, t.run);
    const body = source.events[4]?.output as { kind: string; key?: string };
    expect(body.kind).toBe('blob');
    await forkRun(t.worker.deps, forkOf(t, { atSeq: 5, runId: 'shared', version: '2' }));
    const fork = await logOf(t.world, { tenant: 't', runId: 'shared' });
    expect(fork.events[4]?.output).toEqual(body);
    await drain(t.world, t.worker);
    expect((await logOf(t.world, { tenant: 't', runId: 'shared' })).state.outcome?.type).toBe('completed');
  });

  it('costs one write per copied event plus four requests, however long the source ran past atSeq', async () => {
    const t = await failedSource();
    const store = t.storage.store;
    for (const atSeq of [5, 8]) {
      const before = store.stats.requests;
      await forkRun(t.worker.deps, forkOf(t, { atSeq, runId: `cost-${atSeq}` }));
      // head, one page of the prefix, atSeq appends, the fork's head (put, read back); the tick is SQS.
      expect(store.stats.requests - before).toBe(atSeq + 4);
    }
  });

  it('a worker crash right after the fork is created resumes it like any run', async () => {
    const t = await failedSource();
    await forkRun(t.worker.deps, forkOf(t, { atSeq: 5, runId: 'crashy', version: '2' }));
    const dying = spawnWorker(t.world, haltAt('before-tool'));
    await expect(drain(t.world, dying)).rejects.toThrow('worker halted');
    await t.world.clock.advance(61_000);
    await t.storage.queue.enqueue({ tenant: 't', runId: 'crashy' }, { dedupeId: 'again' });
    await drain(t.world, t.worker);
    const fork = await logOf(t.world, { tenant: 't', runId: 'crashy' });
    expect(fork.state.outcome?.type).toBe('completed');
  });
});
