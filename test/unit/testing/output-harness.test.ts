/**
 * The crash harness over an agent with an output schema, written with the public entry points:
 * a quote agent looks a price up, answers once with JSON that does not fit its schema, is told
 * so, and answers again with JSON that does. Every crash point, pair of points and frozen worker
 * must end with the same output; a resumed run continues the repair count from the log.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ScriptedModel, defineAgent, defineAgents, defineTool, type JsonValue, type ModelRequest } from 'logbook';
import { agentsWorld, effectLog, formatHarnessReport, resolveFromEffects, runCrashHarness, type EffectRecorder, type HarnessScenario, type World } from 'logbook/testing';
import { answerDiffers } from '../../../lib/testing/harness-invariants.js';

interface QuoteWorld extends World {
  effects: EffectRecorder<JsonValue>;
}

const Quote = z.object({ item: z.string(), priceUsd: z.number().positive(), ref: z.string() });
const toolText = (r: ModelRequest) => {
  const m = [...r.messages].reverse().find((x) => x.role === 'tool');
  return m?.role === 'tool' ? m.content : '';
};

/**
 * `refFromKey`: the fake price service makes its quote reference from ctx.idempotencyKey (which
 * holds the call id), and the model repeats it in its answer: the mistake the harness explains.
 */
function quoteScenario(options: { refFromKey?: boolean; maxRepairs?: number } = {}): HarnessScenario<QuoteWorld> {
  return {
    name: `quote${options.refFromKey ? ' (ref from the idempotency key)' : ''}`,
    world: () => {
      const effects = effectLog<JsonValue>();
      const price = defineTool({
        name: 'price',
        version: '1',
        description: 'The price of an item.',
        input: z.object({ item: z.string() }),
        policy: 'rerun',
        timeoutMs: 5_000,
        async execute({ item }, ctx) {
          effects.read('price', ctx.idempotencyKey, { item });
          return { item, priceUsd: 12.5, ref: options.refFromKey ? `q-${ctx.idempotencyKey}` : `q-${item}` };
        },
      });
      const agent = defineAgent({
        name: 'quote',
        version: '1',
        model: { id: 'scripted:quote', maxOutputTokens: 256, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
        system: { version: 'q1', text: 'You quote prices as JSON.' },
        tools: [price],
        graceMs: 1_000,
        output: { schema: Quote, maxRepairs: options.maxRepairs ?? 2 },
      });
      const model = () =>
        new ScriptedModel([
          { calls: [{ name: 'price', args: { item: 'mug' } }] },
          // First answer: a price as text, which the schema refuses.
          (r) => ({ text: JSON.stringify({ ...(JSON.parse(toolText(r)) as object), priceUsd: '12.50 USD' }) }),
          // After the repair message: the tool's result as it is.
          (r) => ({ text: toolText(r) }),
        ]);
      return { ...agentsWorld(defineAgents({ agents: [agent], models: { 'scripted:quote': model } })), effects };
    },
    request: { tenant: 't', runId: 'quote-1', agent: 'quote', input: 'How much is a mug?' },
    sideEffects: (world) => world.effects.all(),
    // Two crashes in a row around model calls park the run as model_stalled: a person retries.
    resolver: (world) => resolveFromEffects(world.effects),
  };
}

describe('crash harness over an agent with an output schema', () => {
  it('holds at every point with one invalid answer before a valid one; the baseline has the answer itself and the output', async () => {
    const report = await runCrashHarness(quoteScenario(), { doubleCrashStride: 5 });
    expect(report.failed, formatHarnessReport(report)).toBe(0);
    // The answer itself (not JSON-quoted text), and the parsed output as JSON.
    expect(report.baseline).toMatchObject({
      status: 'completed',
      answer: '{"item":"mug","priceUsd":12.5,"ref":"q-mug"}',
      output: { item: 'mug', priceUsd: 12.5, ref: 'q-mug' },
      steps: 3,
    });
    // The repair's own points were crashed at: the reservation of the repair call (step 3),
    // the invalid answer's and the valid answer's model_response appends.
    const labels = report.points.filter((p) => p.kind === 'crash').map((p) => p.at[0]?.label ?? '');
    expect(labels).toContain('before-model:step 3');
    expect(labels).toContain('after-model:step 3');
    expect(labels.filter((l) => l.startsWith('after-append:model_response')).length).toBe(3);
    expect(report.points.filter((p) => p.kind === 'double-crash').length).toBeGreaterThan(5);
  }, 120_000);

  it('explains an answer that differs only in call ids: a service that builds ids from ctx.idempotencyKey', async () => {
    const report = await runCrashHarness(quoteScenario({ refFromKey: true, maxRepairs: 2 }), { doubleCrashStride: 0, pausePoints: [] });
    const differs = report.points.flatMap((p) => p.failures).filter((f) => f.startsWith('answer '));
    expect(differs.length).toBeGreaterThan(0);
    for (const f of differs) {
      expect(f).toMatch(/^answer ".*q-t:quote-1:\d+-0.*" differs from the uninterrupted ".*q-t:quote-1:3-0.*": they differ only in call ids \(3-0 → \d+-0\)\./);
      expect(f).toMatch(/ctx\.idempotencyKey/);
    }
  }, 120_000);
});

describe('answerDiffers', () => {
  const run = { tenant: 't', runId: 'r' };
  it('explains call ids, and only call ids', () => {
    expect(answerDiffers('Booked bk-t:r:5-0', 'Booked bk-t:r:3-0', run)).toMatch(/they differ only in call ids \(3-0 → 5-0\)\. A call id is <seq of the model response>-<index>, and the idempotency key is t:r:<callId>/);
    // Other differences are not explained away as call ids.
    expect(answerDiffers('Booked room 12', 'Booked room 14', run)).toBe('answer "Booked room 12" differs from the uninterrupted "Booked room 14"');
    expect(answerDiffers('Booked 5-0, room 12', 'Booked 3-0, room 14', run)).not.toMatch(/call ids/);
    // A date is not a call id.
    expect(answerDiffers('on 2026-01-02', 'on 2026-01-03', run)).not.toMatch(/call ids/);
  });
});
