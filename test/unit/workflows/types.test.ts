import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineWorkflow, type ApprovalOutcome, type SignalResult, type WorkflowContext } from 'logbook';

const typed = defineAgent({
  name: 'typed',
  version: '1',
  input: z.object({ text: z.string() }),
  model: { id: 'scripted:x', maxOutputTokens: 10 },
  system: { version: 'v', text: 't' },
  tools: [],
  output: z.object({ category: z.enum(['a', 'b']) }),
});
const plain = defineAgent({ name: 'plain', version: '1', model: { id: 'scripted:x', maxOutputTokens: 10 }, system: { version: 'v', text: 't' }, tools: [] });
const child = defineWorkflow({
  name: 'child',
  version: '1',
  input: z.object({ n: z.number() }),
  output: z.object({ doubled: z.number() }),
  run: async (_ctx, input) => ({ doubled: input.n * 2 }),
});

describe('workflow types', () => {
  it('types a workflow end to end: input, output, child agents and workflows, signals, approvals, steps', () => {
    defineWorkflow({
      name: 'parent',
      version: '1',
      input: z.object({ orderId: z.string() }),
      output: z.object({ ok: z.boolean() }),
      async run(ctx, input) {
        expectTypeOf(ctx).toEqualTypeOf<WorkflowContext>();
        expectTypeOf(input).toEqualTypeOf<{ orderId: string }>();
        const verdict = await ctx.agent(typed, { text: input.orderId });
        expectTypeOf(verdict).toEqualTypeOf<{ category: 'a' | 'b' }>();
        const answer = await ctx.agent(plain, 'hello');
        expectTypeOf(answer).toEqualTypeOf<string>();
        const doubled = await ctx.workflow(child, { n: 2 });
        expectTypeOf(doubled).toEqualTypeOf<{ doubled: number }>();
        // @ts-expect-error the child's input schema wants n
        await ctx.workflow(child, { m: 2 });
        const signal = await ctx.waitForSignal('go', { payload: z.object({ amount: z.number() }), timeoutSeconds: 60 });
        expectTypeOf(signal).toEqualTypeOf<SignalResult<{ amount: number }>>();
        const approval = await ctx.approval('refund', { args: { cents: 10 } });
        expectTypeOf(approval).toEqualTypeOf<ApprovalOutcome<{ cents: number }>>();
        const n = await ctx.step('n', () => 3);
        expectTypeOf(n).toEqualTypeOf<number>();
        const [a, b] = await ctx.all([ctx.step('a', () => 'x'), ctx.step('b', async () => 1)]);
        expectTypeOf(a).toEqualTypeOf<string>();
        expectTypeOf(b).toEqualTypeOf<number>();
        const mapped = await ctx.map([1, 2], (i) => ctx.step(`m${i}`, () => i > 1));
        expectTypeOf(mapped).toEqualTypeOf<boolean[]>();
        return { ok: verdict.category === 'a' };
      },
    });
  });

  it('refuses a return value that does not fit the output schema', () => {
    defineWorkflow({
      name: 'bad',
      version: '1',
      output: z.object({ ok: z.boolean() }),
      // @ts-expect-error run must return the output's shape
      run: async () => ({ ok: 'yes' }),
    });
  });
});
