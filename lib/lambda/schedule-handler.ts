import { z } from 'zod';
import { LogbookError, ValidationError, errorCode, errorMessage } from '../core/errors.js';
import { TENANT_PATTERN } from '../core/run-ref.js';
import { zodIssues } from '../core/zod-issues.js';
import { fireSchedule, type FiringOutcome } from '../engine/schedule-firing.js';
import { METRIC, addCount, flushMetrics } from './telemetry.js';
import type { Runtime } from './wiring.js';

/**
 * The target input each deployed schedule sends (the construct writes it): the schedule's name,
 * the time it fired for (EventBridge Scheduler's `<aws.scheduler.scheduled-time>`, ISO 8601 UTC)
 * and the tenant its runs belong to.
 */
export const scheduledFiringSchema = z
  .object({
    schedule: z.string().min(1).max(64),
    scheduledTime: z.iso.datetime({ offset: true }),
    tenant: z.string().regex(TENANT_PATTERN).optional(),
  })
  .strict();
export type ScheduledFiring = z.infer<typeof scheduledFiringSchema>;

/** The placeholder EventBridge Scheduler replaces with the firing's scheduled time. */
export const SCHEDULED_TIME_PLACEHOLDER = '<aws.scheduler.scheduled-time>';

export type ScheduleHandlerResult = FiringOutcome | { dropped: string; runId?: string };

/**
 * EventBridge Scheduler target: one firing of a schedule (schedule-firing.ts). A firing that can
 * never start a run (an unknown schedule, a malformed input, a run id taken by another request)
 * is logged and dropped. A transient failure, or the tenant at its limit of unfinished runs,
 * throws: Lambda retries the asynchronous invocation, and a retry starts no second run (the run
 * id is the firing's).
 */
export function scheduleHandlerFor(getRuntime: () => Promise<Runtime>) {
  return async (event: unknown): Promise<ScheduleHandlerResult> => {
    const { logger, metrics, engine } = await getRuntime();
    logger.resetKeys();
    try {
      const parsed = scheduledFiringSchema.safeParse(event);
      if (!parsed.success) {
        logger.error('scheduled firing dropped: invalid event', { issues: zodIssues(parsed.error, { prefix: 'event' }) });
        return { dropped: 'event' };
      }
      const { schedule: name, scheduledTime, tenant } = parsed.data;
      const scheduled = engine.registry.schedule(name);
      if (!scheduled) {
        logger.error('scheduled firing dropped: no such schedule in this deployment', { schedule: name });
        return { dropped: 'schedule' };
      }
      try {
        const out = await fireSchedule(engine, scheduled, Date.parse(scheduledTime), tenant);
        logger.appendKeys({ tenant: tenant ?? scheduled.schedule.tenant, runId: out.runId });
        if (out.outcome === 'started') addCount(metrics, METRIC.RunsStarted);
        if (out.outcome === 'skipped') addCount(metrics, METRIC.ScheduleFiringsSkipped);
        logger.info(`scheduled firing: ${out.outcome}`, { schedule: name, scheduledTime, ...(out.outcome === 'skipped' ? { behind: out.behind } : {}) });
        return out;
      } catch (error) {
        const code = errorCode(error);
        if (error instanceof LogbookError && !error.retryable && (code === 'validation_error' || code === 'run_conflict' || code === 'instructions_failed')) {
          const issues = error instanceof ValidationError ? error.issues : undefined;
          logger.error('scheduled firing dropped: run cannot start', {
            schedule: name,
            scheduledTime,
            code,
            message: errorMessage(error),
            ...(issues ? { issues } : {}),
          });
          return { dropped: code };
        }
        if (code === 'too_many_runs') logger.warn('scheduled run refused: tenant at its limit; the firing will be retried', { schedule: name, scheduledTime });
        throw error;
      }
    } finally {
      flushMetrics(metrics);
    }
  };
}
