// Forking a workflow run: the copy continues from the copied results (nothing before the fork
// point runs again), every operation after it runs under the fork's own keys, the source is
// untouched; a fork point with an operation in flight, a replaced input past seq 1 and a version
// that is not registered are refused before anything is written.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineWorkflow } from '../../../lib/authoring/define-workflow.js';
import { ValidationError } from '../../../lib/core/errors.js';
import { requestSignal } from '../../../lib/engine/control-requests.js';
import { ForkConflictError } from '../../../lib/engine/control-errors.js';
import { forkRun } from '../../../lib/engine/fork.js';
import { nothingWritten } from '../agents/agent-world.js';
import { drain, headOf } from '../control/helpers.js';
import { logOf } from '../engine/helpers.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { workflowWorld } from './world.js';

function refunds(calls: string[], version = '1') {
  return defineWorkflow({
    name: 'refund',
    version,
    input: z.strictObject({ order: z.string() }),
    output: z.object({ charged: z.string(), note: z.string() }),
    async run(ctx, input) {
      const order = await ctx.step('load', () => {
        calls.push(`load:${input.order}`);
        return { id: input.order, amount: 40 };
      }, { policy: 'rerun' });
      const charged = await ctx.step('refund', (s) => {
        calls.push(`refund:${s.idempotencyKey}`);
        return `refunded ${order.amount} (v${version})`;
      }, { policy: 'idempotency_key' });
      const ok = await ctx.waitForSignal('checked', { payload: z.object({ note: z.string() }), timeoutSeconds: 3600 });
      const note = ok.timedOut ? 'timed out' : ok.payload.note;
      await ctx.step('notify', () => {
        calls.push(`notify:${note}`);
      }, { policy: 'rerun' });
      return { charged, note };
    },
  });
}

async function completedSource(calls: string[], extra: ReturnType<typeof refunds>[] = []) {
  const t = workflowWorld({ workflows: [refunds(calls), ...extra] });
  await startRun(t.worker.deps, { ...t.run, workflow: 'refund', version: '1', input: { order: 'o-1' } });
  await drain(t.world, t.worker);
  await requestSignal(t.worker.deps, t.run, { signal: 'checked', payload: { note: 'fine' } }, 'alice');
  await drain(t.world, t.worker);
  const source = await logOf(t.world, t.run);
  expect(source.state.outcome?.type).toBe('completed');
  return { t, source };
}

/** seq of the first event of the workflow's operation named `name`. */
function seqOfOp(events: readonly { type: string; seq: number; name?: string }[], name: string): number {
  const first = events.find((e) => (e.type === 'op_started' || e.type === 'op_result') && e.name === name);
  if (!first) throw new Error(`no operation ${name}`);
  return first.seq;
}

describe('forking a workflow run', () => {
  it('continues from the copied results: steps before the fork point do not run again, later ones run under the fork’s keys', async () => {
    const calls: string[] = [];
    const { t, source } = await completedSource(calls);
    expect(calls).toEqual(['load:o-1', 'refund:t1:wf-1:op-2', 'notify:fine']);
    calls.length = 0;

    // Before the signal wait: load and refund are copied, the fork waits for its own signal.
    const atSeq = seqOfOp(source.events, 'checked') - 1;
    const fork = await forkRun(t.worker.deps, { tenant: 't1', from: 'wf-1', atSeq, runId: 'wf-1-again' });
    expect(fork).toMatchObject({ runId: 'wf-1-again', created: true, forkedFrom: { runId: 'wf-1', seq: atSeq } });
    await drain(t.world, t.worker);
    const forkRef = { tenant: 't1', runId: 'wf-1-again' };
    expect((await headOf(t.world, forkRef))?.status).toBe('waiting');
    await requestSignal(t.worker.deps, forkRef, { signal: 'checked', payload: { note: 'second look' } }, 'bob');
    await drain(t.world, t.worker);
    const forked = await logOf(t.world, forkRef);
    expect(forked.state.outcome).toMatchObject({ type: 'completed', output: { kind: 'inline', value: { charged: 'refunded 40 (v1)', note: 'second look' } } });
    // Nothing copied ran again; only the operation after the fork point did.
    expect(calls).toEqual(['notify:second look']);
    expect(forked.events[0]).toMatchObject({ type: 'run_started', forkedFrom: { runId: 'wf-1', seq: atSeq }, agent: { name: 'refund', version: '1' } });
    // The source is untouched.
    expect((await logOf(t.world, t.run)).events).toHaveLength(source.events.length);

    // Before the refund step: it runs again, under the fork's idempotency key, never the source's.
    calls.length = 0;
    const beforeRefund = seqOfOp(source.events, 'refund') - 1;
    await forkRun(t.worker.deps, { tenant: 't1', from: 'wf-1', atSeq: beforeRefund, runId: 'wf-1-b' });
    await drain(t.world, t.worker);
    expect(calls).toEqual(['refund:t1:wf-1-b:op-2']);
  });

  it('at seq 1 with a new input runs from the top; a new input past seq 1, a bad input and an unknown version are refused, writing nothing', async () => {
    const calls: string[] = [];
    const { t, source } = await completedSource(calls);
    calls.length = 0;
    await forkRun(t.worker.deps, { tenant: 't1', from: 'wf-1', atSeq: 1, runId: 'top', input: { order: 'o-2' } });
    await drain(t.world, t.worker);
    expect(calls).toEqual(['load:o-2', 'refund:t1:top:op-2']);

    const later = seqOfOp(source.events, 'checked') - 1;
    await expect(forkRun(t.worker.deps, { tenant: 't1', from: 'wf-1', atSeq: later, runId: 'f2', input: { order: 'o-3' } })).rejects.toThrow(
      /input can be replaced only by a fork at seq 1/,
    );
    await expect(forkRun(t.worker.deps, { tenant: 't1', from: 'wf-1', atSeq: 1, runId: 'f3', input: { order: 3 } })).rejects.toBeInstanceOf(ValidationError);
    await expect(forkRun(t.worker.deps, { tenant: 't1', from: 'wf-1', atSeq: later, runId: 'f4', version: '9' })).rejects.toMatchObject({
      issues: [{ path: 'version', message: 'not registered' }],
    });
    await expect(forkRun(t.worker.deps, { tenant: 't1', from: 'wf-1', atSeq: source.events.length, runId: 'f5' })).rejects.toThrow(/end of the run/);
    for (const runId of ['f2', 'f3', 'f4', 'f5']) expect(await nothingWritten(t.world, { tenant: 't1', runId })).toBe(true);
  });

  it('refuses a fork point where an operation is in flight, naming it and where to fork instead', async () => {
    const { t, source } = await completedSource([]);
    // The refund step's started marker: its function was running there.
    const marker = source.events.find((e) => e.type === 'op_started' && (e as { name?: string }).name === 'refund')!;
    const error = await forkRun(t.worker.deps, { tenant: 't1', from: 'wf-1', atSeq: marker.seq, runId: 'mid' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForkConflictError);
    expect((error as Error).message).toMatch(new RegExp(`operation 2 \\(step refund\\) is in flight there; fork at seq ${marker.seq - 1}`));
    expect(await nothingWritten(t.world, { tenant: 't1', runId: 'mid' })).toBe(true);
  });

  it('re-pins another registered version: the copied results are replayed by the new code', async () => {
    const calls: string[] = [];
    const { t, source } = await completedSource(calls, [refunds([], '2')]);
    const atSeq = seqOfOp(source.events, 'checked') - 1;
    await forkRun(t.worker.deps, { tenant: 't1', from: 'wf-1', atSeq, runId: 'v2', version: '2' });
    await drain(t.world, t.worker);
    const forkRef = { tenant: 't1', runId: 'v2' };
    await requestSignal(t.worker.deps, forkRef, { signal: 'checked', payload: { note: 'ok' } }, 'bob');
    await drain(t.world, t.worker);
    const forked = await logOf(t.world, forkRef);
    expect(forked.events[0]).toMatchObject({ agent: { name: 'refund', version: '2' } });
    // The refund's result was copied from the v1 run: v2 did not run it again.
    expect(forked.state.outcome).toMatchObject({ type: 'completed', output: { kind: 'inline', value: { charged: 'refunded 40 (v1)', note: 'ok' } } });
  });
});
