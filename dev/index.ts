/**
 * `logbook/local`: the dev kit. The local stack on embedded emulators (DynamoDB Local or dynalite,
 * fauxqs for SQS and S3) running an application's agents through the same handlers as Lambda, an
 * API client, and the pieces the `logbook` CLI is made of. Never part of a Lambda bundle.
 */
export { startLocalStack, LOCAL_TIMINGS, type LocalStack, type LocalStackOptions, type LocalTelemetry } from './local/stack.js';
export { telemetryLines } from './local/telemetry-text.js';
export { startEmulators, type EmulatorEndpoints, type Emulators } from './local/emulators.js';
export { javaAvailable } from './local/dynamodb-local.js';
export { createResources, resourceNames, type CreatedResources, type CreateResourcesOptions } from './local/resources.js';
export { loadAgentsModule } from './local/agents-module.js';
export { lambdaContext } from './local/lambda-context.js';
export { watchRun, progressLine } from './local/run-watch.js';
export { LogbookClient, ApiError, DEFAULT_API } from './cli/api-client.js';
export { describeEvent } from './cli/event-text.js';
export { table, truncate, formatUsd, formatTime } from './cli/table.js';
export { UsageError, processOutput, type Output } from './cli/output.js';
export { main as runCli } from './cli/main.js';
export type { RunView, RunSummary } from '../lib/api/schemas.js';
