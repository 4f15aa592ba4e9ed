import type { RunHead, SnapshotPointer } from './run-heads.js';
import type { RunRef } from '../core/run-ref.js';

/**
 * Where the run's log could be read from when the tick was sent: its latest snapshot then (null:
 * none yet, read from the start). A cold worker starts those reads beside its claim instead of
 * after it; the claimed head decides what counts (an older snapshot still loads, a head past what
 * was read means one more read), so a missing or stale hint costs time, never correctness.
 */
export interface LoadHint {
  snapshot: SnapshotPointer | null;
}

/** A wake-up for a run. Ticks carry no commands: the log and the inbox say what to do. */
export interface Tick {
  tenant: string;
  runId: string;
  /** Sent beside the body (an SQS message attribute): a worker that does not know it ignores it. */
  hint?: LoadHint;
}

/**
 * A tick for a run whose head the sender holds: it names the head's snapshot (or none yet), so
 * the worker that takes it cold can read beside its claim (LoadHint). A head older than the
 * run's latest only means an older snapshot and a longer tail.
 */
export function hintedTick(run: RunRef, head: Pick<RunHead, 'snapshot'>): Tick {
  return { tenant: run.tenant, runId: run.runId, hint: { snapshot: head.snapshot ?? null } };
}

export interface StepQueue {
  /**
   * `dedupeId` names its sender so a real wake-up is never swallowed by FIFO's 5-minute window:
   * worker `runId:seq:epoch`, API `runId:inbox:<id>`, sweeper `runId:sweep:<epoch>:<lastSeq>:<n>` (n: its wake-ups in a row without progress).
   */
  enqueue(tick: Tick, options: { dedupeId: string }): Promise<void>;
}

/** Visibility control of the tick being processed (shortened at claim, extended on heartbeat). */
export interface TickVisibility {
  setVisibility(receiptHandle: string, seconds: number): Promise<void>;
}
