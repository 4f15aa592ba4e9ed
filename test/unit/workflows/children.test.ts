import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineWorkflow } from '../../../lib/authoring/define-workflow.js';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { ScriptedModel } from '../../../lib/models/scripted-model.js';
import { ChildRunFailedError } from '../../../lib/core/workflow-errors.js';
import { requestCancel } from '../../../lib/engine/requests.js';
import { drain, headOf } from '../control/helpers.js';
import { logOf } from '../engine/helpers.js';
import { startAndDrain, workflowWorld } from './world.js';

const Verdict = z.object({ category: z.enum(['refund', 'reject']), confidence: z.number() });
const classifier = defineAgent({
  name: 'classifier',
  version: '1',
  input: z.object({ text: z.string() }),
  model: { id: 'scripted:classifier', maxOutputTokens: 256, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
  system: { version: 'v1', text: 'Classify the complaint.' },
  tools: [],
  output: Verdict,
  budgets: { maxCostUsd: 0.05 },
});
const models = { 'scripted:classifier': () => new ScriptedModel(Array.from({ length: 20 }, () => ({ text: JSON.stringify({ category: 'refund', confidence: 0.9 }) }))) };

const line = defineWorkflow({
  name: 'line-check',
  version: '1',
  input: z.object({ sku: z.string() }),
  output: z.object({ sku: z.string(), ok: z.boolean() }),
  async run(ctx, input) {
    const ok = await ctx.step('stock', () => input.sku !== 'gone', { policy: 'rerun' });
    return { sku: input.sku, ok };
  },
});

const triage = defineWorkflow({
  name: 'triage',
  version: '1',
  input: z.object({ text: z.string(), skus: z.array(z.string()) }),
  async run(ctx, input) {
    const verdict = await ctx.agent(classifier, { text: input.text }, { budgets: { maxCostUsd: 0.01 } });
    const lines = await ctx.map(input.skus, (sku) => ctx.workflow(line, { sku }), { concurrency: 2 });
    return { verdict, lines };
  },
});

describe('child runs from a workflow', () => {
  it('runs a child agent (structured output) and child workflows in a bounded map, each awaited without a Lambda', async () => {
    const t = workflowWorld({ workflows: [triage, line], agents: [classifier], models });
    await startAndDrain(t, 'triage', { text: 'it arrived broken', skus: ['a', 'b', 'gone'] });
    const { state, events } = await logOf(t.world, t.run);
    expect(state.outcome).toMatchObject({
      type: 'completed',
      output: {
        kind: 'inline',
        value: { verdict: { category: 'refund', confidence: 0.9 }, lines: [{ sku: 'a', ok: true }, { sku: 'b', ok: true }, { sku: 'gone', ok: false }] },
      },
    });
    const agentStart = events.find((e) => e.type === 'op_started' && e.op === 1);
    expect(agentStart).toMatchObject({ kind: 'child', name: 'classifier', wait: { kind: 'child', runId: 'wf-1-cop-1', definition: { kind: 'agent', name: 'classifier', version: '1' } } });
    // The child's budget was carved out of the parent's, and what it spent replaced the reservation.
    expect((agentStart as unknown as { wait: { reserved: { costUsd: number } } }).wait.reserved.costUsd).toBe(0.01);
    const child = await logOf(t.world, { tenant: 't1', runId: 'wf-1-cop-1' });
    expect(child.state.started.parent).toEqual({ runId: 'wf-1', callId: 'op-1' });
    expect(state.usage.costUsd).toBeCloseTo(child.state.usage.costUsd, 12);
    // Concurrency 2: the third child starts only after one of the first two answered.
    const starts = events.filter((e) => e.type === 'op_started' && e.kind === 'child' && e.name === 'line-check').map((e) => e.seq);
    const firstAnswer = events.find((e) => e.type === 'op_result' && e.name === 'line-check')!.seq;
    expect(starts).toHaveLength(3);
    expect(starts[1]!).toBeLessThan(firstAnswer);
    expect(starts[2]!).toBeGreaterThan(firstAnswer);
  });

  it('a child that cannot start (bad input) fails its operation; the workflow can catch it', async () => {
    const flow = defineWorkflow({
      name: 'bad-child',
      version: '1',
      async run(ctx) {
        try {
          await ctx.agent(classifier, { text: 42 } as never);
          return 'started';
        } catch (error) {
          return error instanceof ChildRunFailedError ? `refused: ${error.failure.code}` : 'other';
        }
      },
    });
    const t = workflowWorld({ workflows: [flow], agents: [classifier], models });
    const { state } = await startAndDrain(t, 'bad-child', {});
    expect(state.outcome).toMatchObject({ type: 'completed', answer: { kind: 'inline', value: 'refused: child_input_invalid' } });
  });

  it('cancelling the workflow cascades to a child that waits', async () => {
    const waiter = defineWorkflow({
      name: 'waiter',
      version: '1',
      async run(ctx) {
        await ctx.waitForSignal('go', { payload: z.object({}), timeoutSeconds: 86_400 });
        return 'went';
      },
    });
    const parent = defineWorkflow({
      name: 'parent',
      version: '1',
      async run(ctx) {
        return ctx.workflow(waiter, {});
      },
    });
    const t = workflowWorld({ workflows: [parent, waiter] });
    await startAndDrain(t, 'parent', {});
    expect((await headOf(t.world, { tenant: 't1', runId: 'wf-1-cop-1' })).status).toBe('waiting');
    await requestCancel(t.worker.deps, t.run, 'ops', 'stop');
    await drain(t.world, t.worker);
    expect((await headOf(t.world, t.run)).status).toBe('cancelled');
    expect((await headOf(t.world, { tenant: 't1', runId: 'wf-1-cop-1' })).status).toBe('cancelled');
  });
});
