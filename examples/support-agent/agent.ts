import { z } from 'zod';
import { LogbookError, ScriptedModel, defineAgent, defineTool, type AgentDefinition, type ModelRequest, type Price, type ScriptStep, type ToolContext } from 'logbook';
import type { CallStamp, SupportServices } from './services.js';

export const SUPPORT_MODEL_ID = 'scripted:support-v1';
/** With SUPPORT_FAULTS=1, a run whose id ends so has a lookup that kills its worker every time. */
export const POISON_RUN_SUFFIX = '-poison';
/** With SUPPORT_FAULTS=1, a run whose id ends so has a lookup that fails every time. */
export const FAILING_RUN_SUFFIX = '-failing';

export interface SupportToolOptions {
  /** How long each tool's own work takes before it calls its service (the demo's --tool-delay). */
  toolDelayMs?: number;
  /** Replaces the delay: the tool's own work (tests freeze a call here, before its lease check). */
  work?: (tool: string, ctx: ToolContext) => Promise<void>;
  /** Scripted faults of the order lookup, by run (the chaos command's poison and broken runs). */
  faults?: SupportFaults;
}

/**
 * Faults `npm run chaos` scripts into one run each: a lookup that kills its worker process every
 * time it runs (poison: no worker survives it), and a lookup that fails every time (a tool error).
 */
export interface SupportFaults {
  /** search_orders of this run kills the process it runs in, every time. */
  killsWorker?: (runId: string) => boolean;
  /** search_orders of this run throws OrdersUnavailableError, every time. */
  fails?: (runId: string) => boolean;
  /** How the lookup kills its worker (default: SIGKILL to its own process). */
  kill?: () => void;
}

/** The order service is down for this lookup (scripted by SupportFaults). */
export class OrdersUnavailableError extends LogbookError {
  readonly code = 'orders_unavailable';
  constructor(readonly customer: string) {
    super(`the order service did not answer the lookup for ${customer}`);
  }
}

const stampOf = (ctx: ToolContext): CallStamp => ({ key: ctx.idempotencyKey, token: ctx.fencingToken, notAfter: ctx.notAfter });

/**
 * The articles' support agent: one tool per side-effect policy. Every write checks, right before
 * its request leaves, that this worker still holds the run by the wall clock (a worker frozen past
 * its lease stops here when it wakes), and sends its key, fencing token and deadline, so a request
 * already in flight when the worker froze is refused by the service.
 */
export function supportTools(services: SupportServices, options: SupportToolOptions = {}) {
  const delay = (signal: AbortSignal) =>
    options.toolDelayMs
      ? new Promise<void>((resolve, reject) => {
          const t = setTimeout(resolve, options.toolDelayMs);
          signal.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
        })
      : Promise.resolve();
  const work = (tool: string, ctx: ToolContext) => (options.work ? options.work(tool, ctx) : delay(ctx.signal));
  return [
    defineTool({
      name: 'search_orders',
      version: '1.0.0',
      description: "List a customer's recent orders.",
      input: z.object({ customer: z.string().min(1) }),
      policy: 'rerun',
      timeoutMs: 10_000,
      async execute({ customer }, ctx) {
        await work('search_orders', ctx);
        if (options.faults?.killsWorker?.(ctx.runId)) (options.faults.kill ?? (() => process.kill(process.pid, 'SIGKILL')))();
        if (options.faults?.fails?.(ctx.runId)) throw new OrdersUnavailableError(customer);
        return { orders: await services.searchOrders(customer, ctx.idempotencyKey) };
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
        await work('create_ticket', ctx);
        ctx.assertLeaseFresh();
        return services.createTicket(subject, body, stampOf(ctx));
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
        await work('send_email', ctx);
        ctx.assertLeaseFresh();
        return services.sendEmail(to, subject, body, stampOf(ctx));
      },
      async verify(_args, ctx) {
        // The lookup raises the key's fence to our token: an older worker's late send is refused.
        const found = await services.findEmail(stampOf(ctx));
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
        await work('issue_refund', ctx);
        ctx.assertLeaseFresh();
        return services.refund(orderId, amountCents, stampOf(ctx));
      },
    }),
  ];
}

/** The lookup's error when search_orders failed (the model saw an error result), else undefined. */
function lookupError(request: ModelRequest): string | undefined {
  const failed = request.messages.find((m) => m.role === 'tool' && m.name === 'search_orders' && m.isError);
  if (!failed || failed.role !== 'tool') return undefined;
  try {
    return String((JSON.parse(failed.content) as { error?: unknown }).error ?? 'error');
  } catch {
    return 'error';
  }
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

/**
 * The scripted conversation: search, then ticket + email in parallel, then refund, then answer.
 * When the lookup failed, the model answers that error instead and stops: nothing to refund.
 */
export function supportScript(customer = 'c_77'): ScriptStep[] {
  return [
    { text: 'Let me look up the customer\'s orders.', calls: [{ name: 'search_orders', args: { customer } }] },
    (request) => {
      const error = lookupError(request);
      if (error) return { text: `I could not look up the orders of ${customer} (${error}), so I refunded nothing; a colleague will follow up.` };
      return {
        text: 'The first order arrived damaged. Opening a ticket and emailing the customer.',
        calls: [
          { name: 'create_ticket', args: { subject: `Damaged order for ${customer}`, body: 'Order arrived damaged; refund approved.' } },
          { name: 'send_email', args: { to: `${customer}@example.com`, subject: 'Your refund', body: 'We are refunding your damaged order.' } },
        ],
      };
    },
    (request) => ({ text: 'Issuing the refund.', calls: [{ name: 'issue_refund', args: { orderId: firstOrderId(request), amountCents: 1299 } }] }),
    (request) => ({ text: `Refunded order ${firstOrderId(request)} ($12.99), opened a ticket and emailed ${customer}.` }),
  ];
}

export interface SupportAgentOptions extends SupportToolOptions {
  /** Default `support`. */
  name?: string;
  version?: string;
  /** A real model (from LOGBOOK_MODEL) instead of the scripted one. */
  model?: { id: string; price: Price };
}

export function supportAgent(services: SupportServices, options: SupportAgentOptions = {}): AgentDefinition {
  return defineAgent({
    name: options.name ?? 'support',
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
