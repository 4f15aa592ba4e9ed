import type { RunState } from '../core/state.js';
import type { RunRef } from '../core/run-ref.js';

/**
 * Step boundaries the engine announces: before and after every append, tool execution, model call
 * and blob write. Production passes none; the crash-injection harness throws or pauses here.
 */
export interface Checkpoints {
  at(point: CheckpointName, detail: string): void | Promise<void>;
  /** After each successful append, with the state the worker folded from it (for invariant checks). */
  appended?(run: RunRef, state: RunState): void | Promise<void>;
}

/** Every checkpoint the engine passes, in the order one turn usually passes them. */
export const CHECKPOINT_NAMES = [
  'before-blob-put',
  'after-blob-put',
  'before-append',
  'after-append',
  'before-model',
  'after-model',
  // Around the context policy's summary call (context-summary.ts), between its model_started and model_response.
  'before-summary',
  'after-summary',
  'before-tool',
  'after-tool',
  'before-verify',
  'after-verify',
  // Around a workflow step's function (workflow/step-execution.ts), between its op_started (none for a rerun step) and its op_result.
  'before-step',
  'after-step',
  // Around an inbox put by a control request (approve, signal, message): the API process may die
  // between put and wake-up.
  'before-inbox',
  'after-inbox',
] as const;
export type CheckpointName = (typeof CHECKPOINT_NAMES)[number];

/** What a worker that dies at a checkpoint leaves behind, and the rule that carries the run on. */
export interface CrashRule {
  leaves: string;
  recovery: string;
}

/**
 * Every crash point and the rule that handles it. A dead worker leaves its lease to expire
 * (LEASE_MS) and its tick to come back when the visibility it set ends (lease + margin); the next
 * worker claims with a higher epoch, folds the log and runs the same loop: there is no separate
 * recovery path, only these rules inside decide() and fold(). A worker that is frozen instead of
 * dead loses its next conditional append (AppendConflictError) and stops. The crash harness
 * (lib/testing/crash-harness.ts) crashes at every one of these points, pairs of them and frozen
 * workers, and checks the invariants; test/unit/engine/checkpoints.test.ts checks this table
 * names exactly the checkpoints the engine passes.
 */
export const CRASH_POINTS: Readonly<Record<CheckpointName, CrashRule>> = {
  'before-blob-put': {
    leaves: 'a payload not yet in S3 and the event that would reference it not in the log',
    recovery: 'as before-append: nothing of this event exists; the next worker writes it again from the same state',
  },
  'after-blob-put': {
    leaves: 'a blob that no event references yet',
    recovery: 'as before-append; blob keys are content-addressed, so the repeated put lands on the same key and an orphan expires with the bucket lifecycle',
  },
  'before-append': {
    leaves: 'the decision or observation not in the log (a conditional put either landed whole or not at all)',
    recovery:
      'a decision (model_started, tool_started, a terminal event) is made again by decide() from the same folded state; ' +
      'an observation (model_response, tool_result, tool_verified) is lost, which is the started-no-result case of after-model, after-tool or after-verify ' +
      '(an answer checked against the output schema is lost with its verdict: the model answers again and that answer is checked); ' +
      'an inbox item whose event was not appended is still in the inbox and is ingested again',
  },
  'after-append': {
    leaves: 'the event in the log; the head, the outcome notice, the inbox item and the next tick possibly not updated',
    recovery:
      'the next worker folds the event and continues from it; any lease holder that folds a finished or parked log projects the head and publishes the owed notice (notifiedSeq); ' +
      'an inbox item read again after its event is ignored by fold; a missing tick is made up by the sweeper, which wakes running runs whose head went quiet; ' +
      'a model_response whose answer does not fit the output schema carries its outputError: fold adds the repair message and counts the repair from the log, so a resumed run asks for the same repair and never gets more than the pinned number',
  },
  'before-model': {
    leaves: 'model_started (the budget reservation) with no model_response',
    recovery:
      'the reservation stays spent (a crash never refunds budget); decide() calls the model again with a new reservation, ' +
      'and after two consecutive model_started with no response it parks the run as model_stalled',
  },
  'after-model': {
    leaves: 'a model call that happened and was billed, with no model_response',
    recovery: 'as before-model: the reservation already covers the call that was lost',
  },
  'before-summary': {
    leaves: 'a summary model_started (its reservation) with no model_response: the older turns are not summarized yet',
    recovery:
      'as before-model: the reservation stays spent; the fold has no summary for those turns, so decide() finds the summary still due and asks again ' +
      'under a new reservation (two in a row with no answer park the run as model_stalled); the prompt never uses a summary the log does not hold',
  },
  'after-summary': {
    leaves: 'a summary that was made and billed, with no model_response',
    recovery: 'as before-summary: the reservation already covers the call that was lost, and the summary is asked for again',
  },
  'before-tool': {
    leaves: 'tool_started with no tool_result: the call did not run, but nobody can know that',
    recovery:
      "started, no result: nothing happens before notAfter + grace; then the tool's policy: rerun runs it again, idempotency_key runs it again with the same key, " +
      'verify looks (landed: record its result; not landed: rerun; unknown: escalate), escalate parks as unknown_outcome for a person',
  },
  'after-tool': {
    leaves: 'tool_started with no tool_result after the side effect may have happened',
    recovery: 'as before-tool: the policy exists for exactly this; no policy reruns a call whose effect is not safe to repeat',
  },
  'before-verify': {
    leaves: 'a verify-policy call past its deadline with no tool_verified',
    recovery: 'decide() asks for verify again (verify only looks)',
  },
  'after-verify': {
    leaves: 'what verify() saw, not recorded',
    recovery: 'as before-verify: verify runs again and its answer is recorded before anything acts on it',
  },
  'before-step': {
    leaves: 'a workflow step with its op_started and no op_result (a rerun step: nothing at all) whose function did not run',
    recovery:
      'the workflow is replayed from the top; at this step it finds started, no result, and as for a tool nothing happens before notAfter + grace; ' +
      "then the step's policy: rerun runs it again (a rerun step without a marker simply runs again), idempotency_key again with the same key, " +
      'verify calls its verify() first, escalate parks the operation for a person',
  },
  'after-step': {
    leaves: 'a workflow step whose function ran (its side effect may have happened) with no op_result',
    recovery: 'as before-step: the policy exists for exactly this; the code after the step never ran, so nothing acted on the lost result',
  },
  'before-inbox': {
    leaves: 'a control request (approve, signal, message) not yet in the inbox',
    recovery: 'the caller retries (an API answer never came); the inbox id is derived from the call or message, so a retry stores it once',
  },
  'after-inbox': {
    leaves: 'the inbox item stored, its wake-up tick perhaps not sent',
    recovery: "the head's inboxVersion moved, so the sweeper wakes the run; a retried request finds its item and re-sends the tick",
  },
};

/**
 * Every port call that writes, by port: what a handler (API, trigger, worker, sweeper) can die
 * before or after. The crash harness (lib/testing/write-points.ts) crashes before and after each
 * of them, in the order the uninterrupted run performs them, besides the named checkpoints above.
 * Reads are left out: dying before a read is dying after the write before it.
 */
export const WRITE_METHODS = {
  log: ['append'],
  heads: [
    'createHead',
    'claimLease',
    'renewLease',
    'releaseLease',
    'resetAttempts',
    'markLoaded',
    'project',
    'projectAndRelease',
    'setPark',
    'setSnapshot',
    'markNotified',
    'markSwept',
  ],
  inbox: ['put', 'delete'],
  blobs: ['put'],
  queue: ['enqueue'],
  publisher: ['publish'],
} as const satisfies Record<string, readonly string[]>;
export type WritePort = keyof typeof WRITE_METHODS;
/** `port.method`, as the harness labels a write point. */
export type WriteLabel = { [P in WritePort]: `${P}.${(typeof WRITE_METHODS)[P][number]}` }[WritePort];

/**
 * Every write and what a process that dies right before or right after it leaves behind, and the
 * rule that carries the run on: the second half of the crash story, after CRASH_POINTS. As there,
 * there is no recovery path apart from the one loop: a later claim, the sweeper, a retrying
 * caller. test/unit/engine/checkpoints.test.ts checks the table names exactly WRITE_METHODS.
 */
export const WRITE_CRASH_POINTS: Readonly<Record<WriteLabel, CrashRule>> = {
  'log.append': {
    leaves: 'the event written whole or not at all (one conditional put on the next seq)',
    recovery: 'as the before-append and after-append checkpoints: a lost decision is made again, a lost observation is a started call with no result',
  },
  'heads.createHead': {
    leaves: 'run_started in the log and no head (before), or a head with no tick (after)',
    recovery:
      'the caller had no answer and retries the start: the same request (hash in run_started) writes what is missing, head then tick; ' +
      'a head with no tick carries queuedAt, so the sweeper wakes the run once that hold ends',
  },
  'heads.claimLease': {
    leaves: 'nothing (before), or a lease held by a dead owner with epoch and attempts raised (after)',
    recovery:
      'the tick comes back when its visibility ends; the next claim waits for the lease to expire, and attempts past the limit park the run as poisoned without loading it',
  },
  'heads.renewLease': {
    leaves: 'a lease that lapses at the last renewal that landed',
    recovery: 'as claimLease after: the lease expires and the redelivered tick is claimed with a higher epoch',
  },
  'heads.releaseLease': {
    leaves: 'a projected head whose lease is still held (before), or a released run whose next tick is not sent (after)',
    recovery:
      'the lease expires; a release after a finished step is followed by the tick only when the run has more to do, and the sweeper wakes a running run whose head went quiet',
  },
  'heads.resetAttempts': {
    leaves: 'a failure streak still counted after progress',
    recovery: 'the next release resets it; until then a run that keeps dying could park as poisoned a claim early, never later',
  },
  'heads.markLoaded': {
    leaves: 'a claim inside a streak that loaded the log, not recorded as such',
    recovery: 'the claim counts as one that died before loading: the poison limit is reached no later, and a later load records it',
  },
  'heads.project': {
    leaves: 'a head that lags the log',
    recovery: 'the head is a projection and never trusted as a cache check: any lease holder that folds the log projects it again (monotonic on lastSeq)',
  },
  'heads.projectAndRelease': {
    leaves: 'as project and releaseLease together: both or neither landed (one conditional write), and queuedAt with them',
    recovery: 'as project and releaseLease',
  },
  'heads.setPark': {
    leaves: 'a run parked in the log (or on the head for a corrupt log) whose head does not say so yet',
    recovery: 'the tick comes back; the next holder folds the parked log and repairs the head, or meets the corrupt log again and parks the head',
  },
  'heads.setSnapshot': {
    leaves: 'a snapshot object in S3 that no pointer names (the object is written first)',
    recovery: 'snapshots are optional: the next load reads from the previous pointer (or replays); the orphan expires with the bucket lifecycle',
  },
  'heads.markNotified': {
    leaves: 'an outcome published and not marked (after), or not published (before)',
    recovery:
      'the head still owes the notice, so the sweeper wakes the run and the holder publishes again under the same id (runId:seq), which consumers dedupe',
  },
  'heads.markSwept': {
    leaves: 'a sweeper wake not recorded (its tick may or may not follow)',
    recovery: 'the next pass sees the run due again; its dedupe id names the head revision and wake count, so a repeated wake of the same head is one message',
  },
  'inbox.put': {
    leaves: 'a control request not stored (before), or stored with inboxVersion raised and no wake-up sent (after)',
    recovery:
      'as the before-inbox and after-inbox checkpoints: the caller retries with an id derived from the request; the moved inboxVersion keeps the release from landing and makes the sweeper wake the run',
  },
  'inbox.delete': {
    leaves: 'an inbox item already turned into an event, still in the inbox',
    recovery: 'it is read again and ingested again; fold ignores the repeat (the event names the inbox id)',
  },
  'blobs.put': {
    leaves: 'as the before-blob-put and after-blob-put checkpoints',
    recovery: 'content-addressed keys: the put is repeated to the same key; an orphan expires with the bucket lifecycle',
  },
  'queue.enqueue': {
    leaves: 'a step or start finished with its next tick unsent',
    recovery:
      'the head records the tick as queued (queuedAt) before it is sent, so the sweeper wakes the run once that hold ends; a duplicate tick finds nothing to do or a held lease',
  },
  'publisher.publish': {
    leaves: 'an outcome event not published',
    recovery: 'as markNotified: the notice stays owed on the head and is published again with the same id',
  },
};

/**
 * Thrown from a checkpoint to stop the worker as if its process died. Engine code never catches
 * it: no result, no cleanup, no release — exactly what a kill -9 leaves behind.
 */
export class WorkerHalt extends Error {
  constructor(readonly point: string) {
    super(`worker halted at ${point}`);
    this.name = 'WorkerHalt';
  }
}

export function rethrowHalt(error: unknown): void {
  if (error instanceof WorkerHalt) throw error;
}
