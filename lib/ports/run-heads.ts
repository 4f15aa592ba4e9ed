import type { OpenControl } from '../core/control.js';
import type { AttentionReason, Budgets } from '../core/events.js';
import type { RunRef } from '../core/run-ref.js';
import { runStatusSchema, type RunStatus } from '../core/run-status.js';

export type { RunStatus } from '../core/run-status.js';
/** Every status, in the order listings and counts show them (a listing by status exists for each). */
export const RUN_STATUSES: readonly RunStatus[] = runStatusSchema.options;
export const TERMINAL_STATUSES: ReadonlySet<RunStatus> = new Set(['completed', 'failed', 'cancelled']);

export interface Lease {
  owner: string;
  /** Epoch ms after which anyone may claim. */
  until: number;
  epoch: number;
}

export interface OpenAttention {
  seq: number;
  reason: AttentionReason;
  callId?: string;
  detail: string;
  /** A person may not choose "rerun" before this time (the call's notAfter + grace). */
  rerunNotBefore?: number;
}

/** A call the run waits on from outside: an approval, a signal, a timer (what the API checks against). */
export type OpenWait = OpenControl;

/** A park that cannot live in the log (the log is corrupt, or the run fails before appending). */
export interface HeadPark {
  reason: 'poisoned' | 'corrupt_log';
  detail: string;
  at: number;
}

export interface SnapshotPointer {
  seq: number;
  key: string;
  sha256: string;
  foldVersion: number;
}

export interface RunUsage {
  steps: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export interface RunOutcome {
  status: 'completed' | 'failed' | 'cancelled' | 'parked' | 'awaiting_approval';
  /** seq of the event that produced it: notices are published once per outcome seq. */
  seq: number;
  /** Short text for listings; the full answer lives in the log. */
  summary: string;
  code?: string;
}

/**
 * The head: a projection of the log kept for listing, leasing and waking. It may lag the log and
 * is never trusted as a cache check; every field is written field by field.
 */
export interface RunHead {
  tenant: string;
  runId: string;
  agent: { name: string; version: string };
  status: RunStatus;
  lastSeq: number;
  createdAt: number;
  updatedAt: number;
  lease?: Lease;
  /** Highest epoch ever granted; survives release so epochs only grow. */
  epoch: number;
  /**
   * Claims since the last progress or the last claim that got the run loaded; a run above the
   * limit is parked as poisoned (it dies before it can load). See limits.ts.
   */
  attempts: number;
  /**
   * Claims that loaded the run and died before making progress, counted only inside a streak of
   * abnormal claims (absent = 0); at MAX_STALLED_CLAIMS the run parks as poisoned. See limits.ts.
   */
  stalls?: number;
  inboxVersion: number;
  /** The inboxVersion the last lease holder ingested; below inboxVersion means items are pending. */
  ingestedInboxVersion: number;
  usage: RunUsage;
  budgets?: Budgets;
  attention: OpenAttention[];
  /** Approvals, signals and timers the run waits on (absent: none). */
  waits?: OpenWait[];
  park?: HeadPark;
  outcome?: RunOutcome;
  /** Outcome notifications have been published up to this seq. */
  notifiedSeq: number;
  /** When the sweeper should wake the run (a deadline to enforce, a lease to recover). */
  wakeAt?: number;
  /**
   * A tick was sent at this time and no worker has claimed the run since (set with the head by
   * startRun and by a hand-over's release; cleared by every claim). It holds the sweeper off for
   * SWEEP_QUEUED_MS (sweep-index.ts), so a run waiting in the queue's backlog is not woken twice.
   */
  queuedAt?: number;
  /**
   * The sweeper's last wake-up of this run: when, the how-manieth in a row without progress, and
   * the lastSeq it saw (a later lastSeq means progress: the streak is over). See sweepBackoffMs.
   */
  swept?: SweptMark;
  snapshot?: SnapshotPointer;
  /** Epoch ms at which the head may be deleted (DynamoDB TTL). */
  expiresAt: number;
  /** A child run (agentTool): its parent run (same tenant) and the call that started it. Set at creation. */
  parent?: { runId: string; callId: string };
}

export interface SweptMark {
  at: number;
  n: number;
  seq: number;
}

export interface LeaseGrant {
  epoch: number;
  until: number;
  attempts: number;
  head: RunHead;
  /**
   * The lease was free when claimed: its last holder released it (or nobody held it yet). Every
   * holder projects its last append onto the head before or with its release, so the head's
   * lastSeq then covers every append made under an earlier lease. False when a lease lapsed (its
   * holder died or froze, possibly after appends the head does not show) or was ours already.
   */
  fromReleased: boolean;
}

/** What the lease holder projects from the folded log after a step. Monotonic on lastSeq. */
export interface HeadProjection {
  status: RunStatus;
  lastSeq: number;
  usage: RunUsage;
  attention: OpenAttention[];
  waits?: OpenWait[];
  outcome?: RunOutcome;
  wakeAt?: number;
  expiresAt: number;
  updatedAt: number;
}

/** The end of a step: release our lease if the inbox did not move; `queuedAt` when we hand over to a tick sent next. */
export interface ReleaseArgs {
  owner: string;
  epoch: number;
  inboxVersion: number;
  /** The step is about to send the run's next tick: record it on the head (RunHead.queuedAt). */
  queuedAt?: number;
}

export interface ListRunsOptions {
  status?: RunStatus;
  /** Only the children of this run (agentTool calls), newest first. Not combined with `status`. */
  parent?: string;
  limit: number;
  cursor?: string;
}

export interface RunHeads {
  /** Put the head if absent. Returns false when it already exists. */
  createHead(head: RunHead): Promise<boolean>;
  getHead(run: RunRef): Promise<RunHead | undefined>;
  /**
   * Claim when free, expired, or already ours: epoch + 1, attempts + 1, queuedAt cleared (a tick
   * was received). Throws LeaseHeldError.
   */
  claimLease(run: RunRef, args: { owner: string; now: number; ttlMs: number }): Promise<LeaseGrant>;
  /** Extend our lease. Throws LeaseLostError when the epoch or owner moved. */
  renewLease(run: RunRef, args: { owner: string; epoch: number; now: number; ttlMs: number }): Promise<number>;
  /**
   * Release our lease only if the inbox version is still the one we ingested; false means new
   * inbox items arrived and must be ingested first (the lease is kept). A release is the normal
   * end of a step, so it also resets attempts to 0.
   */
  releaseLease(run: RunRef, args: { owner: string; epoch: number; inboxVersion: number }): Promise<boolean>;
  /** Reset attempts and stalls to 0 after progress, so a later failure streak is counted afresh. */
  resetAttempts(run: RunRef, args: { owner: string; epoch: number }): Promise<void>;
  /**
   * A claim inside a streak got the run loaded: attempts := 0 (the deaths before it are no
   * longer loads that kill) and stalls := `stalls` (until it makes progress, it counts as a claim
   * that died after loading). Throws LeaseLostError when the lease moved.
   */
  markLoaded(run: RunRef, args: { owner: string; epoch: number; stalls: number }): Promise<void>;
  /** Apply a projection if head.lastSeq <= projection.lastSeq (monotonic). Returns whether applied. */
  project(run: RunRef, projection: HeadProjection): Promise<boolean>;
  /**
   * `project` and `releaseLease` in one conditional write (the end of a step that owes no
   * outcome notice): both, or neither when new inbox items arrived (false; the lease is kept and
   * nothing is projected). A projection older than the head's is skipped and the lease released.
   */
  projectAndRelease(run: RunRef, projection: HeadProjection, args: ReleaseArgs): Promise<boolean>;
  setPark(run: RunRef, park: HeadPark | null, status?: RunStatus): Promise<void>;
  /** Forward-only: applied only when pointer.seq is above the stored one. */
  setSnapshot(run: RunRef, pointer: SnapshotPointer): Promise<boolean>;
  /** Raise notifiedSeq (forward only). */
  markNotified(run: RunRef, seq: number): Promise<void>;
  listRuns(tenant: string, options: ListRunsOptions): Promise<{ runs: RunHead[]; cursor?: string }>;
  /**
   * How many runs of the tenant are in each status (every status present, 0 when none): exactly the
   * runs `listRuns` with that status would page through, counted to the end (never capped).
   */
  countRuns(tenant: string): Promise<Record<RunStatus, number>>;
  /** Heads in the sparse sweeper index of `shard` (0..15) that are due at `now`. */
  listDue(shard: number, now: number, limit: number): Promise<RunHead[]>;
  /**
   * The sweeper woke this run: record `swept` (and move its sweep entry accordingly), only if the
   * head is still at the epoch and lastSeq the sweeper saw (false otherwise: a worker got there
   * first, and the next pass looks again).
   */
  markSwept(run: RunRef, mark: SweptMark, seen: { epoch: number }): Promise<boolean>;
}

export const SWEEP_SHARDS = 16;
