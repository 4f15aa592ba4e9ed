/**
 * The agents module of the chat tests (local stack worker processes, the browser page's server):
 * `refunds` streams its answers (the scripted model's pace, LOGBOOK_SCRIPTED_PACE_MS), looks an
 * order up, asks a person before it refunds, and answers follow-ups. Replies are chosen by the
 * turn, so a worker started after another was killed gives the same answer again.
 */
import { z } from 'zod';
import { ScriptedModel, defineAgent, defineAgents, defineTool } from 'logbook';

export const CHAT_MODEL_ID = 'scripted:chat-v1';

/** Long enough that a test can see it stream and kill the worker in the middle. */
export const FIRST_TEXT =
  'Let me look up your order first. I am checking the warehouse records, the carrier scans and the payment history, one after the other, so this takes a moment.';
export const SECOND_TEXT = 'Order 1001 arrived broken: I will refund the 42 EUR you paid.';
export const THIRD_TEXT = 'Done: 42 EUR are on their way back to your card (refund rf-1001).';
export const FOLLOW_UP_TEXT =
  'You are welcome. The refund shows on your statement within three to five working days; if it does not, write to me here and I will look at it again.';

export function chatAgents() {
  const lookup = defineTool({
    name: 'lookup_order',
    version: '1',
    description: 'Read an order.',
    input: z.object({ orderId: z.string() }),
    policy: 'rerun',
    timeoutMs: 5_000,
    async execute({ orderId }) {
      return { orderId, status: 'delivered', damaged: true, paidEur: 42 };
    },
  });
  const refund = defineTool({
    name: 'refund',
    version: '1',
    description: 'Refund an order. A person approves each refund.',
    input: z.object({ orderId: z.string(), amountEur: z.number() }),
    policy: 'escalate',
    timeoutMs: 5_000,
    approval: 'always',
    async execute({ orderId, amountEur }) {
      return { refundId: `rf-${orderId}`, amountEur };
    },
  });
  const agent = defineAgent({
    name: 'refunds',
    version: '1',
    model: { id: CHAT_MODEL_ID, maxOutputTokens: 512, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
    system: { version: 's1', text: 'You handle refunds.' },
    tools: [lookup, refund],
    graceMs: 1_000,
  });
  const model = () =>
    new ScriptedModel([
      { text: FIRST_TEXT, calls: [{ name: 'lookup_order', args: { orderId: '1001' } }] },
      { text: SECOND_TEXT, calls: [{ name: 'refund', args: { orderId: '1001', amountEur: 42 } }] },
      { text: THIRD_TEXT },
      { text: FOLLOW_UP_TEXT },
    ]);
  return defineAgents({ agents: [agent], models: { [CHAT_MODEL_ID]: model } });
}

export default () => chatAgents();
