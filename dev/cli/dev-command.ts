import { javaAvailable } from '../local/dynamodb-local.js';
import { LOCAL_SCRIPTED_PACE_MS, SCRIPTED_PACE_ENV } from '../../lib/models/scripted-model.js';
import { startLocalStack } from '../local/stack.js';
import { MAX_ACTIVE_RUNS_LIMIT } from '../../lib/core/limits.js';
import { telemetryLines } from '../local/telemetry-text.js';
import { parseCommandArgs } from './args.js';
import { UsageError, type Output } from './output.js';
import { startRunHint, startWorkflowHint } from './example-input.js';
import { plural } from '../../lib/core/plural.js';
export { DEV_USAGE } from './usage.js';

export function parsePort(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be a port number (0 picks a free one)');
  return port;
}

export function parseDynamo(value: string | undefined): 'auto' | 'dynalite' | 'dynamodb-local' {
  const dynamo = value ?? 'auto';
  if (dynamo !== 'auto' && dynamo !== 'dynalite' && dynamo !== 'dynamodb-local') throw new UsageError('--dynamo must be auto, dynalite or dynamodb-local');
  return dynamo;
}

/**
 * `--otlp URL`: a collector's OTLP/HTTP base URL, as OTEL_EXPORTER_OTLP_ENDPOINT (its /v1/traces is
 * where spans go). A URL that already ends in a signal's path is refused rather than doubled.
 */
export function parseOtlp(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError('--otlp must be a URL, e.g. http://127.0.0.1:4318');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError('--otlp must be an http:// or https:// URL (OTLP over HTTP)');
  if (/\/v1\/(traces|metrics|logs)\/?$/.test(url.pathname)) {
    throw new UsageError(`--otlp takes the collector's base URL (e.g. ${url.origin}): /v1/traces and /v1/metrics are appended`);
  }
  return value;
}

/** `logbook dev --agents ./src/agents.ts`: serve until SIGINT/SIGTERM. */
export async function devCommand(argv: string[], io: Output): Promise<number> {
  const { values, positionals } = parseCommandArgs('logbook dev', argv, {
    agents: { type: 'string', value: 'FILE' },
    port: { type: 'string', value: 'N' },
    dynamo: { type: 'string', value: 'auto|dynalite|dynamodb-local' },
    'work-dir': { type: 'string', value: 'DIR' },
    workers: { type: 'string', value: 'N' },
    'max-active-runs': { type: 'string', value: 'N' },
    otlp: { type: 'string', value: 'URL' },
    json: { type: 'boolean', default: false },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected arguments: ${positionals.join(' ')}`);
  if (!values.agents) throw new UsageError('--agents FILE is required: the module whose default export is defineAgents(...)');
  const port = parsePort(values.port);
  const dynamo = parseDynamo(values.dynamo);
  const workers = values.workers === undefined ? 2 : Number(values.workers);
  if (!Number.isInteger(workers) || workers < 1 || workers > 16) throw new UsageError('--workers must be an integer from 1 to 16');
  const otlp = parseOtlp(values.otlp);
  const maxActiveRuns = values['max-active-runs'] === undefined ? undefined : Number(values['max-active-runs']);
  if (maxActiveRuns !== undefined && (!Number.isInteger(maxActiveRuns) || maxActiveRuns < 0 || maxActiveRuns > MAX_ACTIVE_RUNS_LIMIT)) {
    throw new UsageError(`--max-active-runs must be an integer from 0 (no limit) to ${MAX_ACTIVE_RUNS_LIMIT}`);
  }

  io.err(`Starting the local stack on ${values.agents} (DynamoDB, S3 and SQS emulators, API, worker runner)...`);
  if (dynamo === 'auto' && !javaAvailable())
    io.err('notice: java not found, so DynamoDB runs on dynalite (in-process); install a Java 17 runtime to use DynamoDB Local.');
  const stack = await startLocalStack({
    agentsModule: values.agents,
    dynamo,
    concurrency: workers,
    ...(maxActiveRuns !== undefined ? { maxActiveRuns } : {}),
    // A scripted model's answer is streamed at a pace people can see.
    env: { [SCRIPTED_PACE_ENV]: process.env[SCRIPTED_PACE_ENV] ?? String(LOCAL_SCRIPTED_PACE_MS) },
    ...(values['work-dir'] ? { workDir: values['work-dir'] } : {}),
    ...(port !== undefined ? { port } : {}),
    ...(otlp ? { otlp } : {}),
  }).catch((error: unknown) => {
    if ((error as { code?: string }).code === 'EADDRINUSE') {
      throw new UsageError(`port ${port ?? process.env.LOGBOOK_PORT ?? 8787} is in use: stop the other stack, or pick another with --port N or LOGBOOK_PORT`);
    }
    throw error;
  });
  try {
    const agents = stack.runtime.engine.registry.list().map((a) => `${a.name}@${a.version}`);
    if (values.json) {
      io.out(JSON.stringify({ apiUrl: stack.apiUrl, port: stack.port, dynamo: stack.dynamo, agents, workerLog: stack.workerLog }));
    }
    io.err(`DynamoDB: ${stack.dynamo}   table ${stack.resources.tableName}, bucket ${stack.resources.bucket}, queue ${stack.resources.names.queue}`);
    io.err(`API:      ${stack.apiUrl}   (OpenAPI at ${stack.apiUrl}/openapi.json)`);
    io.err(`Agents:   ${agents.join(', ')}`);
    const workflows = stack.runtime.engine.registry.workflows().map((w) => `${w.name}@${w.version}`);
    if (workflows.length > 0) io.err(`Workflows: ${workflows.join(', ')}`);
    io.err(`Worker:   ${stack.runner.stats.starts} local Lambda sandbox(es); logs in ${stack.workerLog}`);
    const limit = Number(stack.env.LOGBOOK_MAX_ACTIVE_RUNS);
    io.err(`Limit:    ${limit > 0 ? `${plural(limit, 'unfinished run')} per tenant (--max-active-runs N; 0: none)` : 'none (--max-active-runs 0)'}`);
    io.err(`Inspector: ${stack.uiUrl}`);
    for (const line of stack.schedules.describe(Date.now())) io.err(`Schedule: ${line}`);
    for (const line of telemetryLines(stack.telemetry)) io.err(line);
    const first = stack.runtime.engine.registry.list()[0];
    const apiFlag = port !== undefined && port !== 8787 ? ` --api ${stack.apiUrl}` : '';
    // An input that fits the agent's input schema: a misfit would be refused with a 400.
    const workflow = first ? undefined : stack.runtime.engine.registry.workflow(stack.runtime.engine.registry.workflowNames()[0] ?? '');
    io.err(
      `\nStart a run:  ${workflow ? startWorkflowHint(workflow, apiFlag) : startRunHint(first && stack.runtime.engine.registry.agent(first.name), apiFlag)}`,
    );
    io.err('Press Ctrl-C to stop.');
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
    io.err('\nStopping...');
    return 0;
  } finally {
    await stack.stop();
  }
}
