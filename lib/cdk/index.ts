/**
 * `logbook/cdk`: deploy an application's agents with `cdk deploy`. `Logbook` is the construct;
 * `buildLogbookApp` is a whole CDK app (one stack, context options, cdk-nag) in one call.
 */
export { Logbook, type LogbookProps } from './logbook.js';
export { LogbookStack, type LogbookStackProps } from './logbook-stack.js';
export { buildLogbookApp, type LogbookAppOptions } from './build-app.js';
export { DEFAULTS, configFromContext, withDefaults, type LogbookConfig } from './config.js';
export { METRICS, SERVICE_NAMES } from './metrics.js';
export { LogbookFunction } from './constructs/logbook-function.js';
export type { LogbookTracing } from './constructs/tracing.js';
export { RunSchedules, SCHEDULE_RETRY, type DeployedSchedule } from './constructs/run-schedules.js';
export type { HandlerKind } from './agents-module.js';
export {
  AgentsModuleInvalidError,
  AgentsModuleLoadError,
  BedrockModelIdError,
  McpServerBundleError,
  McpServerNotShippedError,
  ProjectFileNotFoundError,
} from './errors.js';
