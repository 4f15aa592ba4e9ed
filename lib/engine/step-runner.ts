import { AppendConflictError, CorruptLogError, LeaseHeldError, LeaseLostError, RunNotFoundError, StopWorkError } from '../core/errors.js';
import { ingestItem } from '../core/ingest.js';
import type { RunState } from '../core/state.js';
import type { RunHead } from '../ports/run-heads.js';
import type { Tick } from '../ports/step-queue.js';
import type { EngineDeps } from './engine.js';
import { ingestContext } from './control-ingest.js';
import { projectHead } from './head-projection.js';
import { LeaseKeeper } from './lease-keeper.js';
import { publishOutcome } from './outcomes.js';
import { RunSession } from './run-session.js';
import { runTurn, type TurnOutcome } from './turn-runner.js';

export type StepOutcome =
  | 'continued'
  | 'waiting'
  | 'parked'
  | 'ended'
  | 'busy'
  | 'fenced'
  | 'lease_lost'
  | 'poisoned'
  | 'not_found'
  | 'corrupt';

export interface StepResult {
  outcome: StepOutcome;
  /** For 'busy': retry the tick after this long (the holder's lease ends then). */
  retryAfterMs?: number;
  appended: number;
  lastSeq?: number;
  turns: number;
  /** The lease epoch this step claimed: how many invocations the run has taken so far. */
  epoch?: number;
  /** A tool ignored its abort: the process must exit instead of returning with it in flight. */
  mustExitProcess?: boolean;
}

export interface StepOptions {
  owner: string;
  /** Epoch ms by which the invocation must have returned (Lambda's remaining time). */
  deadlineAt: number;
  onLeaseRenewed?: () => Promise<void>;
  /** Minimum time left to start another turn in this invocation. */
  minTurnMs?: number;
}

/**
 * One step, as ARCHITECTURE.md's flow: claim the lease, load (cache or snapshot, then a consistent
 * tail read), ingest the inbox, run turns while time allows, project the head, publish outcomes,
 * release the lease (re-ingesting if the inbox moved), and enqueue the next tick only when
 * something was appended and the run is neither done nor parked.
 */
export async function runStep(deps: EngineDeps, tick: Tick, options: StepOptions): Promise<StepResult> {
  const { heads, clock, config, logger } = deps;
  const run = { tenant: tick.tenant, runId: tick.runId };
  let grant;
  try {
    grant = await heads.claimLease(run, { owner: options.owner, now: clock.now(), ttlMs: config.leaseMs });
  } catch (error) {
    if (error instanceof LeaseHeldError) return { outcome: 'busy', retryAfterMs: Math.max(1000, error.until - clock.now() + 1000), appended: 0, turns: 0 };
    if (error instanceof RunNotFoundError) return { outcome: 'not_found', appended: 0, turns: 0 };
    throw error;
  }
  const { epoch } = grant;
  let head: RunHead = grant.head;
  const release = async (inboxVersion: number) => heads.releaseLease(run, { owner: options.owner, epoch, inboxVersion });

  if (head.park) {
    const handled = await handleHeadPark(deps, run, head, options.owner, epoch);
    if (!handled) {
      await release(head.inboxVersion).catch(() => false);
      return { outcome: head.park.reason === 'corrupt_log' ? 'corrupt' : 'poisoned', appended: 0, turns: 0 };
    }
    head = (await heads.getHead(run)) ?? head;
  } else if (grant.attempts > config.maxClaimAttempts) {
    // Poison: the run keeps failing before it can make progress. Park without loading the log.
    logger?.error('run poisoned', { ...run, attempts: grant.attempts });
    await heads.setPark(run, { reason: 'poisoned', detail: `${grant.attempts} claims without progress`, at: clock.now() }, 'parked');
    deps.metrics?.count('RunsParked');
    await release(head.inboxVersion).catch(() => false);
    return { outcome: 'poisoned', appended: 0, turns: 0 };
  }

  let session: RunSession | undefined;
  const lease = new LeaseKeeper({
    heads,
    clock,
    run,
    owner: options.owner,
    epoch,
    ttlMs: config.leaseMs,
    marginMs: config.marginMs,
    onRenewed: async () => {
      await options.onLeaseRenewed?.();
      // A cancel that arrives during a long tool call aborts rerun/idempotency_key calls now.
      if (session && !session.cancel.signal.aborted) {
        const items = await deps.inbox.list(run);
        if (items.some((i) => i.kind === 'cancel')) session.cancel.abort();
      }
    },
  });
  lease.start();
  let turns = 0;
  try {
    let state: RunState;
    try {
      ({ state } = await deps.loader.load(run, head));
    } catch (error) {
      if (!(error instanceof CorruptLogError)) throw error;
      // A corrupt log cannot hold its own event: park on the head for a person, no crash loop.
      logger?.error('corrupt log', { ...run, error: error.message });
      deps.loader.forget(run);
      await heads.setPark(run, { reason: 'corrupt_log', detail: error.message, at: clock.now() }, 'parked');
      deps.metrics?.count('RunsParked');
      await lease.stop();
      await release(head.inboxVersion).catch(() => false);
      return { outcome: 'corrupt', appended: 0, turns: 0 };
    }
    session = new RunSession(deps, run, state, { epoch, nonce: deps.ids.nonce() }, lease, options.deadlineAt, options.owner);
    if (grant.attempts > 1) {
      // Earlier claims ended abnormally; this one made progress, so the run is not poison.
      session.onFirstAppend = () => heads.resetAttempts(run, { owner: options.owner, epoch });
    }
    let outcome: TurnOutcome = { kind: 'continue' };
    let inboxVersion = head.inboxVersion;
    for (let round = 0; round < 5; round++) {
      inboxVersion = await ingestInbox(session, inboxVersion);
      outcome = await runTurns(session, options, () => turns++);
      if (session.cancel.signal.aborted && !session.state.cancel && !session.state.outcome) {
        // The heartbeat saw a cancel in the inbox: ingest it now and let the loop wind down.
        inboxVersion = (await heads.getHead(run))?.inboxVersion ?? inboxVersion;
        inboxVersion = await ingestInbox(session, inboxVersion);
        outcome = await runTurns(session, options, () => turns++);
      }
      head = await finish(deps, session, outcome, head);
      if (await release(inboxVersion)) break;
      // New inbox items arrived while we worked: ingest them before letting go.
      inboxVersion = (await heads.getHead(run))?.inboxVersion ?? inboxVersion;
    }
    await lease.stop();
    const s = session.state;
    const progressed = session.appended > 0;
    if (!progressed) deps.metrics?.count('TicksWithoutProgress');
    if (outcome.kind === 'continue' && !s.outcome) {
      await deps.queue.enqueue(run, { dedupeId: `${run.runId}:${s.lastSeq}:${epoch}` });
    }
    const kind: StepOutcome = outcome.kind === 'continue' ? 'continued' : outcome.kind;
    return { outcome: kind, appended: session.appended, lastSeq: s.lastSeq, turns, epoch, ...(session.dangling ? { mustExitProcess: true } : {}) };
  } catch (error) {
    await lease.stop();
    if (error instanceof AppendConflictError || (session?.fenced && !(error instanceof StopWorkError))) {
      // Fenced: another writer owns this run now. Stop at once and touch nothing more.
      deps.loader.forget(run);
      logger?.warn('append rejected: stopping', { ...run, error: String(error) });
      return { outcome: 'fenced', appended: session?.appended ?? 0, turns, ...(session?.dangling ? { mustExitProcess: true } : {}) };
    }
    if (error instanceof LeaseLostError || error instanceof StopWorkError) {
      // Our lease is gone (or too stale to act on): stop; the new holder carries on.
      return { outcome: 'lease_lost', appended: session?.appended ?? 0, turns, ...(session?.dangling ? { mustExitProcess: true } : {}) };
    }
    throw error;
  }
}

async function ingestInbox(session: RunSession, inboxVersion: number): Promise<number> {
  const { inbox, clock, logger } = session.deps;
  const items = await inbox.list(session.run);
  for (const item of items) {
    const result = ingestItem(session.state, item, clock.now(), ingestContext(session.deps));
    if ('event' in result) await session.append(result.event);
    else logger?.info('inbox item ignored', { ...session.run, inboxId: item.id, kind: item.kind, why: result.ignored });
    // Only after its event is in the log: a crash before this re-reads it and fold skips it.
    await inbox.delete(session.run, item.id);
  }
  return inboxVersion;
}

async function runTurns(session: RunSession, options: StepOptions, onTurn: () => void): Promise<TurnOutcome> {
  const minTurn = options.minTurnMs ?? session.deps.config.marginMs * 2;
  for (;;) {
    let outcome: TurnOutcome;
    try {
      outcome = await runTurn(session);
    } catch (error) {
      if (error instanceof StopWorkError && !session.lease.lost) return { kind: 'continue' };
      throw error;
    }
    onTurn();
    session.deps.metrics?.count('Turns');
    if (outcome.kind !== 'continue') return outcome;
    if (session.cancel.signal.aborted && !session.state.cancel) return outcome;
    if (options.deadlineAt - session.deps.clock.now() < minTurn) return outcome;
    if (session.lease.lost) throw new LeaseLostError(`${session.run.tenant}/${session.run.runId}`, session.writer.epoch);
  }
}

/**
 * Project the head, snapshot when due, publish an owed outcome. `head` is the one our claim
 * returned: its snapshot pointer and notifiedSeq change only under the lease, so we keep them
 * current here instead of reading the head again.
 */
async function finish(deps: EngineDeps, session: RunSession, outcome: TurnOutcome, head: RunHead): Promise<RunHead> {
  const now = deps.clock.now();
  const state = session.state;
  const waitUntil = outcome.kind === 'waiting' ? outcome.until : undefined;
  const projection = projectHead(state, now, deps.config, waitUntil, outcome.kind === 'waiting');
  await deps.heads.project(session.run, projection);
  if (outcome.kind === 'parked' && session.appended > 0) deps.metrics?.count('RunsParked');
  const next: RunHead = { ...head, ...projection };
  try {
    const pointer = await deps.loader.maybeSnapshot(session.run, state, head);
    if (pointer) next.snapshot = pointer;
  } catch (error) {
    deps.logger?.warn('snapshot failed (not required)', { ...session.run, error: String(error) });
  }
  if (await publishOutcome(deps, session.run, state, next, projection)) next.notifiedSeq = projection.outcome?.seq ?? next.notifiedSeq;
  return next;
}

/**
 * A head-level park (poisoned run, corrupt log) is answered through the inbox with a run action:
 * retry clears the park and the attempts counter; fail ends the run on the head.
 */
async function handleHeadPark(deps: EngineDeps, run: { tenant: string; runId: string }, head: RunHead, owner: string, epoch: number): Promise<boolean> {
  const items = await deps.inbox.list(run);
  const action = items.find((i) => i.kind === 'run_action');
  if (!action || action.kind !== 'run_action' || !head.park) return false;
  await deps.inbox.delete(run, action.id);
  if (action.action === 'retry') {
    await deps.heads.setPark(run, null, 'running');
    await deps.heads.resetAttempts(run, { owner, epoch });
    deps.logger?.info('head park cleared by retry', { ...run, by: action.by });
    return true;
  }
  await deps.heads.setPark(run, { ...head.park, detail: `${head.park.detail}; failed by ${action.by}` }, 'failed');
  return false;
}
