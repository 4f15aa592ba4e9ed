import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineWorkflow } from '../../../lib/authoring/define-workflow.js';
import { defineAgents } from '../../../lib/authoring/define-agents.js';
import { agentsWorld } from '../../../lib/testing/world.js';
import { effectLog } from '../../../lib/testing/side-effects.js';
import { formatHarnessReport, runCrashHarness } from '../../../lib/testing/crash-harness.js';

function refundWorld(broken = false) {
  const effects = effectLog();
  const flow = defineWorkflow({
    name: 'refunds',
    version: '1',
    input: z.object({ orderId: z.string(), lines: z.array(z.number()) }),
    output: z.object({ refunded: z.number(), checks: z.array(z.string()) }),
    async run(ctx, input) {
      const order = await ctx.step('load', () => ({ id: input.orderId, lines: input.lines }), { policy: 'rerun' });
      const checks = await ctx.map(order.lines, (line, i) => ctx.step(`check-${i}`, () => (line > 0 ? 'ok' : 'bad'), { policy: 'rerun' }), { concurrency: 2 });
      await ctx.sleep(60);
      const refunded = await ctx.step(
        'refund',
        (s) => {
          if (broken) effects.write('refund', 'the-refund');
          else effects.writeOnce('refund', s.idempotencyKey);
          return order.lines.reduce((a, b) => a + b, 0);
        },
        { policy: broken ? 'rerun' : 'idempotency_key' },
      );
      return { refunded, checks };
    },
  });
  const agents = defineAgents({ agents: [], workflows: [flow] });
  return { ...agentsWorld(agents), effects };
}

describe('the crash harness over a workflow', () => {
  it('holds at every crash point, pair and frozen worker: the same output, no refund twice', { timeout: 120_000 }, async () => {
    const report = await runCrashHarness({
      name: 'refunds',
      world: refundWorld,
      request: { tenant: 't', runId: 'wf-h', workflow: 'refunds', input: { orderId: 'o-1', lines: [2, 3, 5] } },
      sideEffects: (w) => w.effects.all(),
    });
    expect(report.failed, formatHarnessReport(report)).toBe(0);
    expect(report.points.length).toBeGreaterThan(20);
    expect(report.points.filter((p) => p.kind === 'pause').length).toBeGreaterThan(0);
    expect(report.baseline.answer).toEqual(JSON.stringify({ refunded: 10, checks: ['ok', 'ok', 'ok'] }));
  });
});

describe('the crash harness catches a workflow that is not safe to resume', () => {
  it('a refund that is not deduplicated, marked rerun, is refunded twice at some points', { timeout: 120_000 }, async () => {
    const report = await runCrashHarness({
      name: 'refunds-broken',
      world: () => refundWorld(true),
      request: { tenant: 't', runId: 'wf-h', workflow: 'refunds', input: { orderId: 'o-1', lines: [2, 3, 5] } },
      sideEffects: (w) => w.effects.all(),
    }, { doubleCrashStride: 0 });
    expect(report.failed).toBeGreaterThan(0);
    expect(formatHarnessReport(report)).toMatch(/refund/);
  });
});
