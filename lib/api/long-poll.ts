import type { EngineDeps } from '../engine/engine.js';
import type { ReadPage } from '../ports/event-log.js';
import type { RunRef } from '../core/run-ref.js';

/**
 * How often a waiting long poll reads the log: at most 4 reads a second per waiting client, 80
 * for a full 20-second wait (each a consistent Query that returns nothing, 1 read unit at most),
 * and an event is seen within a quarter of a second of landing.
 */
export const EVENTS_POLL_MS = 250;

export interface WaitOptions {
  after: number;
  limit: number;
  /** How long to wait for a first event; 0 reads once. */
  waitMs: number;
  pollMs: number;
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
  for (;;) {
    const page = await deps.log.read(run, { afterSeq: options.after, limit: options.limit });
    const left = deadline - deps.clock.now();
    if (page.events.length > 0 || left <= 0 || options.signal?.aborted) return page;
    try {
      await deps.clock.sleep(Math.min(options.pollMs, left), options.signal);
    } catch {
      // Aborted: nobody is listening any more; answer what we have without another read.
      return page;
    }
  }
}
