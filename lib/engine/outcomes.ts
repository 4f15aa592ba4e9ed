import type { OutcomeDetailType } from '../ports/outcome-publisher.js';
import type { HeadProjection, RunHead } from '../ports/run-heads.js';
import type { RunRef } from '../ports/run-ref.js';
import type { EngineDeps } from './engine.js';

/**
 * Publish a terminal or parked outcome once per outcome seq (the notice id is runId:seq, so a
 * repeat after a crash is harmless downstream), then raise notifiedSeq on the head. Any lease
 * holder that folds such a log repairs a missing notice. Returns true when a notice was published
 * (or marked done) now.
 */
export async function publishOutcome(deps: EngineDeps, run: RunRef, head: RunHead, projection: HeadProjection): Promise<boolean> {
  const outcome = projection.outcome;
  if (!outcome || head.notifiedSeq >= outcome.seq) return false;
  if (!deps.publisher) {
    // Nothing to publish to: mark it done, or the sweeper would keep waking the run for it.
    await deps.heads.markNotified(run, outcome.seq);
    return true;
  }
  const detailType: OutcomeDetailType =
    outcome.status === 'completed'
      ? 'Agent Run Completed'
      : outcome.status === 'parked'
        ? 'Agent Run Needs Attention'
        : outcome.status === 'awaiting_approval'
          ? 'Agent Run Needs Approval'
          : 'Agent Run Failed';
  await deps.publisher.publish({
    ...run,
    detailType,
    seq: outcome.seq,
    status: outcome.status,
    summary: outcome.summary,
    ...(outcome.code ? { code: outcome.code } : {}),
  });
  await deps.heads.markNotified(run, outcome.seq);
  return true;
}
