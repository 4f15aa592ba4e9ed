/**
 * A workflow for the inspector's workflow test (test/e2e/ui-workflows.test.ts), loaded by the local
 * stack's worker processes: `ship` runs a step whose result is markup meant to run in whatever
 * renders it, a child agent, then waits for the signal `shipped` (a JSON payload) and for an
 * approval, and returns what it got.
 */
import { z } from 'zod';
import { ScriptedModel, defineAgent, defineAgents, defineWorkflow, type Agents } from 'logbook';

/** Sets a global the test looks for: it must never be set. */
export const HOSTILE_NOTE = '<img src=x onerror="window.__xss=1">';

export function createAgents(): Agents {
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
  const models = { 'scripted:helper-v1': () => new ScriptedModel(Array.from({ length: 5 }, () => ({ text: 'packed' }))) };
  return defineAgents({ agents: [helper], workflows: [ship], models });
}

export default () => createAgents();
