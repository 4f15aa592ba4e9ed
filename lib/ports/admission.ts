import type { RunRef } from '../core/run-ref.js';

/**
 * Per-tenant admission: the set of a tenant's unfinished runs, bounded. A start takes a slot
 * (startRun), the run's end gives it back (publishOutcome, or a head park failed by a person).
 * Both are idempotent per run id: a retried start keeps the slot its first attempt took, and a
 * repeated release (a notice published twice after a crash) frees it once.
 *
 * Why a set of ids and not a counter: a counter drifts with every crash between a run's write and
 * the counter's, and a drift up would lock a tenant out for good; a set cannot count a run twice,
 * and a release is a DELETE of one id whatever happened before it.
 */
export interface Admission {
  /**
   * Take a slot for `run` unless the tenant already holds `max` (false: refused, nothing written).
   * A run that holds a slot already is admitted again (idempotent).
   */
  admit(run: RunRef, max: number): Promise<boolean>;
  /** Give the run's slot back; a run that holds none is a no-op. */
  release(run: RunRef): Promise<void>;
  /** The tenant's unfinished run ids that hold a slot (for tests and operators). */
  holders(tenant: string): Promise<string[]>;
}
