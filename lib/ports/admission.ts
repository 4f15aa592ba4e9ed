import type { RunRef } from '../core/run-ref.js';

/** What admit() did: see Admission.admit. */
export type AdmitAnswer = 'taken' | 'held' | 'refused';

/**
 * Per-tenant admission: the set of a tenant's unfinished runs, bounded. Every path that makes a
 * run work takes a slot through admitRun (lib/engine/admission-gate.ts: a start, a fork, a
 * follow-up that reopens a completed run; a child run runs under its parent's), a failure after
 * taking one gives it back there, and the run's end gives it back (publishOutcome, or a head park
 * failed by a person). Both are idempotent per run id: a retried start keeps the slot its first
 * attempt took, and a repeated release (a notice published twice after a crash) frees it once.
 *
 * Why a set of ids and not a counter: a counter drifts with every crash between a run's write and
 * the counter's, and a drift up would lock a tenant out for good; a set cannot count a run twice,
 * and a release is a DELETE of one id whatever happened before it.
 */
export interface Admission {
  /**
   * Take a slot for `run` unless the tenant already holds `max`: `taken` (this call took it),
   * `held` (the run held one already: a retry, or a concurrent request for the same id; nothing
   * changes), or `refused` (nothing written). Only a caller that got `taken` may give the slot
   * back after a failure: a `held` slot belongs to whoever took it.
   */
  admit(run: RunRef, max: number): Promise<AdmitAnswer>;
  /** Give the run's slot back; a run that holds none is a no-op. */
  release(run: RunRef): Promise<void>;
  /** The tenant's unfinished run ids that hold a slot (for tests and operators). */
  holders(tenant: string): Promise<string[]>;
}
