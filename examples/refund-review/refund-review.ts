/**
 * The refund review workflow: code around one agent. It looks the order up, asks a classifier
 * agent for a structured verdict, checks every line of the order (a bounded fan-out), waits up to
 * three days for a manager when the refund is large, refunds (the payment service dedupes by
 * the step's idempotency key), emails the customer (verify: the mailbox is asked whether the
 * message landed before a cut-off send is repeated), sleeps, and follows up.
 */
import { z } from 'zod';
import { ScriptedModel, defineAgent, defineWorkflow, type ModelRequest } from 'logbook';
import type { RefundServices } from './refund-services.js';

/** Refunds above this many cents wait for a manager's `manager-approval` signal. */
export const APPROVAL_THRESHOLD_CENTS = 50_000;
/** How long the review waits for that signal before it declines the refund. */
export const APPROVAL_TIMEOUT_SECONDS = 3 * 86_400;
export const CLASSIFIER_MODEL_ID = 'scripted:refund-classifier';

export const Verdict = z.object({
  decision: z.enum(['refund', 'reject']),
  category: z.enum(['damaged', 'wrong_item', 'not_needed', 'other']),
  confidence: z.number().min(0).max(1),
});
export type Verdict = z.infer<typeof Verdict>;

export const classifier = defineAgent({
  name: 'refund-classifier',
  version: '1.0.0',
  input: z.object({ orderId: z.string(), reason: z.string() }),
  model: { id: CLASSIFIER_MODEL_ID, maxOutputTokens: 256, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
  system: { version: 'v1', text: 'Classify the refund request. Refund damaged or wrong items and items the customer no longer needs.' },
  tools: [],
  output: Verdict,
  budgets: { maxCostUsd: 0.05 },
});

/** The classifier's scripted model: a verdict that is a pure function of the request's text. */
export function classifierModel(): ScriptedModel {
  const verdict = (request: ModelRequest): Verdict => {
    const text = request.messages
      .map((m) => (m.role === 'user' ? m.content : ''))
      .join(' ')
      .toLowerCase();
    const category = /damag|broken|crack/.test(text)
      ? 'damaged'
      : /wrong/.test(text)
        ? 'wrong_item'
        : /need|changed my mind/.test(text)
          ? 'not_needed'
          : 'other';
    return { decision: category === 'other' ? 'reject' : 'refund', category, confidence: category === 'other' ? 0.4 : 0.9 };
  };
  return new ScriptedModel([(request) => ({ text: JSON.stringify(verdict(request)) })]);
}

export const RefundInput = z.object({
  orderId: z.string().min(1),
  reason: z.string().min(1),
  /** How long after the refund the follow-up goes out. Two days; the demo passes a few seconds. */
  followUpAfterSeconds: z
    .number()
    .int()
    .min(1)
    .default(2 * 86_400),
});

export const RefundOutput = z.object({
  orderId: z.string(),
  status: z.enum(['refunded', 'rejected', 'declined', 'not_found']),
  refundedCents: z.number().int(),
  refundId: z.string().optional(),
  approvedBy: z.string().optional(),
  verdict: Verdict.optional(),
});

/** Steps short enough that a killed worker's step is taken up again within seconds (demo). */
const STEP_TIMEOUT_SECONDS = 10;

export function refundReview(services: RefundServices) {
  return defineWorkflow({
    name: 'refund-review',
    version: '1.0.0',
    description: 'Look up the order, classify the request, check its lines, ask a manager above the threshold, refund, email, follow up.',
    input: RefundInput,
    output: RefundOutput,
    graceMs: 1_000,
    async run(ctx, input) {
      // A read: rerun after a crash, one event per lookup.
      const order = await ctx.step('look up order', (step) => services.lookUpOrder(step, input.orderId), {
        policy: 'rerun',
        timeoutSeconds: STEP_TIMEOUT_SECONDS,
      });
      if (!order) return { orderId: input.orderId, status: 'not_found' as const, refundedCents: 0 };

      // A judgement, from a child agent run with a structured output.
      const verdict = await ctx.agent(classifier, { orderId: order.orderId, reason: input.reason });
      if (verdict.decision === 'reject') return { orderId: order.orderId, status: 'rejected' as const, refundedCents: 0, verdict };

      // Every line checked, two at a time; only returned lines are refunded.
      const checks = await ctx.map(
        order.lines,
        (line) =>
          ctx.step(`check ${line.sku}`, (step) => services.checkLine(step, order.orderId, line), { policy: 'rerun', timeoutSeconds: STEP_TIMEOUT_SECONDS }),
        { concurrency: 2 },
      );
      const cents = checks.filter((c) => c.ok).reduce((sum, c) => sum + c.cents, 0);

      let approvedBy: string | undefined;
      if (cents > APPROVAL_THRESHOLD_CENTS) {
        // Holds no Lambda while it waits: the run sleeps in the table until the signal or the timeout.
        const answer = await ctx.waitForSignal('manager-approval', {
          payload: z.object({ approved: z.boolean(), note: z.string().optional() }),
          timeoutSeconds: APPROVAL_TIMEOUT_SECONDS,
        });
        if (answer.timedOut || !answer.payload.approved) return { orderId: order.orderId, status: 'declined' as const, refundedCents: 0, verdict };
        approvedBy = answer.sentBy;
      }

      // A write the payment service dedupes: after a crash it runs again with the same key.
      const { refundId } = await ctx.step('refund', (step) => services.refund(step, order.orderId, cents), {
        policy: 'idempotency_key',
        timeoutSeconds: STEP_TIMEOUT_SECONDS,
      });

      // A write that can be looked up: a cut-off send is checked in the mailbox before it is repeated.
      await ctx.step('email confirmation', (step) => services.send(step, 'confirmation', order.email, `Your refund ${refundId} is on its way`), {
        policy: 'verify',
        timeoutSeconds: STEP_TIMEOUT_SECONDS,
        verify: async (step) => {
          const sent = services.findMessage(step);
          return sent ? { status: 'landed', output: sent } : { status: 'not_landed' };
        },
      });

      await ctx.sleep(input.followUpAfterSeconds);

      await ctx.step('follow up', (step) => services.send(step, 'follow-up', order.email, 'Did your refund arrive?'), {
        policy: 'verify',
        timeoutSeconds: STEP_TIMEOUT_SECONDS,
        verify: async (step) => {
          const sent = services.findMessage(step);
          return sent ? { status: 'landed', output: sent } : { status: 'not_landed' };
        },
      });
      return { orderId: order.orderId, status: 'refunded' as const, refundedCents: cents, refundId, verdict, ...(approvedBy ? { approvedBy } : {}) };
    },
  });
}
