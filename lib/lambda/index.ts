/**
 * `logbook/lambda`: handler factories for an application's Lambda functions. Each handler file is
 * one line, e.g. `export const handler = createWorkerHandler({ agents });`. Each factory builds its
 * adapters once per cold start (not on import) from the environment the CDK construct sets.
 */
import type { AgentsSource } from '../authoring/define-agents.js';
import { apiHandlerFor } from './api-handler.js';
import { modelsFromEnv } from '../models/model-config.js';
import { runtimeOnce } from './cold-start.js';
import { sweeperHandlerFor } from './sweeper-handler.js';
import { triggerHandlerFor } from './trigger-handler.js';
import { scheduleHandlerFor } from './schedule-handler.js';
import { workerHandlerFor, type WorkerHandlerOptions } from './worker-handler.js';
import { streamHandlerFor, type StreamingRuntime } from './stream-handler.js';

export interface HandlerOptions {
  /** The application's agents (`defineAgents(...)`), or a function that builds them once per cold start. */
  agents: AgentsSource;
  /** Powertools service name of the function's logs and metrics (the construct sets POWERTOOLS_SERVICE_NAME). */
  serviceName?: string;
}

export interface WorkerOptions extends HandlerOptions, WorkerHandlerOptions {}

/** SQS FIFO event source of the step queue (batch size 1, ReportBatchItemFailures). */
export function createWorkerHandler(options: WorkerOptions) {
  const getRuntime = runtimeOnce(options.serviceName ?? 'logbook-worker', {
    agents: options.agents,
    builtInModels: (env) => modelsFromEnv(env).resolver,
  });
  const handler = workerHandlerFor(getRuntime, options);
  /**
   * Build clients, models and agents ahead of the first event (a host's init phase), so a new
   * sandbox reaches its first SQS call (shortening the tick's visibility) as fast as possible. A
   * failure here is retried by the first invocation.
   */
  const warm = (): Promise<void> =>
    getRuntime().then(
      () => undefined,
      () => undefined,
    );
  return Object.assign(handler, { warm });
}

/** API Gateway HTTP API (payload v2) with an IAM or JWT authorizer. */
export function createApiHandler(options: HandlerOptions) {
  return apiHandlerFor(runtimeOnce(options.serviceName ?? 'logbook-api', { agents: options.agents, runsSteps: false }));
}

/** EventBridge rule target for `Agent Run Requested`. */
export function createTriggerHandler(options: HandlerOptions) {
  return triggerHandlerFor(runtimeOnce(options.serviceName ?? 'logbook-trigger', { agents: options.agents, runsSteps: false }));
}

/** EventBridge Scheduler target of the agents' and workflows' schedules (one firing per invocation). */
export function createScheduleHandler(options: HandlerOptions) {
  return scheduleHandlerFor(runtimeOnce(options.serviceName ?? 'logbook-schedule', { agents: options.agents, runsSteps: false }));
}

/** Scheduled every minute; wakes due runs. It runs no agent code, so it takes no agents. */
export function createSweeperHandler(options: { serviceName?: string } = {}) {
  return sweeperHandlerFor(runtimeOnce(options.serviceName ?? 'logbook-sweeper', { runsSteps: false }));
}

/**
 * The run stream as Server-Sent Events behind a Lambda function URL with response streaming
 * (the Logbook construct's `streamUrl` option; IAM-authorized). It runs no agent code, so it
 * takes no agents. Outside a Lambda runtime the returned handler refuses every call.
 */
export function createStreamHandler(options: { serviceName?: string } = {}) {
  const runtime = (globalThis as { awslambda?: StreamingRuntime }).awslambda;
  if (!runtime) {
    return async () => {
      throw new Error('createStreamHandler runs only in a Lambda Node.js runtime (no awslambda global)');
    };
  }
  const getRuntime = runtimeOnce(options.serviceName ?? 'logbook-stream', { runsSteps: false });
  const getDeps = async () => {
    const { engine, env } = await getRuntime();
    return { deps: engine, tenantClaim: env.LOGBOOK_TENANT_CLAIM };
  };
  return runtime.streamifyResponse(streamHandlerFor(getDeps, runtime));
}

export type { WorkerHandlerOptions } from './worker-handler.js';
export { RUN_REQUESTED, runIdForEvent } from './trigger-handler.js';
export { scheduledFiringSchema, SCHEDULED_TIME_PLACEHOLDER, type ScheduledFiring, type ScheduleHandlerResult } from './schedule-handler.js';
export { envSchema, type LogbookEnv } from './env.js';
