import type { RunHead } from '../ports/run-heads.js';
import type { RunRef } from '../ports/run-ref.js';
import type { Tick } from '../ports/step-queue.js';

/**
 * A tick for a run whose head the sender holds: it names the head's snapshot (or none yet), so
 * the worker that takes it cold can read beside its claim (LoadHint). A head older than the
 * run's latest only means an older snapshot and a longer tail.
 */
export function hintedTick(run: RunRef, head: Pick<RunHead, 'snapshot'>): Tick {
  return { tenant: run.tenant, runId: run.runId, hint: { snapshot: head.snapshot ?? null } };
}
