import type { OutcomeDetailType } from '../ports/outcome-publisher.js';
import type { RunState } from '../core/state.js';
import type { JsonValue } from '../core/json.js';
import { isWorkflowStart } from '../core/events.js';
import { TERMINAL_STATUSES, type HeadProjection, type RunHead } from '../ports/run-heads.js';
import { deliverToParent } from './child-runs.js';
import type { RunRef } from '../core/run-ref.js';
import type { EngineDeps } from './engine.js';

/**
 * Publish a terminal or parked outcome once per outcome seq (the notice id is runId:seq, so a
 * repeat after a crash is harmless downstream), then raise notifiedSeq on the head. Any lease
 * holder that folds such a log repairs a missing notice. A child run's answer is delivered to its
 * parent's inbox the same way (before notifiedSeq moves). Returns true when a notice was published
 * (or marked done) now.
 */
export async function publishOutcome(deps: EngineDeps, run: RunRef, head: RunHead, projection: HeadProjection, state?: RunState): Promise<boolean> {
  const outcome = projection.outcome;
  if (!outcome || head.notifiedSeq >= outcome.seq) return false;
  // A child run's end reaches its parent first: owed with the notice, so it is retried until done.
  if (state && TERMINAL_STATUSES.has(outcome.status)) await deliverToParent(deps, run, state);
  // The run's admission slot, owed with the notice too (a release is idempotent): a crash after
  // the end and before the notice is retried by whoever repairs the notice.
  if (TERMINAL_STATUSES.has(outcome.status)) await deps.admission?.release(run);
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
    ...(await noticeOutput(deps, state, outcome.seq)),
    ...workflowOf(deps, head, state),
  });
  await deps.heads.markNotified(run, outcome.seq);
  return true;
}

/**
 * A workflow run's notice names its workflow and pinned version: from the folded run_started, or
 * (a notice repaired without the state) from the head, whose definition name is a workflow's when
 * the registry has a workflow of that name (agent and workflow names never collide).
 */
function workflowOf(deps: EngineDeps, head: RunHead, state: RunState | undefined): { workflow?: { name: string; version: string } } {
  const workflow = state ? isWorkflowStart(state.started) : deps.registry.workflow(head.agent.name) !== undefined;
  if (!workflow) return {};
  const pinned = state?.started.agent ?? head.agent;
  return { workflow: { name: pinned.name, version: pinned.version } };
}

/**
 * EventBridge refuses entries over 256 KB: a structured output up to this size rides in the
 * notice as JSON; a larger one is left out (`outputOmitted`), and GET /runs/{id} has it.
 */
export const MAX_NOTICE_OUTPUT_BYTES = 64 * 1024;

async function noticeOutput(deps: EngineDeps, state: RunState | undefined, seq: number): Promise<{ output?: JsonValue; outputOmitted?: true }> {
  const o = state?.outcome;
  if (o?.type !== 'completed' || o.seq !== seq || !o.output) return {};
  if (o.output.kind === 'blob' && o.output.size > MAX_NOTICE_OUTPUT_BYTES) return { outputOmitted: true };
  const output = await deps.codec.resolve(o.output);
  if (Buffer.byteLength(JSON.stringify(output)) > MAX_NOTICE_OUTPUT_BYTES) return { outputOmitted: true };
  return { output };
}
