import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineWorkflow } from '../../../lib/authoring/define-workflow.js';
import { StepFailedError } from '../../../lib/core/workflow-errors.js';
import { headOf } from '../control/helpers.js';
import { logOf } from '../engine/helpers.js';
import { startAndDrain, workflowWorld } from './world.js';

describe('ctx.step', () => {
  it('runs each step once, records its result, and completes with the output', async () => {
    const calls: string[] = [];
    const flow = defineWorkflow({
      name: 'orders',
      version: '1',
      input: z.object({ orderId: z.string() }),
      output: z.object({ total: z.number(), status: z.string() }),
      async run(ctx, input) {
        const order = await ctx.step('load', async () => {
          calls.push('load');
          return { id: input.orderId, lines: [3, 4] };
        }, { policy: 'rerun' });
        const total = await ctx.step('sum', () => {
          calls.push('sum');
          return order.lines.reduce((a, b) => a + b, 0);
        }, { policy: 'rerun' });
        const status = await ctx.step('mark', async (s) => {
          calls.push(`mark:${s.idempotencyKey}`);
          return 'marked';
        }, { policy: 'idempotency_key' });
        return { total, status };
      },
    });
    const t = workflowWorld({ workflows: [flow] });
    const { types, state, events } = await startAndDrain(t, 'orders', { orderId: 'o-1' });
    expect(calls).toEqual(['load', 'sum', 'mark:t1:wf-1:op-3']);
    // rerun steps: one write each; the keyed write: its started marker, then its result.
    expect(types).toEqual(['run_started', 'op_result', 'op_result', 'op_started', 'op_result', 'run_completed']);
    expect(events[1]).toMatchObject({ op: 1, kind: 'step', name: 'load', ok: true, attempt: 1, output: { kind: 'inline', value: { id: 'o-1', lines: [3, 4] } } });
    expect(state.outcome).toMatchObject({ type: 'completed', output: { kind: 'inline', value: { total: 7, status: 'marked' } } });
    expect((await headOf(t.world, t.run)).status).toBe('completed');
    expect(state.usage.steps).toBe(3);
  });

  it('a step that throws is retried with backoff (each retry recorded), then its error is catchable in the workflow', async () => {
    let attempts = 0;
    const flow = defineWorkflow({
      name: 'flaky',
      version: '1',
      async run(ctx) {
        try {
          await ctx.step('call', () => {
            attempts++;
            throw new Error(`boom ${attempts}`);
          }, { policy: 'rerun', retry: { maxAttempts: 3, initialIntervalSeconds: 10 } });
          return 'never';
        } catch (error) {
          if (!(error instanceof StepFailedError)) throw error;
          return `caught ${error.failure.code}: ${error.failure.message}`;
        }
      },
    });
    const t = workflowWorld({ workflows: [flow] });
    const first = await startAndDrain(t, 'flaky', {});
    expect(first.types).toEqual(['run_started', 'op_retry']);
    expect(first.events[1]).toMatchObject({ attempt: 1, error: { code: 'Error', message: 'boom 1' }, retryAt: t.world.clock.now() + 10_000 });
    expect((await headOf(t.world, t.run))).toMatchObject({ status: 'waiting', wakeAt: t.world.clock.now() + 10_000 });
    const { later } = await import('../control/helpers.js');
    await later(t.world, t.worker, 10_000, 1);
    await later(t.world, t.worker, 20_000, 2);
    const { types, state } = await logOf(t.world, t.run);
    expect(types).toEqual(['run_started', 'op_retry', 'op_retry', 'op_result', 'run_completed']);
    expect(attempts).toBe(3);
    expect(state.outcome).toMatchObject({ type: 'completed', answer: { kind: 'inline', value: 'caught Error: boom 3' } });
  });

  it('replays the code from the top over recorded results: a resumed run never runs a recorded step again', async () => {
    const ran: string[] = [];
    const flow = defineWorkflow({
      name: 'two',
      version: '1',
      async run(ctx) {
        const a = await ctx.step('a', () => (ran.push('a'), 1), { policy: 'rerun' });
        await ctx.sleep(3600);
        const b = await ctx.step('b', () => (ran.push('b'), 2), { policy: 'rerun' });
        return a + b;
      },
    });
    const t = workflowWorld({ workflows: [flow] });
    const first = await startAndDrain(t, 'two', {});
    expect(first.types).toEqual(['run_started', 'op_result', 'op_started']);
    expect(await headOf(t.world, t.run)).toMatchObject({ status: 'waiting', wakeAt: t.world.clock.now() + 3_600_000 });
    const { later } = await import('../control/helpers.js');
    await later(t.world, t.worker, 3_600_000, 1);
    const { types, state } = await logOf(t.world, t.run);
    expect(types).toEqual(['run_started', 'op_result', 'op_started', 'op_result', 'op_result', 'run_completed']);
    expect(ran).toEqual(['a', 'b']);
    expect(state.outcome).toMatchObject({ type: 'completed', output: { kind: 'inline', value: 3 } });
  });
});
