import { TooManyStreamsError } from '../core/errors.js';
import { MAX_OPEN_STREAMS_PER_TENANT, OPEN_STREAMS_RETRY_AFTER_S } from '../core/limits.js';

/**
 * The open waiting reads (long polls, SSE connections) of each tenant on this server, held to a
 * cap: one tenant's readers cannot slow every other request down, and another tenant's count is
 * its own. Counted in this process only (the local server; on Lambda an instance serves one
 * request at a time).
 */
export class ReaderGate {
  private readonly open = new Map<string, number>();

  constructor(
    readonly limit: number = MAX_OPEN_STREAMS_PER_TENANT,
    readonly retryAfterSeconds: number = OPEN_STREAMS_RETRY_AFTER_S,
  ) {}

  /** Take one of the tenant's slots (TooManyStreamsError at the cap); the function returned gives it back, once. */
  enter(tenant: string): () => void {
    const held = this.open.get(tenant) ?? 0;
    if (held >= this.limit) throw new TooManyStreamsError(this.limit, this.retryAfterSeconds);
    this.open.set(tenant, held + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const now = (this.open.get(tenant) ?? 1) - 1;
      if (now > 0) this.open.set(tenant, now);
      else this.open.delete(tenant);
    };
  }

  /** Slots the tenant holds now. */
  held(tenant: string): number {
    return this.open.get(tenant) ?? 0;
  }
}
