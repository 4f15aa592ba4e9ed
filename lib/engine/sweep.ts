import { SWEEP_SHARDS } from '../ports/run-heads.js';
import { sweepStreak } from '../ports/sweep-index.js';
import type { EngineDeps } from './engine.js';
import { hintedTick } from '../ports/step-queue.js';

/**
 * Wake runs that need it: a crash between append and enqueue, a call whose deadline passed,
 * inbox items pending, an outcome notice owed. It never writes events; the woken lease holder
 * enforces deadlines.
 *
 * A flood must not multiply itself: a run whose tick waits in a long backlog looks stalled, and a
 * sweeper that sent a fresh tick on every pass would add one tick per backlogged run per pass. So:
 * - the index holds off a run whose tick is recorded as sent and not yet claimed (queuedAt, for
 *   SWEEP_QUEUED_MS) and one the sweeper woke before without progress since (swept, back-off
 *   doubling up to SWEEP_BACKOFF_CAP_MS): see sweep-index.ts for why both are bounded;
 * - each wake-up is recorded on the head (markSwept), which moves the run's entry to its next hold;
 * - the dedupe id names the head state and the streak (`runId:sweep:<epoch>:<lastSeq>:<n>`), so two
 *   passes that see the same unchanged head (the record failed, or passes overlap) send one tick
 *   within FIFO's window, and a wake-up after any change (a claim, an append, the next streak step)
 *   is never swallowed.
 * The tick goes first, then the record: a sweeper that dies between them leaves no hold without a tick.
 */
export async function sweep(deps: EngineDeps, options: { now?: number; limitPerShard?: number } = {}): Promise<{ woken: number }> {
  const now = options.now ?? deps.clock.now();
  let woken = 0;
  for (let shard = 0; shard < SWEEP_SHARDS; shard++) {
    const due = await deps.heads.listDue(shard, now, options.limitPerShard ?? 100);
    for (const head of due) {
      const n = sweepStreak(head) + 1;
      await deps.queue.enqueue(hintedTick(head, head), { dedupeId: `${head.runId}:sweep:${head.epoch}:${head.lastSeq}:${n}` });
      await deps.heads.markSwept(head, { at: now, n, seq: head.lastSeq }, { epoch: head.epoch });
      woken++;
    }
  }
  return { woken };
}
