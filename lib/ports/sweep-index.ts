import { SWEEP_SHARDS, type RunHead } from './run-heads.js';

/**
 * The sparse sweeper index: a head is in it only while something may need a wake-up (running or
 * waiting, inbox items not yet ingested, an outcome notice not yet published). Every adapter uses
 * this one rule, so the memory fake and DynamoDB agree on what the sweeper sees.
 */
/** How long a running run may go without a head update before the sweeper wakes it. */
export const SWEEP_STALL_MS = 60_000;

/**
 * How long a tick recorded as sent (`queuedAt`: by startRun with the head, by a worker's hand-over
 * with its release) holds the sweeper off while no worker has claimed the run since.
 *
 * Why this is safe: the sweeper exists for ticks that are lost (a crash between a write and its
 * enqueue, a tick dead-lettered after every delivery died before a claim). A tick that is merely
 * waiting in the queue's backlog needs no help: FIFO delivers a run's ticks in order, so a second
 * tick lands behind the first and can only do nothing (or start a second chain of hand-overs).
 * `queuedAt` cannot tell a lost tick from a waiting one, so it only holds wake-ups off for this
 * bounded time; a lost tick is then recovered this much later than SWEEP_STALL_MS would have. Any
 * claim clears it (the tick was received), and a run whose worker died after claiming is back
 * under the stall rule, so the dead-lettered-tick path (claim, then deaths) is not delayed at all.
 */
export const SWEEP_QUEUED_MS = 5 * SWEEP_STALL_MS;

/** The longest the sweeper's back-off holds a run off (each due run is still woken at least this often). */
export const SWEEP_BACKOFF_CAP_MS = 60 * 60_000;

/**
 * After the sweeper's n-th wake-up in a row of a run that made no progress since (its lastSeq did
 * not move), the next one waits this long: 2, 4, 8, 16, 32, then 60 minutes. A run whose ticks
 * sit in a backlog longer than SWEEP_QUEUED_MS gets a handful of spare ticks over hours, not one
 * per sweep pass; a run that is truly stuck is still retried forever, only less often.
 */
export function sweepBackoffMs(n: number): number {
  return Math.min(SWEEP_BACKOFF_CAP_MS, SWEEP_STALL_MS * 2 ** Math.min(Math.max(1, n), 30));
}

/** The sweeper's consecutive wake-ups of this run that are still without progress (0: none). */
export function sweepStreak(head: Pick<RunHead, 'swept' | 'lastSeq'>): number {
  return head.swept && head.swept.seq === head.lastSeq ? head.swept.n : 0;
}

/** The earliest time the sweeper may wake this run again, whatever it waits for (0: no hold). */
export function sweepHoldUntil(head: Pick<RunHead, 'swept' | 'lastSeq' | 'queuedAt'>): number {
  const queued = head.queuedAt === undefined ? 0 : head.queuedAt + SWEEP_QUEUED_MS;
  const streak = sweepStreak(head);
  const backoff = streak > 0 && head.swept ? head.swept.at + sweepBackoffMs(streak) : 0;
  return Math.max(queued, backoff);
}

export function sweepEntry(head: RunHead): { shard: number; wakeAt: number } | undefined {
  const entry = baseEntry(head);
  return entry && { shard: entry.shard, wakeAt: Math.max(entry.wakeAt, sweepHoldUntil(head)) };
}

function baseEntry(head: RunHead): { shard: number; wakeAt: number } | undefined {
  const shard = sweepShard(head.runId);
  const inboxPending = head.inboxVersion > head.ingestedInboxVersion;
  const noticeOwed = head.outcome !== undefined && head.notifiedSeq < head.outcome.seq;
  if (head.park) return inboxPending ? { shard, wakeAt: head.updatedAt } : undefined;
  if (inboxPending || noticeOwed) return { shard, wakeAt: head.updatedAt };
  if (head.status === 'awaiting_approval') {
    // A decision wakes it through the inbox; the sweeper only for an approval that can expire.
    return head.wakeAt === undefined ? undefined : { shard, wakeAt: Math.max(head.wakeAt, head.lease?.until ?? 0) };
  }
  if (head.status === 'waiting' && head.wakeAt !== undefined) {
    // Waiting for a started call's deadline: wake exactly then (or when a live lease ends).
    return { shard, wakeAt: Math.max(head.wakeAt, head.lease?.until ?? 0) };
  }
  if (head.status === 'running' || head.status === 'waiting') {
    const leaseEnd = head.lease?.until ?? 0;
    // A healthy running run is woken by its own ticks; the sweeper steps in only once it looks
    // stalled (a crash between append and enqueue) or a deadline it waits for has come.
    return { shard, wakeAt: Math.max(head.wakeAt ?? 0, leaseEnd, head.updatedAt + SWEEP_STALL_MS) };
  }
  return undefined;
}

export function sweepShard(runId: string): number {
  let h = 0;
  for (let i = 0; i < runId.length; i++) h = (h * 31 + runId.charCodeAt(i)) >>> 0;
  return h % SWEEP_SHARDS;
}
