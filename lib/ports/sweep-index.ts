import { SWEEP_SHARDS, type RunHead } from './run-heads.js';

/**
 * The sparse sweeper index: a head is in it only while something may need a wake-up (running or
 * waiting, inbox items not yet ingested, an outcome notice not yet published). Every adapter uses
 * this one rule, so the memory fake and DynamoDB agree on what the sweeper sees.
 */
/** How long a running run may go without a head update before the sweeper wakes it. */
export const SWEEP_STALL_MS = 60_000;

export function sweepEntry(head: RunHead): { shard: number; wakeAt: number } | undefined {
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
