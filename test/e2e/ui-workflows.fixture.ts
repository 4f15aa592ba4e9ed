/**
 * A workflow for the inspector's workflow test (test/e2e/ui-workflows.test.ts), loaded by the local
 * stack's worker processes: `ship` runs a step whose result is markup meant to run in whatever
 * renders it, a child agent, then waits for the signal `shipped` (a JSON payload) and for an
 * approval, and returns what it got. `charge` runs one escalate step as slow as CHARGE_DELAY_MS
 * (so a test can kill the worker inside it: a person then resolves op-1).
 */
import { z } from 'zod';
import { ScriptedModel, defineAgent, defineAgents, defineWorkflow, type Agents } from 'logbook';

/** Sets a global the test looks for: it must never be set. */
export const HOSTILE_NOTE = '<img src=x onerror="window.__xss=1">';

export function createAgents(env: Record<string, string | undefined> = process.env): Agents {
  const helper = defineAgent({
    name: 'helper',
    version: '1.0.0',
    model: { id: 'scripted:helper-v1', maxOutputTokens: 256, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
    system: { version: 'h1', text: 'Help.' },
    tools: [],
  });
  const ship = defineWorkflow({
    name: 'ship',
    version: '3',
    input: z.object({ order: z.string() }),
    async run(ctx, input) {
      const note = await ctx.step('lookup', () => ({ order: input.order, note: HOSTILE_NOTE }), { policy: 'rerun' });
      const help = await ctx.agent(helper, `pack ${input.order}`);
      const shipped = await ctx.waitForSignal('shipped', { payload: z.object({ tracking: z.string().min(3) }), timeoutSeconds: 3_600 });
      const approval = await ctx.approval('refund', { args: { amount: 5 } });
      return { note: note.note, help, tracking: shipped.timedOut ? null : shipped.payload.tracking, approved: approval.approved };
    },
  });
  const charge = defineWorkflow({
    name: 'charge',
    version: '1',
    input: z.object({ order: z.string() }),
    async run(ctx, input) {
      const receipt = await ctx.step(
        'charge',
        async () => {
          await new Promise((r) => setTimeout(r, Number(env.CHARGE_DELAY_MS ?? 0)));
          return { charged: input.order };
        },
        { policy: 'escalate', timeoutSeconds: 3 },
      );
      return { receipt };
    },
  });
  const models = { 'scripted:helper-v1': () => new ScriptedModel(Array.from({ length: 5 }, () => ({ text: 'packed' }))) };
  return defineAgents({ agents: [helper], workflows: [ship, charge], models });
}

export default () => createAgents();
