import { CallDoesNotFitError, LeaseLostError, StopWorkError } from '../core/errors.js';
import type { Clock } from '../ports/clock.js';
import type { RunHeads } from '../ports/run-heads.js';
import type { RunRef } from '../core/run-ref.js';
import { LEASE_RENEWALS_PER_LEASE } from '../core/limits.js';

export interface LeaseKeeperOptions {
  heads: RunHeads;
  clock: Clock;
  run: RunRef;
  owner: string;
  epoch: number;
  ttlMs: number;
  /**
   * The `now` the claim was made with: the lease runs from then, not from when this keeper was
   * built (a process frozen between the claim and here must not think its lease is young).
   */
  grantedAt?: number;
  /** Called after each successful renewal (the worker extends the tick's visibility here). */
  onRenewed?: () => Promise<void>;
  /** Margin kept free before the lease ends and before the invocation ends. */
  marginMs: number;
}

/**
 * Renews the lease on its own timer, independent of slow tool calls, and aborts `signal` when the
 * lease is lost so in-flight calls stop. `assertFresh` guards every model and tool start;
 * `staleness()` is the same wall-clock test without the time-left part, for tools to ask right
 * before their irreversible moment (a frozen process sees its renewals are old when it wakes).
 */
export class LeaseKeeper {
  private readonly stopper = new AbortController();
  private readonly lostController = new AbortController();
  private lastRenewedAt: number;
  /** When this invocation's lease was granted: how long a whole invocation is, seen from here. */
  private readonly claimedAt: number;
  private loop: Promise<void> | undefined;

  constructor(private readonly o: LeaseKeeperOptions) {
    this.lastRenewedAt = o.grantedAt ?? o.clock.now();
    this.claimedAt = this.lastRenewedAt;
  }

  get signal(): AbortSignal {
    return this.lostController.signal;
  }

  get lost(): boolean {
    return this.lostController.signal.aborted;
  }

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopper.abort();
    await this.loop;
  }

  /**
   * Why this worker can no longer trust its lease, or undefined while it can: lost, or the last
   * successful renewal is older than the lease minus the margin. No I/O: the clock only.
   */
  staleness(): string | undefined {
    if (this.lost) return 'lease lost';
    const age = this.o.clock.now() - this.lastRenewedAt;
    if (age > this.o.ttlMs - this.o.marginMs) return `last lease renewal ${age} ms ago is too old (lease ${this.o.ttlMs} ms, margin ${this.o.marginMs} ms)`;
    return undefined;
  }

  /** Before a model or tool call: the lease must be fresh and the invocation must have time left. */
  assertFresh(callTimeoutMs: number, invocationDeadline: number): void {
    const now = this.o.clock.now();
    const stale = this.staleness();
    if (stale) throw new StopWorkError(stale);
    const whole = invocationDeadline - this.claimedAt;
    if (whole < callTimeoutMs + this.o.marginMs) {
      throw new CallDoesNotFitError(
        `a call of up to ${callTimeoutMs} ms needs ${callTimeoutMs + this.o.marginMs} ms with the margin, but a whole invocation has ${whole} ms: raise the worker's timeout or lower the call's`,
      );
    }
    if (invocationDeadline - now < callTimeoutMs + this.o.marginMs) {
      throw new StopWorkError(`only ${invocationDeadline - now} ms left for a call of up to ${callTimeoutMs} ms`);
    }
  }

  private async run(): Promise<void> {
    const every = Math.max(1, Math.floor(this.o.ttlMs / LEASE_RENEWALS_PER_LEASE));
    while (!this.stopper.signal.aborted) {
      try {
        await this.o.clock.sleep(every, this.stopper.signal);
      } catch {
        return; // stopped
      }
      try {
        const now = this.o.clock.now();
        await this.o.heads.renewLease(this.o.run, { owner: this.o.owner, epoch: this.o.epoch, now, ttlMs: this.o.ttlMs });
        this.lastRenewedAt = now;
        await this.o.onRenewed?.();
      } catch (error) {
        if (error instanceof LeaseLostError) {
          this.lostController.abort(error);
          return;
        }
        // A transient failure: keep trying; assertFresh stops new calls if renewals stay stale.
      }
    }
  }
}
