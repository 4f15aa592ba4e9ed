import { AppendConflictError, CorruptLogError, LeaseHeldError, LeaseLostError, RunNotFoundError, StopWorkError } from '../core/errors.js';
import { ingestItem } from '../core/ingest.js';
import type { RunState } from '../core/state.js';
import type { LeaseGrant, RunHead } from '../ports/run-heads.js';
import type { RunRef } from '../core/run-ref.js';
import type { Tick } from '../ports/step-queue.js';
import type { EngineDeps } from './engine.js';
import { ingestContext } from './ingest-context.js';
import { projectHead } from './head-projection.js';
import { hintedTick } from '../ports/step-queue.js';
import { LeaseKeeper } from './lease-keeper.js';
import type { Prefetched } from './run-loader.js';
import { inStreak, poisonDetail, stallsAfterLoad } from './claim-accounting.js';
import { publishOutcome } from './outcomes.js';
import { RunSession } from './run-session.js';
import { runTurn, type TurnOutcome } from './turn-runner.js';
import { StepTrace } from './tracing/step-trace.js';

export type StepOutcome = 'continued' | 'waiting' | 'parked' | 'ended' | 'busy' | 'fenced' | 'lease_lost' | 'poisoned' | 'not_found' | 'corrupt';

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
  /**
   * At most this many turns in this invocation, then hand over as when time runs short (a step
   * that should not hold a worker for a whole run, or a test or benchmark that wants N turns).
   */
  maxTurns?: number;
}

/** Rounds of ingest → turns → project → release before a step gives up releasing (the lease then expires). */
const MAX_RELEASE_ROUNDS = 5;

type Release = (inboxVersion: number) => Promise<boolean>;

/** What a step has done so far: its turns, and the head it last projected (for the handover's hint). */
type Progress = { turns: number; head?: RunHead };
/** A phase either hands the step on or ends it with a result. */
type Phase<T> = { next: T } | { done: StepResult };

/** A step that ended before its turns (busy, not found, corrupt, poisoned): nothing appended, no turn. */
const endedEarly = (outcome: StepOutcome, extra: Partial<StepResult> = {}): StepResult => ({ outcome, appended: 0, turns: 0, ...extra });

/**
 * One step, in named phases (what a process that dies at any point of it leaves, and the rule
 * that carries the run on, is the crash story in checkpoints.ts: CRASH_POINTS for the engine's
 * checkpoints, WRITE_CRASH_POINTS for every port write):
 * 1. claim the lease (a live holder elsewhere: busy, come back when its lease ends);
 * 2. the head gate: a head-level park is answered from the inbox or stays parked, and a run that
 *    keeps failing before it can make progress parks as poisoned, neither loading the log;
 * 3. the heartbeat: renew the lease (and the tick's visibility) on its own timer;
 * 4. load (cache or snapshot, then a consistent tail read); a corrupt log parks on the head;
 * 5. work: ingest the inbox, run turns while time allows, project the head, publish outcomes and
 *    release the lease, again while the inbox moved under us;
 * 6. hand over: enqueue the next tick only when the run is neither done nor parked nor waiting.
 * A rejected append (fenced) or a lost lease ends the step at once, touching nothing more.
 */
export async function runStep(deps: EngineDeps, tick: Tick, options: StepOptions): Promise<StepResult> {
  const run: RunRef = { tenant: tick.tenant, runId: tick.runId };
  // The lease is timed from the claim: a process frozen after claiming must not think it young.
  const claimedAt = deps.clock.now();
  // A cold container starts its reads beside the claim when the tick says where to read from
  // (the loader checks them against the claimed head). Dropped if the claim ends the step.
  const reads = tick.hint ? deps.loader.prefetch(run, tick.hint) : undefined;
  const claimed = await claim(deps, run, options.owner, claimedAt);
  if ('done' in claimed) return claimed.done;
  const grant = claimed.next;
  // Tracing (off: undefined): spans made from what this step appends, sent before it releases.
  const trace = deps.tracer && new StepTrace(deps.tracer, deps, run, claimedAt, grant.epoch);
  const release: Release = (inboxVersion) => deps.heads.releaseLease(run, { owner: options.owner, epoch: grant.epoch, inboxVersion });

  const gated = await headGate(deps, run, grant, options.owner, release);
  if ('done' in gated) return traced(trace, gated.done);

  const holder: { session?: RunSession } = {};
  const lease = heartbeat(deps, run, grant.epoch, claimedAt, options, holder);
  lease.start();
  const progress: Progress = { turns: 0 };
  try {
    const prefetched = reads ? { reads, fromReleased: grant.fromReleased } : undefined;
    const loadStart = deps.clock.now();
    const state = await loadOrPark(deps, run, gated.next, grant.epoch, lease, release, prefetched);
    if (!state) return traced(trace, endedEarly('corrupt'));
    trace?.loaded(state, gated.next, loadStart);
    const streak = inStreak(grant);
    // Inside a streak of abnormal claims, say that this one got past its load (limits.ts).
    if (streak) await deps.heads.markLoaded(run, { owner: options.owner, epoch: grant.epoch, stalls: stallsAfterLoad(grant) });
    const session = new RunSession(deps, run, state, { epoch: grant.epoch, nonce: deps.ids.nonce() }, lease, options.deadlineAt, options.owner);
    holder.session = session;
    if (trace) session.trace = trace;
    if (streak) {
      // Earlier claims ended abnormally; this one made progress, so the run is not poison.
      session.onFirstAppend = () => deps.heads.resetAttempts(run, { owner: options.owner, epoch: grant.epoch });
    }
    const outcome = await ingestTurnsAndRelease(session, gated.next, options, progress, release);
    await lease.stop();
    return traced(trace, await handOver(session, outcome, grant.epoch, progress));
  } catch (error) {
    await lease.stop();
    return traced(trace, stopped(deps, run, holder.session, progress.turns, error));
  }
}

/** The step's last spans (its release, or all of them for a step that ended early); the host flushes them. */
async function traced(trace: StepTrace | undefined, result: StepResult): Promise<StepResult> {
  await trace?.emit(result.outcome, false);
  return result;
}

/** Phase 1: claim the lease. */
async function claim(deps: EngineDeps, run: RunRef, owner: string, now: number): Promise<Phase<LeaseGrant>> {
  const { heads, clock, config } = deps;
  try {
    return { next: await heads.claimLease(run, { owner, now, ttlMs: config.leaseMs }) };
  } catch (error) {
    if (error instanceof LeaseHeldError) return { done: endedEarly('busy', { retryAfterMs: Math.max(1000, error.until - clock.now() + 1000) }) };
    if (error instanceof RunNotFoundError) return { done: endedEarly('not_found') };
    throw error;
  }
}

/** Phase 2: head-level parks and poison, decided from the head alone. */
async function headGate(deps: EngineDeps, run: RunRef, grant: LeaseGrant, owner: string, release: Release): Promise<Phase<RunHead>> {
  const { heads, clock, config, logger } = deps;
  const head = grant.head;
  if (head.park) {
    const handled = await handleHeadPark(deps, run, head, owner, grant.epoch);
    if (!handled) {
      await release(head.inboxVersion).catch(() => false);
      return { done: endedEarly(head.park.reason === 'corrupt_log' ? 'corrupt' : 'poisoned') };
    }
    return { next: (await heads.getHead(run)) ?? head };
  }
  const poison = poisonDetail(grant, config.maxClaimAttempts);
  if (poison) {
    // Poison: the run keeps killing its worker in the same place. Park without loading the log.
    logger?.error('run poisoned', { ...run, attempts: grant.attempts, stalls: head.stalls ?? 0 });
    await heads.setPark(run, { reason: 'poisoned', detail: poison, at: clock.now() }, 'parked');
    deps.metrics?.count('RunsParked');
    await release(head.inboxVersion).catch(() => false);
    return { done: endedEarly('poisoned') };
  }
  return { next: head };
}

/** Phase 3: the lease keeper; each renewal also extends the tick and looks for a cancel. */
function heartbeat(deps: EngineDeps, run: RunRef, epoch: number, grantedAt: number, options: StepOptions, holder: { session?: RunSession }): LeaseKeeper {
  return new LeaseKeeper({
    heads: deps.heads,
    clock: deps.clock,
    run,
    owner: options.owner,
    epoch,
    grantedAt,
    ttlMs: deps.config.leaseMs,
    marginMs: deps.config.marginMs,
    onRenewed: async () => {
      await options.onLeaseRenewed?.();
      // A cancel that arrives during a long tool call aborts rerun/idempotency_key calls now.
      const session = holder.session;
      if (session && !session.cancel.signal.aborted) {
        const items = await deps.inbox.list(run);
        if (items.some((i) => i.kind === 'cancel')) session.cancel.abort();
      }
    },
  });
}

/** Phase 4: load the run; a corrupt log cannot hold its own event, so it parks on the head. */
async function loadOrPark(
  deps: EngineDeps,
  run: RunRef,
  head: RunHead,
  epoch: number,
  lease: LeaseKeeper,
  release: Release,
  prefetched: Prefetched | undefined,
): Promise<RunState | undefined> {
  try {
    return (await deps.loader.load(run, head, epoch, prefetched)).state;
  } catch (error) {
    if (!(error instanceof CorruptLogError)) throw error;
    // Park for a person rather than crash-loop on every delivery.
    deps.logger?.error('corrupt log', { ...run, error: error.message });
    deps.loader.forget(run);
    await deps.heads.setPark(run, { reason: 'corrupt_log', detail: error.message, at: deps.clock.now() }, 'parked');
    deps.metrics?.count('RunsParked');
    await lease.stop();
    await release(head.inboxVersion).catch(() => false);
    return undefined;
  }
}

/** Phase 5: ingest, turns, project, release; again while new inbox items keep the release from landing. */
async function ingestTurnsAndRelease(
  session: RunSession,
  claimedHead: RunHead,
  options: StepOptions,
  progress: Progress,
  release: Release,
): Promise<TurnOutcome> {
  const { deps, run } = session;
  const countTurn = () => ++progress.turns;
  let head = claimedHead;
  let outcome: TurnOutcome = { kind: 'continued' };
  let inboxVersion = head.inboxVersion;
  for (let round = 0; round < MAX_RELEASE_ROUNDS; round++) {
    const roundStart = deps.clock.now();
    // The claimed head says whether anything was put since the last release: no inbox query when
    // nothing was (an item whose version bump has not landed yet is met by the release condition
    // or by the tick its sender enqueues after the bump). Later rounds follow a moved version.
    const nothingNew = round === 0 && head.inboxVersion === head.ingestedInboxVersion;
    inboxVersion = nothingNew ? inboxVersion : await ingestInbox(session, inboxVersion);
    outcome = await runTurns(session, options, countTurn);
    if (session.cancel.signal.aborted && !session.state.cancel && !session.state.outcome) {
      // The heartbeat saw a cancel in the inbox: ingest it now and let the loop wind down.
      inboxVersion = (await deps.heads.getHead(run))?.inboxVersion ?? inboxVersion;
      inboxVersion = await ingestInbox(session, inboxVersion);
      outcome = await runTurns(session, options, countTurn);
    }
    const finishStart = deps.clock.now();
    // Spans go out before the head moves past their events: a worker that dies from here on has them re-sent.
    session.trace?.phase('turns', roundStart, finishStart);
    await session.trace?.emit(outcome.kind, true);
    const finished = await finish(deps, session, outcome, head, { owner: options.owner, inboxVersion }, release);
    session.trace?.phase('release', finishStart, deps.clock.now());
    head = finished.head;
    progress.head = head;
    if (finished.released) break;
    // New inbox items arrived while we worked: ingest them before letting go.
    inboxVersion = (await deps.heads.getHead(run))?.inboxVersion ?? inboxVersion;
  }
  return outcome;
}

/** Phase 6: the next tick, only while the run has more to do right away. */
async function handOver(session: RunSession, outcome: TurnOutcome, epoch: number, progress: Progress): Promise<StepResult> {
  const { deps, run } = session;
  const s = session.state;
  const turns = progress.turns;
  if (session.appended === 0) deps.metrics?.count('TicksWithoutProgress');
  if (outcome.kind === 'continued' && !s.outcome) {
    // The next step, maybe in another container, reads from the snapshot the head points to now.
    const tick = progress.head ? hintedTick(run, progress.head) : run;
    await deps.queue.enqueue(tick, { dedupeId: `${run.runId}:${s.lastSeq}:${epoch}` });
  }
  return { outcome: outcome.kind, appended: session.appended, lastSeq: s.lastSeq, turns, epoch, ...(session.dangling ? { mustExitProcess: true } : {}) };
}

/** A step cut short: fenced by another writer, or its lease lost; anything else is unexpected. */
function stopped(deps: EngineDeps, run: RunRef, session: RunSession | undefined, turns: number, error: unknown): StepResult {
  const partial = { appended: session?.appended ?? 0, turns, ...(session?.dangling ? { mustExitProcess: true } : {}) };
  if (error instanceof AppendConflictError || (session?.fenced && !(error instanceof StopWorkError))) {
    // Fenced: another writer owns this run now. Stop at once and touch nothing more.
    deps.loader.forget(run);
    deps.logger?.warn('append rejected: stopping', { ...run, error: String(error) });
    return { outcome: 'fenced', ...partial };
  }
  if (error instanceof LeaseLostError || error instanceof StopWorkError) {
    // Our lease is gone (or too stale to act on): stop; the new holder carries on.
    return { outcome: 'lease_lost', ...partial };
  }
  throw error;
}

async function ingestInbox(session: RunSession, inboxVersion: number): Promise<number> {
  const { inbox, clock, logger } = session.deps;
  const items = await inbox.list(session.run);
  for (const item of items) {
    const result = ingestItem(session.state, item, clock.now(), ingestContext(session.deps, session.state.started.agent.name));
    if ('event' in result) await session.append(result.event);
    else logger?.info('inbox item ignored', { ...session.run, inboxId: item.id, kind: item.kind, why: result.ignored });
    // Only after its event is in the log: a crash before this re-reads it and fold skips it.
    await inbox.delete(session.run, item.id);
  }
  return inboxVersion;
}

async function runTurns(session: RunSession, options: StepOptions, onTurn: () => number): Promise<TurnOutcome> {
  const minTurn = options.minTurnMs ?? session.deps.config.marginMs * 2;
  for (;;) {
    let outcome: TurnOutcome;
    try {
      outcome = await runTurn(session);
    } catch (error) {
      if (error instanceof StopWorkError && !session.lease.lost) {
        session.deps.logger?.info('step stopped before a call', { ...session.run, why: error.reason });
        return { kind: 'continued' };
      }
      throw error;
    }
    const turns = onTurn();
    session.deps.metrics?.count('Turns');
    if (outcome.kind !== 'continued') return outcome;
    if (options.maxTurns !== undefined && turns >= options.maxTurns) return outcome;
    if (session.cancel.signal.aborted && !session.state.cancel) return outcome;
    if (options.deadlineAt - session.deps.clock.now() < minTurn) return outcome;
    if (session.lease.lost) throw new LeaseLostError(session.run, session.writer.epoch);
  }
}

/**
 * Project the head, snapshot when due, publish an owed outcome, release the lease. `head` is the
 * one our claim returned: its snapshot pointer and notifiedSeq change only under the lease, so we
 * keep them current here instead of reading the head again.
 *
 * A step that owes no outcome notice (most steps: the run goes on) projects and releases in one
 * conditional write, after the snapshot. One that owes one projects first, publishes, then
 * releases: the notice follows the projection it announces, and is sent under the lease.
 */
async function finish(
  deps: EngineDeps,
  session: RunSession,
  outcome: TurnOutcome,
  head: RunHead,
  lease: { owner: string; inboxVersion: number },
  release: Release,
): Promise<{ head: RunHead; released: boolean }> {
  const now = deps.clock.now();
  const state = session.state;
  const waitUntil = outcome.kind === 'waiting' ? outcome.until : undefined;
  const projection = projectHead(state, now, deps.config, waitUntil, outcome.kind === 'waiting');
  if (outcome.kind === 'parked' && session.appended > 0) deps.metrics?.count('RunsParked');
  const next: RunHead = { ...head, ...projection };
  const owesNotice = projection.outcome !== undefined && head.notifiedSeq < projection.outcome.seq;
  if (!owesNotice) {
    await snapshot(deps, session, head, next);
    // A step that hands over records the tick it is about to send (RunHead.queuedAt), in the same
    // write: the sweeper then leaves the run alone while that tick waits in the queue's backlog.
    const handsOver = outcome.kind === 'continued' && !state.outcome;
    const args = { owner: lease.owner, epoch: session.writer.epoch, inboxVersion: lease.inboxVersion, ...(handsOver ? { queuedAt: now } : {}) };
    if (await deps.heads.projectAndRelease(session.run, projection, args)) {
      session.trace?.committed();
      return { head: next, released: true };
    }
    // New inbox items: nothing was written. Project alone (the head never lags a round), then ingest them.
    await deps.heads.project(session.run, projection);
    session.trace?.committed();
    return { head: next, released: false };
  }
  await deps.heads.project(session.run, projection);
  // The head covers the round's events from here on (no worker projects them again): what is
  // counted once, the GenAI metrics, is counted now (StepTrace.committed).
  session.trace?.committed();
  await snapshot(deps, session, head, next);
  if (await publishOutcome(deps, session.run, next, projection, state)) next.notifiedSeq = projection.outcome?.seq ?? next.notifiedSeq;
  return { head: next, released: await release(lease.inboxVersion) };
}

/** A snapshot when one is due; never required, so a failure is only logged. */
async function snapshot(deps: EngineDeps, session: RunSession, head: RunHead, next: RunHead): Promise<void> {
  try {
    const pointer = await deps.loader.maybeSnapshot(session.run, session.state, head);
    if (pointer) next.snapshot = pointer;
  } catch (error) {
    deps.logger?.warn('snapshot failed (not required)', { ...session.run, error: String(error) });
  }
}

/**
 * A head-level park (poisoned run, corrupt log) is answered through the inbox with a run action:
 * retry clears the park and the attempts counter; fail ends the run on the head.
 */
async function handleHeadPark(deps: EngineDeps, run: RunRef, head: RunHead, owner: string, epoch: number): Promise<boolean> {
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
  // Failed on its head (no outcome notice follows): give its admission slot back here.
  await deps.admission?.release(run);
  return false;
}
