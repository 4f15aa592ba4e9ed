import { createHash } from 'node:crypto';
import type { Ledger, SideEffect } from './ledger.js';

function parseKey(key: string): { runId: string; callId: string } {
  const parts = key.split(':');
  return { runId: parts[1] ?? '', callId: parts[2] ?? '' };
}

const shortHash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 8);

/** What a tool sends with every write: its idempotency key, fencing token and deadline. */
export interface CallStamp {
  key: string;
  /** The worker's lease epoch (ctx.fencingToken). */
  token: number;
  /** Epoch ms after which the request must not be applied (ctx.notAfter). */
  notAfter: number;
}

/** A service refused a request because it has seen a higher fencing token for that key. */
export class StaleFencingTokenError extends Error {
  readonly code = 'stale_fencing_token';
  constructor(
    readonly service: string,
    readonly key: string,
    readonly token: number,
    readonly highest: number,
  ) {
    super(`${service} refused ${key}: fencing token ${token} is below ${highest}, already seen`);
    this.name = 'StaleFencingTokenError';
  }
}

/** A service refused a request that arrived after its deadline. */
export class RequestExpiredError extends Error {
  readonly code = 'request_expired';
  constructor(
    readonly service: string,
    readonly key: string,
    readonly lateMs: number,
  ) {
    super(`${service} refused ${key}: it arrived ${lateMs} ms after its deadline`);
    this.name = 'RequestExpiredError';
  }
}

export interface SupportServicesOptions {
  /** The services' own clock, for request deadlines (default Date.now). */
  now?: () => number;
  /** How long a write takes to reach a service (in flight); default 0. */
  latencyMs?: number;
  /** Replaces the latency: awaited while a write is in flight (tests freeze a request here). */
  transit?: (service: SideEffect['service'], stamp: CallStamp) => Promise<void>;
}

type Write = Omit<SideEffect, 'key' | 'runId' | 'callId' | 'applied' | 'readOnly' | 'token'>;

/**
 * Fake downstream services that record every side effect in a ledger, and behave as careful real
 * ones do against a worker that wakes up late:
 * - tickets dedupe by idempotency key;
 * - email and payments keep the highest fencing token seen per key (a verify lookup counts) and
 *   refuse a lower one, and refuse a request that arrives after its deadline;
 * - email can be looked up by its key; payments cannot, which is why refunds escalate.
 * Each check and its record happen atomically (one ledger transaction), across processes too.
 */
export class SupportServices {
  private readonly now: () => number;
  private readonly transit: NonNullable<SupportServicesOptions['transit']>;

  constructor(
    readonly ledger: Ledger,
    options: SupportServicesOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    const latency = options.latencyMs ?? 0;
    this.transit = options.transit ?? (() => (latency > 0 ? new Promise((r) => setTimeout(r, latency)) : Promise.resolve()));
  }

  async searchOrders(customer: string, key: string): Promise<{ orderId: string; amountCents: number; status: string }[]> {
    this.ledger.record({ service: 'orders', op: 'search', key, ...parseKey(key), applied: true, readOnly: true, detail: { customer } });
    return [
      { orderId: `o_${shortHash(customer).slice(0, 4)}`, amountCents: 1299, status: 'delivered_damaged' },
      { orderId: `o_${shortHash(customer + '2').slice(0, 4)}`, amountCents: 4500, status: 'delivered' },
    ];
  }

  async createTicket(subject: string, body: string, stamp: CallStamp): Promise<{ ticketId: string; deduplicated: boolean }> {
    await this.transit('tickets', stamp);
    const ticketId = `T-${shortHash(stamp.key)}`;
    return this.ledger.atomically(() => {
      const seen = this.ledger.all().some((e) => e.service === 'tickets' && e.key === stamp.key && e.applied);
      this.ledger.record({ service: 'tickets', op: 'create', ...this.stamped(stamp), applied: !seen, readOnly: false, detail: { subject, ticketId } });
      return { ticketId, deduplicated: seen };
    });
  }

  async sendEmail(to: string, subject: string, body: string, stamp: CallStamp): Promise<{ messageId: string }> {
    await this.transit('email', stamp);
    const messageId = `m-${shortHash(stamp.key)}`;
    this.fencedWrite(stamp, { service: 'email', op: 'send', detail: { to, subject, messageId } });
    return { messageId };
  }

  /**
   * Look for the email of a call. The lookup raises the key's fence to the caller's token first:
   * a request from an older worker still in flight is refused from now on, so "not landed" stays
   * true until the caller itself sends.
   */
  async findEmail(stamp: CallStamp): Promise<{ messageId: string } | undefined> {
    return this.ledger.atomically(() => {
      const effects = this.ledger.all();
      if (stamp.token > highestToken(effects, 'email', stamp.key)) {
        this.ledger.record({ service: 'email', op: 'fence', ...this.stamped(stamp), applied: false, readOnly: true, detail: {} });
      }
      const sent = effects.find((e) => e.service === 'email' && e.key === stamp.key && e.applied);
      return sent ? { messageId: String(sent.detail.messageId) } : undefined;
    });
  }

  async refund(orderId: string, amountCents: number, stamp: CallStamp): Promise<{ refundId: string }> {
    await this.transit('payments', stamp);
    const refundId = `r-${shortHash(stamp.key)}`;
    this.fencedWrite(stamp, { service: 'payments', op: 'refund', detail: { orderId, amountCents, refundId } });
    return { refundId };
  }

  /** Apply a write unless its token is below the key's highest or it arrived after its deadline. */
  private fencedWrite(stamp: CallStamp, write: Write): void {
    const refusal = this.ledger.atomically(() => {
      const highest = highestToken(this.ledger.all(), write.service, stamp.key);
      const lateMs = this.now() - stamp.notAfter;
      const error =
        stamp.token < highest
          ? new StaleFencingTokenError(write.service, stamp.key, stamp.token, highest)
          : lateMs > 0
            ? new RequestExpiredError(write.service, stamp.key, lateMs)
            : undefined;
      const detail = error ? { ...write.detail, refused: error.code } : write.detail;
      this.ledger.record({ ...write, ...this.stamped(stamp), applied: !error, readOnly: false, detail });
      return error;
    });
    if (refusal) throw refusal;
  }

  private stamped(stamp: CallStamp): Pick<SideEffect, 'key' | 'runId' | 'callId' | 'token'> {
    return { key: stamp.key, ...parseKey(stamp.key), token: stamp.token };
  }
}

function highestToken(effects: SideEffect[], service: SideEffect['service'], key: string): number {
  let highest = 0;
  for (const e of effects) if (e.service === service && e.key === key && e.token !== undefined) highest = Math.max(highest, e.token);
  return highest;
}
