import type { RunEvent } from '../core/events.js';
import type { RunRef } from '../core/run-ref.js';

export interface ReadPage {
  /** Raw records as stored; the engine validates them with `parseEvent`. */
  events: unknown[];
  /** Set when `limit` cut the page short: pass it as `afterSeq` to continue. */
  nextAfterSeq?: number;
}

export interface AppendOptions {
  horizon?: number;
}

/**
 * The append-only log of one run. `append` is a conditional write on (run, seq): it is the fence
 * that makes a stale worker stop. A rejected append throws `AppendConflictError`, except when the
 * record already stored at that seq carries this writer's `by.nonce` (a retried request whose
 * first attempt landed), which counts as success.
 */
export interface EventLog {
  /**
   * `horizon`: the run's retention horizon (run_started.expiresAt, epoch ms) when the caller knows
   * it from the state it folded, so an adapter that stamps a TTL on each event need not read it.
   */
  append(run: RunRef, event: RunEvent, options?: AppendOptions): Promise<void>;
  /** Events with seq > afterSeq in seq order, strongly consistent, paginated by the adapter. */
  read(run: RunRef, options: { afterSeq: number; limit?: number }): Promise<ReadPage>;
  readOne(run: RunRef, seq: number): Promise<unknown | undefined>;
}
