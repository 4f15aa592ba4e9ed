import { sweep } from '../engine/sweep.js';
import { METRIC, addCount, flushMetrics } from './telemetry.js';
import type { Runtime } from './wiring.js';

/**
 * Scheduled (EventBridge Scheduler or a rule): wakes runs that need it from the sparse sweeper
 * index. It only enqueues ticks; the lease holder that wakes up decides what is due.
 */
export function sweeperHandlerFor(getRuntime: () => Promise<Runtime>) {
  return async (): Promise<{ woken: number }> => {
    const { engine, logger, metrics } = await getRuntime();
    logger.resetKeys();
    try {
      const out = await sweep(engine, { now: engine.clock.now() });
      addCount(metrics, METRIC.SweepWakeUps, out.woken);
      logger.info('sweep done', { woken: out.woken });
      return out;
    } finally {
      flushMetrics(metrics);
    }
  };
}
