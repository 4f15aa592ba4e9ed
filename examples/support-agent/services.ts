import { createHash } from 'node:crypto';
import type { Ledger } from './ledger.js';

function parseKey(key: string): { runId: string; callId: string } {
  const parts = key.split(':');
  return { runId: parts[1] ?? '', callId: parts[2] ?? '' };
}

const shortHash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 8);

/**
 * Fake downstream services that record every side effect in a ledger. Tickets dedupe by
 * idempotency key (as a real ticketing API would); email can be looked up by its tag but does not
 * dedupe; payments neither dedupe nor can be looked up, which is why refunds escalate.
 */
export class SupportServices {
  constructor(readonly ledger: Ledger) {}

  searchOrders(customer: string, key: string): { orderId: string; amountCents: number; status: string }[] {
    this.ledger.record({ service: 'orders', op: 'search', key, ...parseKey(key), applied: true, readOnly: true, detail: { customer } });
    return [
      { orderId: `o_${shortHash(customer).slice(0, 4)}`, amountCents: 1299, status: 'delivered_damaged' },
      { orderId: `o_${shortHash(customer + '2').slice(0, 4)}`, amountCents: 4500, status: 'delivered' },
    ];
  }

  createTicket(subject: string, body: string, key: string): { ticketId: string; deduplicated: boolean } {
    const ticketId = `T-${shortHash(key)}`;
    const seen = this.ledger.all().some((e) => e.service === 'tickets' && e.key === key && e.applied);
    this.ledger.record({ service: 'tickets', op: 'create', key, ...parseKey(key), applied: !seen, readOnly: false, detail: { subject, ticketId } });
    return { ticketId, deduplicated: seen };
  }

  sendEmail(to: string, subject: string, body: string, tag: string): { messageId: string } {
    const messageId = `m-${shortHash(tag)}`;
    this.ledger.record({ service: 'email', op: 'send', key: tag, ...parseKey(tag), applied: true, readOnly: false, detail: { to, subject, messageId } });
    return { messageId };
  }

  findEmail(tag: string): { messageId: string } | undefined {
    const sent = this.ledger.all().find((e) => e.service === 'email' && e.key === tag && e.applied);
    return sent ? { messageId: String(sent.detail.messageId) } : undefined;
  }

  refund(orderId: string, amountCents: number, key: string): { refundId: string } {
    const refundId = `r-${shortHash(key)}`;
    this.ledger.record({ service: 'payments', op: 'refund', key, ...parseKey(key), applied: true, readOnly: false, detail: { orderId, amountCents, refundId } });
    return { refundId };
  }
}
