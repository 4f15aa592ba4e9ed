import { z } from 'zod';
import {
  ScriptedModel,
  defineAgent,
  defineTool,
  sleepTool,
  waitForSignal,
  type AgentDefinition,
  type ModelRequest,
  type Price,
  type ScriptStep,
  type ScriptedTurn,
} from 'logbook';
import { supportTools } from './agent.js';
import type { SupportServices } from './services.js';

export const GUARDED_MODEL_ID = 'scripted:support-guarded-v1';
/** Refunds above this need a person's approval. */
export const APPROVAL_ABOVE_CENTS = 1000;

/**
 * `support-guarded`: the support agent with control over its runs. It emails a return label,
 * waits (holding no Lambda) for the warehouse to signal that the parcel came back, and only then
 * refunds; a refund above $10 waits for a person to approve, reject or edit it.
 */
export function guardedTools(services: SupportServices, options: { toolDelayMs?: number } = {}) {
  const [search, ticket, email] = supportTools(services, options);
  const refund = defineTool({
    name: 'issue_refund',
    version: '1.0.0',
    description: `Refund an order. Irreversible. Refunds above $${APPROVAL_ABOVE_CENTS / 100} need a person's approval.`,
    input: z.object({ orderId: z.string().min(1), amountCents: z.number().int().positive().max(100_000) }),
    policy: 'escalate',
    timeoutMs: 10_000,
    approval: (args) => args.amountCents > APPROVAL_ABOVE_CENTS,
    approvalTimeoutSeconds: 7 * 86_400,
    async execute({ orderId, amountCents }, ctx) {
      ctx.assertLeaseFresh();
      return services.refund(orderId, amountCents, { key: ctx.idempotencyKey, token: ctx.fencingToken, notAfter: ctx.notAfter });
    },
  });
  const waitForReturn = waitForSignal({
    name: 'wait_for_return',
    description: 'Wait until the warehouse confirms the returned parcel arrived (signal parcel_returned).',
    signal: 'parcel_returned',
    payload: z.object({ trackingId: z.string().min(3), condition: z.enum(['damaged', 'intact']) }).strict(),
    timeoutSeconds: 14 * 86_400,
  });
  return [search!, ticket!, email!, waitForReturn, refund, sleepTool({ maxSeconds: 3600 })];
}

function toolResult(request: ModelRequest, name: string): { ok: boolean; value: Record<string, unknown> } | undefined {
  const m = [...request.messages].reverse().find((x) => x.role === 'tool' && x.name === name);
  if (!m || m.role !== 'tool') return undefined;
  try {
    return { ok: !m.isError, value: JSON.parse(m.content) as Record<string, unknown> };
  } catch {
    return { ok: !m.isError, value: { text: m.content } };
  }
}

function damagedOrder(request: ModelRequest): { orderId: string; amountCents: number } {
  const orders = (toolResult(request, 'search_orders')?.value.orders as { orderId: string; amountCents: number; status: string }[] | undefined) ?? [];
  const order = orders.find((o) => o.status === 'delivered_damaged') ?? orders[0];
  return { orderId: order?.orderId ?? 'o_unknown', amountCents: order?.amountCents ?? 0 };
}

const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;

/**
 * The scripted conversation: look up, ticket + return label, wait for the parcel, refund (approval
 * above $10), answer; then answer each follow-up message. Each reply is a function of what the
 * run saw, so a rejection, an edit or a timeout each get their own answer.
 */
export function guardedScript(customer = 'c_77'): ScriptStep[] {
  const lastUser = (r: ModelRequest) => [...r.messages].reverse().find((m) => m.role === 'user');
  const followUp = (r: ModelRequest): ScriptedTurn => ({ text: `About "${lastUser(r)?.role === 'user' ? lastUser(r)?.content : ''}": your ticket stays open and we will email you within a day.` });
  return [
    { text: "Let me look up the customer's orders.", calls: [{ name: 'search_orders', args: { customer } }] },
    {
      text: 'Opening a ticket and emailing a return label.',
      calls: [
        { name: 'create_ticket', args: { subject: `Damaged order for ${customer}`, body: 'Refund once the parcel is back.' } },
        { name: 'send_email', args: { to: `${customer}@example.com`, subject: 'Your return label', body: 'Please send the damaged item back with the attached label.' } },
      ],
    },
    { text: 'Waiting for the parcel to come back.', calls: [{ name: 'wait_for_return', args: {} }] },
    (r) => {
      const parcel = toolResult(r, 'wait_for_return');
      if (!parcel?.ok) return { text: 'The parcel did not come back in time, so no refund was issued; the ticket stays open.' };
      return { text: `The parcel is back (${String(parcel.value.trackingId)}). Issuing the refund.`, calls: [{ name: 'issue_refund', args: damagedOrder(r) }] };
    },
    (r) => {
      const refund = toolResult(r, 'issue_refund');
      if (!refund) return followUp(r); // a follow-up after the no-refund answer
      if (!refund.ok) return { text: `The refund was not issued: ${String(refund.value.comment ?? refund.value.message ?? 'refused')}. I told ${customer}.` };
      const { orderId } = damagedOrder(r);
      const issued = [...r.messages].reverse().find((m) => m.role === 'assistant' && m.calls.some((c) => c.name === 'issue_refund'));
      const amount = issued?.role === 'assistant' ? Number((issued.calls.find((c) => c.name === 'issue_refund')?.args as { amountCents?: number }).amountCents ?? 0) : 0;
      return { text: `Refunded order ${orderId} (${dollars(amount)}) after the parcel came back, and emailed ${customer}.` };
    },
    followUp,
  ];
}

export interface GuardedAgentOptions {
  toolDelayMs?: number;
  version?: string;
  model?: { id: string; price: Price };
}

export function guardedAgent(services: SupportServices, options: GuardedAgentOptions = {}): AgentDefinition {
  return defineAgent({
    name: 'support-guarded',
    version: options.version ?? '1.0.0',
    model: options.model
      ? { id: options.model.id, maxOutputTokens: 1024, price: options.model.price }
      : { id: GUARDED_MODEL_ID, maxOutputTokens: 1024, price: { inputPerMTokUsd: 3, outputPerMTokUsd: 15 } },
    system: {
      version: 'g1',
      text: 'You are a careful support agent. Refund only after the damaged parcel is back; refunds above $10 need approval.',
    },
    tools: guardedTools(services, options),
    budgets: { maxSteps: 16, maxCostUsd: 1, deadlineSeconds: 30 * 86_400 },
    graceMs: 5_000,
  });
}

export function guardedModel(customer?: string): ScriptedModel {
  return new ScriptedModel(guardedScript(customer));
}
