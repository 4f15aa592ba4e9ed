/**
 * The fake services the refund review talks to: an order database (reads), a payment service
 * that deduplicates refunds by idempotency key, and a mailbox that sends every message it is
 * given (no dedupe) and can be asked whether a message with a key landed. Every request is a
 * line in the ledger (examples/support-agent/ledger.ts): shared by the worker processes through a
 * file, so a duplicate side effect after a killed worker is counted, never hidden.
 */
import type { StepContext } from 'logbook';
import type { Ledger, SideEffect } from '../support-agent/ledger.js';

export interface OrderLine {
  sku: string;
  cents: number;
  /** Returned to the warehouse: the line check passes only for returned lines. */
  returned: boolean;
}

export interface Order {
  orderId: string;
  customer: string;
  email: string;
  lines: OrderLine[];
}

/** The demo's orders: the two above the approval threshold wait for a manager's signal. */
export const ORDERS: Record<string, Order> = {
  o_1001: { orderId: 'o_1001', customer: 'Ada', email: 'ada@example.com', lines: [{ sku: 'mug', cents: 1_200, returned: true }] },
  o_1002: {
    orderId: 'o_1002',
    customer: 'Grace',
    email: 'grace@example.com',
    lines: [
      { sku: 'laptop', cents: 129_900, returned: true },
      { sku: 'sleeve', cents: 2_500, returned: true },
    ],
  },
  o_1003: {
    orderId: 'o_1003',
    customer: 'Alan',
    email: 'alan@example.com',
    lines: [
      { sku: 'kettle', cents: 4_500, returned: true },
      { sku: 'filter', cents: 900, returned: false },
    ],
  },
  o_1004: {
    orderId: 'o_1004',
    customer: 'Edsger',
    email: 'edsger@example.com',
    lines: [
      { sku: 'monitor', cents: 48_900, returned: true },
      { sku: 'cable', cents: 1_500, returned: true },
      { sku: 'stand', cents: 6_000, returned: true },
    ],
  },
};

/** Slower calls widen the window a killed worker can hit inside one (REFUND_SERVICE_DELAY_MS). */
const pause = (ms: number) => (ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve());

export class RefundServices {
  constructor(
    private readonly ledger: Ledger,
    private readonly delayMs = 0,
  ) {}

  private effect(ctx: StepContext, service: SideEffect['service'], op: string, applied: boolean, readOnly: boolean, detail: Record<string, unknown>): void {
    this.ledger.record({
      service,
      op,
      key: ctx.idempotencyKey,
      runId: ctx.runId,
      callId: ctx.callId,
      applied,
      readOnly,
      token: ctx.fencingToken,
      detail,
    });
  }

  async lookUpOrder(ctx: StepContext, orderId: string): Promise<Order | undefined> {
    await pause(this.delayMs);
    const order = ORDERS[orderId];
    this.effect(ctx, 'orders', 'lookup', true, true, { orderId, found: order !== undefined });
    return order;
  }

  async checkLine(ctx: StepContext, orderId: string, line: OrderLine): Promise<{ sku: string; cents: number; ok: boolean }> {
    await pause(this.delayMs);
    this.effect(ctx, 'orders', 'check-line', true, true, { orderId, sku: line.sku });
    return { sku: line.sku, cents: line.cents, ok: line.returned };
  }

  /** A refund: a repeated key is answered with the first refund's id and applies nothing. */
  async refund(ctx: StepContext, orderId: string, cents: number): Promise<{ refundId: string }> {
    await pause(this.delayMs);
    return this.ledger.atomically(() => {
      const first = this.ledger.all().find((e) => e.service === 'payments' && e.op === 'refund' && e.key === ctx.idempotencyKey && e.applied);
      if (first) {
        this.effect(ctx, 'payments', 'refund', false, false, { ...first.detail, deduplicated: true });
        return { refundId: String(first.detail.refundId) };
      }
      const refundId = `re_${ctx.runId}`;
      this.effect(ctx, 'payments', 'refund', true, false, { orderId, cents, refundId });
      return { refundId };
    });
  }

  /** Sends every time it is called (a mailbox does not dedupe): only verify() keeps it to one. */
  async send(ctx: StepContext, op: 'confirmation' | 'follow-up', to: string, subject: string): Promise<{ messageId: string }> {
    await pause(this.delayMs);
    const messageId = `msg_${ctx.runId}_${ctx.callId}`;
    this.effect(ctx, 'email', op, true, false, { to, subject, messageId });
    return { messageId };
  }

  /** The message this step's key sent, if one landed: what a verify() looks up. */
  findMessage(ctx: StepContext): { messageId: string } | undefined {
    const sent = this.ledger.all().find((e) => e.service === 'email' && e.key === ctx.idempotencyKey && e.applied);
    return sent ? { messageId: String(sent.detail.messageId) } : undefined;
  }
}
