import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineWorkflow } from '../../../lib/authoring/define-workflow.js';
import { checkWorkflowDeterminism, formatDeterminismReport } from '../../../lib/testing/workflow-determinism.js';
import { answerWaits } from '../../../lib/testing/workflow-outside.js';
import { effectLog } from '../../../lib/testing/side-effects.js';

const steady = defineWorkflow({
  name: 'steady',
  version: '1',
  async run(ctx, input: { n: number }) {
    const a = await ctx.step('double', () => input.n * 2, { policy: 'rerun' });
    const at = await ctx.now();
    const r = await ctx.random();
    const signal = await ctx.waitForSignal('go', { payload: z.object({ ok: z.boolean() }), timeoutSeconds: 3600 });
    const ok = await ctx.approval('ship', { args: { a } });
    await ctx.sleep(30);
    // Branching on recorded values is deterministic: a replay sees the same ones.
    const branch = r < 0.5 ? await ctx.step('low', () => 'low', { policy: 'rerun' }) : await ctx.step('high', () => 'high', { policy: 'rerun' });
    return { a, year: at.getUTCFullYear() > 0, signalled: !signal.timedOut, approved: ok.approved, branch: typeof branch };
  },
});

const outside = () => answerWaits({ signals: { go: { ok: true } } });

describe('checkWorkflowDeterminism', () => {
  it('passes a deterministic workflow: every prefix of its log replays to the same operations and output, running nothing', async () => {
    let stepRuns = 0;
    const counted = defineWorkflow({
      name: 'counted',
      version: '1',
      async run(ctx) {
        await ctx.step('one', () => ++stepRuns, { policy: 'rerun' });
        return ctx.step('two', () => ++stepRuns, { policy: 'rerun' });
      },
    });
    const report = await checkWorkflowDeterminism({ workflow: counted, input: {} });
    expect(report.ok, formatDeterminismReport(report)).toBe(true);
    expect(stepRuns).toBe(2); // the live run's two; the replays ran none
    expect(report.status).toBe('completed');

    const full = await checkWorkflowDeterminism({ workflow: steady, input: { n: 2 }, outside });
    expect(full.ok, formatDeterminismReport(full)).toBe(true);
    expect(full.status).toBe('completed');
    expect(full.prefixes).toBeGreaterThan(8);
    expect(full.replays).toBe(2 * full.prefixes);
  });

  it('catches a workflow that branches on Math.random outside a step', async () => {
    const dice = defineWorkflow({
      name: 'dice',
      version: '1',
      async run(ctx) {
        await ctx.step('roll', () => 1, { policy: 'rerun' });
        if (Math.random() < 0.5) await ctx.step('heads', () => 'h', { policy: 'rerun' });
        else await ctx.step('tails', () => 't', { policy: 'rerun' });
        return 'done';
      },
    });
    const report = await checkWorkflowDeterminism({ workflow: dice, input: {} });
    expect(report.ok).toBe(false);
    expect(report.divergences[0]?.message).toMatch(/operation 2: the code asked for step "(heads|tails)" where the log holds step "(heads|tails)"/);
  });

  it('catches a workflow whose output depends on Date.now, even with no operation after it', async () => {
    const clocky = defineWorkflow({
      name: 'clocky',
      version: '1',
      async run(ctx) {
        await ctx.step('work', () => 1, { policy: 'rerun' });
        return { day: Math.floor(Date.now() / 86_400_000) };
      },
    });
    const report = await checkWorkflowDeterminism({ workflow: clocky, input: {} });
    expect(report.ok).toBe(false);
    expect(report.divergences.map((d) => d.message).join('\n')).toMatch(/the replay returned .* the run recorded/);
  });

  it('catches a side effect the code performs outside a step (it runs again on every replay)', async () => {
    const effects = effectLog();
    const leaky = defineWorkflow({
      name: 'leaky',
      version: '1',
      async run(ctx) {
        effects.write('email', 'hello');
        return ctx.step('work', () => 1, { policy: 'rerun' });
      },
    });
    const report = await checkWorkflowDeterminism({ workflow: leaky, input: {}, sideEffects: () => effects.all() });
    expect(report.ok).toBe(false);
    expect(report.divergences).toEqual([]);
    expect(report.sideEffectsDuringReplay).toBe(report.replays);
  });
});
