import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineWorkflow } from '../../../lib/authoring/define-workflow.js';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { defineAgents } from '../../../lib/authoring/define-agents.js';
import { ScriptedModel } from '../../../lib/models/scripted-model.js';
import { agentsWorld } from '../../../lib/testing/world.js';
import { effectLog, resolveFromEffects } from '../../../lib/testing/side-effects.js';
import { answerWaits } from '../../../lib/testing/workflow-outside.js';
import { formatHarnessReport, runCrashHarness } from '../../../lib/testing/crash-harness.js';

/**
 * One workflow that asks for every kind of operation: a step under each of the four policies
 * (the writes go to an effect log: keyed, looked up by verify(), fenced for escalate), a sleep, a
 * signal and an approval the scripted outside world answers, a child agent, child workflows in a
 * ctx.map fan-out, and now/random/uuid.
 */
const classifier = defineAgent({
  name: 'classifier',
  version: '1',
  input: z.object({ text: z.string() }),
  model: { id: 'scripted:classifier', maxOutputTokens: 256, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
  system: { version: 'v1', text: 'Classify.' },
  tools: [],
  output: z.object({ category: z.string() }),
  budgets: { maxCostUsd: 0.05 },
});

const line = defineWorkflow({
  name: 'line',
  version: '1',
  input: z.object({ sku: z.string() }),
  async run(ctx, input) {
    return ctx.step('stock', () => input.sku.length, { policy: 'rerun' });
  },
});

function everyOpWorld() {
  const clock: { now?: () => number } = {};
  const effects = effectLog({ now: () => clock.now!() });
  const flow = defineWorkflow({
    name: 'every-op',
    version: '1',
    input: z.object({ skus: z.array(z.string()) }),
    async run(ctx, input) {
      const id = await ctx.uuid();
      const at = await ctx.now();
      const r = await ctx.random();
      const skus = await ctx.step('load', () => input.skus, { policy: 'rerun' });
      const reserved = await ctx.step('reserve', (s) => effects.writeOnce('reserve', s.idempotencyKey, 'reserved').detail as string, {
        policy: 'idempotency_key',
      });
      const charged = await ctx.step(
        'charge',
        (s) => {
          effects.writeFenced('charge', s.idempotencyKey, { token: s.fencingToken, notAfter: s.notAfter }, 'charged');
          return 'charged';
        },
        {
          policy: 'verify',
          async verify(s) {
            effects.fence('charge', s.idempotencyKey, s.fencingToken);
            return effects.find(s.idempotencyKey, 'charge') ? { status: 'landed', output: 'charged' } : { status: 'not_landed' };
          },
        },
      );
      const shipped = await ctx.step(
        'ship',
        (s) => {
          effects.writeFenced('ship', s.idempotencyKey, { token: s.fencingToken, notAfter: s.notAfter }, 'shipped');
          return 'shipped';
        },
        { policy: 'escalate' },
      );
      await ctx.sleep(60);
      const packed = await ctx.waitForSignal('packed', { payload: z.object({ box: z.string() }), timeoutSeconds: 3600 });
      const refund = await ctx.approval('refund', { args: { amount: 5 } });
      const verdict = await ctx.agent(classifier, { text: 'broken' });
      const lines = await ctx.map(skus, (sku) => ctx.workflow(line, { sku }), { concurrency: 2 });
      return {
        values: [typeof id, at instanceof Date, r >= 0 && r < 1],
        steps: [reserved, charged, shipped],
        box: packed.timedOut ? null : packed.payload.box,
        approved: refund.approved,
        verdict,
        lines,
      };
    },
  });
  const models = { 'scripted:classifier': () => new ScriptedModel(Array.from({ length: 50 }, () => ({ text: JSON.stringify({ category: 'refund' }) }))) };
  const agents = defineAgents({ agents: [classifier], workflows: [flow, line], models });
  const world = agentsWorld(agents);
  clock.now = () => world.clock.now();
  return { ...world, effects };
}

const scenario = {
  name: 'every-op',
  world: everyOpWorld,
  request: { tenant: 't', runId: 'wf-ops', workflow: 'every-op', input: { skus: ['a', 'bb', 'ccc'] } },
  sideEffects: (w: ReturnType<typeof everyOpWorld>) => w.effects.all(),
  resolver: (w: ReturnType<typeof everyOpWorld>) => resolveFromEffects(w.effects),
  outside: () => answerWaits({ signals: { packed: { box: 'b-1' } }, approvals: 'approve' }),
};

describe('the crash harness over every workflow operation kind', () => {
  it(
    'holds at every write, sampled pairs and frozen workers: same output, no write twice, budgets kept, stale writers refused',
    { timeout: 120_000 },
    async () => {
      const report = await runCrashHarness(scenario, { doubleCrashStride: 37, pausePoints: ['before-step', 'after-step'] });
      expect(report.failed, formatHarnessReport(report)).toBe(0);
      expect(report.baseline.answer).toEqual(
        JSON.stringify({
          values: ['string', true, true],
          steps: ['reserved', 'charged', 'shipped'],
          box: 'b-1',
          approved: true,
          verdict: { category: 'refund' },
          lines: [1, 2, 3],
        }),
      );
      const kinds = new Set(report.points.map((p) => p.kind));
      expect([...kinds].sort()).toEqual(['crash', 'double-crash', 'pause']);
      // Crash points at the writes of every operation kind, the inbox puts of the signal and the
      // approval among them; a worker frozen before and after each step's function under each
      // policy (woken after the takeover, it runs or records late: the fenced services and the
      // log refuse it).
      const labels = report.points.flatMap((p) => p.at.map((a) => a.label));
      expect(labels.some((l) => l.startsWith('before-inbox'))).toBe(true);
      const paused = report.points.filter((p) => p.kind === 'pause').map((p) => p.at[0]!.label);
      for (const step of ['load#op-4', 'reserve#op-5', 'charge#op-6', 'ship#op-7']) {
        expect(paused).toContain(`before-step:${step}`);
        expect(paused).toContain(`after-step:${step}`);
      }
      // The uninterrupted run wrote each effect once: every point is compared against it.
      expect(report.baseline.sideEffects).toBe(3);
    },
  );
});
