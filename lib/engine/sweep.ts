import { SWEEP_SHARDS } from '../ports/run-heads.js';
import type { EngineDeps } from './engine.js';
import { hintedTick } from './hinted-tick.js';

/**
 * Wake runs that need it: a crash between append and enqueue, a call whose deadline passed,
 * inbox items pending, an outcome notice owed. It never writes events; the woken lease holder
 * enforces deadlines. Dedupe ids name the sweep round so a later round is never swallowed.
 */
export async function sweep(deps: EngineDeps, options: { now?: number; limitPerShard?: number; round?: number } = {}): Promise<{ woken: number }> {
  const now = options.now ?? deps.clock.now();
  const round = options.round ?? Math.floor(now / 60_000);
  let woken = 0;
  for (let shard = 0; shard < SWEEP_SHARDS; shard++) {
    const due = await deps.heads.listDue(shard, now, options.limitPerShard ?? 100);
    for (const head of due) {
      await deps.queue.enqueue(hintedTick(head, head), { dedupeId: `${head.runId}:sweep:${head.epoch}:${round}` });
      woken++;
    }
  }
  return { woken };
}
