import { z } from 'zod';
import { ScriptedModel, defineAgent, defineTool, type AgentDefinition, type ModelRequest, type Price, type ScriptStep } from 'logbook';
import type { SupportServices } from './services.js';

export const SUPPORT_MODEL_ID = 'scripted:support-v1';

/** The articles' support agent: one tool per side-effect policy. */
export function supportTools(services: SupportServices, options: { toolDelayMs?: number } = {}) {
  const pause = (signal: AbortSignal) =>
    options.toolDelayMs
      ? new Promise<void>((resolve, reject) => {
          const t = setTimeout(resolve, options.toolDelayMs);
          signal.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
        })
      : Promise.resolve();
  return [
    defineTool({
      name: 'search_orders',
      version: '1.0.0',
      description: "List a customer's recent orders.",
      input: z.object({ customer: z.string().min(1) }),
      policy: 'rerun',
      timeoutMs: 10_000,
      async execute({ customer }, ctx) {
        await pause(ctx.signal);
        return { orders: services.searchOrders(customer, ctx.idempotencyKey) };
      },
    }),
    defineTool({
      name: 'create_ticket',
      version: '1.0.0',
      description: 'Open a support ticket. Deduplicated by idempotency key.',
      input: z.object({ subject: z.string().min(1), body: z.string() }),
      policy: 'idempotency_key',
      timeoutMs: 10_000,
      async execute({ subject, body }, ctx) {
        await pause(ctx.signal);
        return services.createTicket(subject, body, ctx.idempotencyKey);
      },
    }),
    defineTool({
      name: 'send_email',
      version: '1.0.0',
      description: 'Email the customer.',
      input: z.object({ to: z.string().email(), subject: z.string(), body: z.string() }),
      policy: 'verify',
      timeoutMs: 10_000,
      async execute({ to, subject, body }, ctx) {
        await pause(ctx.signal);
        return services.sendEmail(to, subject, body, ctx.idempotencyKey);
      },
      async verify(_args, ctx) {
        const found = services.findEmail(ctx.idempotencyKey);
        return found ? { status: 'landed', output: found } : { status: 'not_landed' };
      },
    }),
    defineTool({
      name: 'issue_refund',
      version: '1.0.0',
      description: 'Refund an order. Irreversible; cannot be looked up afterwards.',
      input: z.object({ orderId: z.string().min(1), amountCents: z.number().int().positive() }),
      policy: 'escalate',
      timeoutMs: 10_000,
      async execute({ orderId, amountCents }, ctx) {
        await pause(ctx.signal);
        return services.refund(orderId, amountCents, ctx.idempotencyKey);
      },
    }),
  ];
}

function firstOrderId(request: ModelRequest): string {
  for (const m of request.messages) {
    if (m.role === 'tool' && m.name === 'search_orders' && !m.isError) {
      const parsed = JSON.parse(m.content) as { orders?: { orderId: string }[] };
      const id = parsed.orders?.[0]?.orderId;
      if (id) return id;
    }
  }
  return 'o_unknown';
}

/** The scripted conversation: search, then ticket + email in parallel, then refund, then answer. */
export function supportScript(customer = 'c_77'): ScriptStep[] {
  return [
    { text: 'Let me look up the customer\'s orders.', calls: [{ name: 'search_orders', args: { customer } }] },
    {
      text: 'The first order arrived damaged. Opening a ticket and emailing the customer.',
      calls: [
        { name: 'create_ticket', args: { subject: `Damaged order for ${customer}`, body: 'Order arrived damaged; refund approved.' } },
        { name: 'send_email', args: { to: `${customer}@example.com`, subject: 'Your refund', body: 'We are refunding your damaged order.' } },
      ],
    },
    (request) => ({ text: 'Issuing the refund.', calls: [{ name: 'issue_refund', args: { orderId: firstOrderId(request), amountCents: 1299 } }] }),
    (request) => ({ text: `Refunded order ${firstOrderId(request)} ($12.99), opened a ticket and emailed ${customer}.` }),
  ];
}

export interface SupportAgentOptions {
  toolDelayMs?: number;
  version?: string;
  /** A real model (from LOGBOOK_MODEL) instead of the scripted one. */
  model?: { id: string; price: Price };
}

export function supportAgent(services: SupportServices, options: SupportAgentOptions = {}): AgentDefinition {
  return defineAgent({
    name: 'support',
    version: options.version ?? '1.0.0',
    model: options.model
      ? { id: options.model.id, maxOutputTokens: 1024, price: options.model.price }
      : { id: SUPPORT_MODEL_ID, maxOutputTokens: 1024, price: { inputPerMTokUsd: 3, outputPerMTokUsd: 15 } },
    system: { version: 'v14', text: 'You are a careful support agent. Use tools; never refund twice.' },
    tools: supportTools(services, options),
    budgets: { maxSteps: 12, maxCostUsd: 1 },
    graceMs: 5_000,
  });
}

export function supportModel(customer?: string): ScriptedModel {
  return new ScriptedModel(supportScript(customer));
}
