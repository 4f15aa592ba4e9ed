import { createHash } from 'node:crypto';
import type { EventBridgeEvent } from 'aws-lambda';
import { LogbookError, ValidationError, errorCode, errorMessage } from '../core/errors.js';
import type { JsonValue } from '../core/json.js';
import { zodIssues } from '../core/zod-issues.js';
import { RunRequestSchema } from '../api/run-request.js';
import { startRun } from '../engine/start-run.js';
import { TENANT_PATTERN } from '../core/run-ref.js';
import { METRIC, addCount, flushMetrics } from './telemetry.js';
import type { Runtime } from './wiring.js';

export const RUN_REQUESTED = 'Agent Run Requested';

/**
 * What a user puts in the detail of an `Agent Run Requested` event: the API's run request
 * without a run id (derived from the event id) and without a tenant (the event's account).
 */
export const runRequestedDetailSchema = RunRequestSchema;

/** Same event id from the same account → same run, whatever EventBridge redelivers. */
export function runIdForEvent(tenant: string, eventId: string): string {
  return `eb-${createHash('sha256').update(`${tenant}\n${eventId}`).digest('hex').slice(0, 40)}`;
}

/**
 * EventBridge target: starts a run (of `detail.agent` or `detail.workflow`) per `Agent Run Requested` event, idempotent on the event id.
 * The tenant is the account the event came from (set by EventBridge), never a field of the detail.
 * A detail that can never start a run is logged and dropped. A transient failure throws; that is
 * not EventBridge's to retry: EventBridge invokes this function asynchronously, and its rule's
 * retries and dead-letter queue cover only the hand-over to Lambda. Once handed over, Lambda
 * retries a throw (TRIGGER_RETRY_ATTEMPTS, within triggerMaxEventAge) and then sends the event to
 * the trigger's on-failure queue (RunEvents.triggerFailureQueue, alarmed), where an operator can
 * put it back on the bus; a retry of any kind starts no second run (the run id is the event's).
 */
export function triggerHandlerFor(getRuntime: () => Promise<Runtime>) {
  return async (event: EventBridgeEvent<string, unknown>): Promise<{ runId?: string; created?: boolean; dropped?: string }> => {
    const { logger, metrics, engine } = await getRuntime();
    logger.resetKeys();
    try {
      if (event['detail-type'] !== RUN_REQUESTED) {
        logger.warn('event ignored: not an Agent Run Requested', { detailType: event['detail-type'], eventId: event.id });
        return { dropped: 'detail-type' };
      }
      const tenant = event.account;
      if (!TENANT_PATTERN.test(tenant ?? '')) {
        logger.error('event dropped: no valid source account', { eventId: event.id });
        return { dropped: 'account' };
      }
      const parsed = runRequestedDetailSchema.safeParse(event.detail);
      if (!parsed.success) {
        const issues = zodIssues(parsed.error, { prefix: 'detail' });
        logger.error('event dropped: invalid detail', { eventId: event.id, tenant, issues });
        addCount(metrics, METRIC.RunRequestsRejected);
        return { dropped: 'detail' };
      }
      const runId = runIdForEvent(tenant, event.id);
      logger.appendKeys({ tenant, runId });
      const d = parsed.data;
      try {
        const out = await startRun(engine, {
          tenant,
          runId,
          ...(d.workflow !== undefined ? { workflow: d.workflow } : { agent: d.agent ?? '' }),
          input: d.input as JsonValue,
          ...(d.version ? { version: d.version } : {}),
          ...(d.budgets ? { budgets: d.budgets } : {}),
        });
        if (out.created) addCount(metrics, METRIC.RunsStarted);
        logger.info(out.created ? 'run started from event' : 'run already started for this event', { eventId: event.id, source: event.source });
        return { runId, created: out.created };
      } catch (error) {
        const code = errorCode(error);
        if (error instanceof LogbookError && !error.retryable && (code === 'validation_error' || code === 'run_conflict' || code === 'instructions_failed')) {
          // The issues name fields (input.customer.email), never their values: the input stays out of the log.
          const issues = error instanceof ValidationError ? error.issues : undefined;
          logger.error('event dropped: run cannot start', { eventId: event.id, code, message: errorMessage(error), ...(issues ? { issues } : {}) });
          if (code !== 'run_conflict') addCount(metrics, METRIC.RunRequestsRejected);
          return { runId, dropped: code };
        }
        if (errorCode(error) === 'too_many_runs') {
          // The tenant is at its limit of unfinished runs: nothing was written, and the thrown
          // error makes Lambda retry the event (with its own back-off), when a slot may be free.
          logger.warn('run start refused: tenant at its limit; the event will be retried', { eventId: event.id, code: errorCode(error) });
        }
        throw error;
      }
    } finally {
      flushMetrics(metrics);
    }
  };
}
