import type { EngineDeps } from '../engine/engine.js';
import type { ReadPage } from '../ports/event-log.js';
import type { RunRef } from '../core/run-ref.js';

/**
 * How soon a waiting long poll first reads the log again: an event that lands right after a
 * request came is seen within a quarter of a second. While reads find nothing the wait between
 * them doubles up to POLL_MAX_MS (pollDelayMs), so a full 20-second wait costs about 23 reads (each
 * a consistent Query that returns nothing, 1 read unit at most), not 80.
 */
export const EVENTS_POLL_MS = 250;

/**
 * The longest a waiting reader (long poll, SSE) sleeps between two reads that found nothing: the
 * worst delay an item that lands during a quiet spell waits before a reader sees it. Each request
 * (and each page of an SSE connection) starts again from its first, short interval: activity
 * resets the back-off.
 */
export const POLL_MAX_MS = 1_000;

/**
 * The sleep after `emptyReads` reads in a row found nothing (1, 2, ...): `firstMs`, doubling each
 * time, capped at `maxMs` (never below `firstMs`).
 */
export function pollDelayMs(emptyReads: number, firstMs: number, maxMs: number = POLL_MAX_MS): number {
  const n = Math.min(Math.max(1, Math.floor(emptyReads)), 30) - 1;
  return Math.min(Math.max(firstMs, maxMs), firstMs * 2 ** n);
}

export interface WaitOptions {
  after: number;
  limit: number;
  /** How long to wait for a first event; 0 reads once. */
  waitMs: number;
  /** The first wait between reads, doubling while nothing comes up to `maxPollMs` (default POLL_MAX_MS). */
  pollMs: number;
  maxPollMs?: number;
  /** The client went away: stop reading. */
  signal?: AbortSignal;
}

/**
 * Read the events after `after`; while there are none and the wait is not over, sleep and read
 * again. The event log is what is polled, not the head: the head is projected at the end of a
 * step, so it lags the events a watcher wants to see as they land.
 */
export async function waitForEvents(deps: Pick<EngineDeps, 'log' | 'clock'>, run: RunRef, options: WaitOptions): Promise<ReadPage> {
  const deadline = deps.clock.now() + options.waitMs;
  for (let empty = 1; ; empty++) {
    const page = await deps.log.read(run, { afterSeq: options.after, limit: options.limit });
    const left = deadline - deps.clock.now();
    if (page.events.length > 0 || left <= 0 || options.signal?.aborted) return page;
    try {
      await deps.clock.sleep(Math.min(pollDelayMs(empty, options.pollMs, options.maxPollMs), left), options.signal);
    } catch {
      // Aborted: nobody is listening any more; answer what we have without another read.
      return page;
    }
  }
}
