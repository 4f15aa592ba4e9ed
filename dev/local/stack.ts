import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createApiApp } from '../../lib/api/app.js';
import { engineRunService } from '../../lib/api/engine-service.js';
import { LOCAL_CALLER } from '../../lib/api/tenant.js';
import { WORKER_TIMEOUT_MS } from '../../lib/core/limits.js';
import { sweep } from '../../lib/engine/sweep.js';
import { scheduleHandlerFor } from '../../lib/lambda/schedule-handler.js';
import { LocalScheduleTimer, type LocalFiring } from './schedule-timer.js';
import { safeFields } from '../../lib/lambda/telemetry.js';
import { createRuntime, type Runtime } from '../../lib/lambda/wiring.js';
import { namesService, otelConfig, type OtlpProtocol } from '../../lib/engine/tracing/otel-env.js';
import { createInspectorApp } from '../ui/inspector-app.js';
import { loopbackOnly, serveLoopback } from '../ui/loopback.js';
import { startEmulators, type EmulatorEndpoints, type Emulators } from './emulators.js';
import { LocalEventSourceRunner } from './event-source-runner.js';
import { createResources, resourceNames, type CreatedResources } from './resources.js';
import { loadAgentsModule } from './agents-module.js';
import { withImportRoute } from './import-route.js';

export interface LocalStackOptions {
  /** API port on 127.0.0.1; 0 picks a free one. Default LOGBOOK_PORT or 8787. */
  port?: number;
  /** Reuse running emulators (tests); otherwise they are started and stopped with the stack. */
  endpoints?: EmulatorEndpoints;
  dynamo?: 'auto' | 'dynamodb-local' | 'dynalite';
  /** Resource name prefix (default logbook-local). */
  prefix?: string;
  /** Worker log and side-effect ledger go here (default ./.logbook). */
  workDir?: string;
  /** Worker processes (parallel Lambda sandboxes). Default 2. */
  concurrency?: number;
  leaseMs?: number;
  /** How often the local sweeper runs (ms). Default 2000; 0 disables it. */
  sweepEveryMs?: number;
  /** How often the local scheduler looks for due firings (ms). Default 1000; 0: only `fireSchedules(now)` fires them. */
  scheduleEveryMs?: number;
  /**
   * The application's agents module (`src/agents.ts`): its default export is `defineAgents(...)`
   * or a function returning it. The API and the worker processes load it.
   */
  agentsModule: string;
  /** More environment for the API and the worker processes (e.g. LOGBOOK_MODEL, the app's own settings). */
  env?: Record<string, string>;
  /**
   * Unfinished runs one tenant may hold (starts, forks and follow-ups beyond it get 429); 0: no
   * limit. Default: LOGBOOK_MAX_ACTIVE_RUNS from `env` or the environment, else
   * LOCAL_MAX_ACTIVE_RUNS (docs/guides/flood-and-tenant-limits.md).
   */
  maxActiveRuns?: number;
  /**
   * An OTLP/HTTP collector's base URL (`logbook dev --otlp http://127.0.0.1:4318`), a shorthand for
   * OTEL_TRACES_EXPORTER=otlp and OTEL_EXPORTER_OTLP_ENDPOINT=URL in the workers' environment, above
   * the per-signal endpoint variables. Without it the standard variables of this process (and of
   * `env`) decide, as on Lambda: docs/guides/tracing.md.
   */
  otlp?: string;
  /** Open long polls and SSE streams one tenant may hold on the API (default MAX_OPEN_STREAMS_PER_TENANT). */
  maxOpenStreams?: number;
}

/** What the workers export, as the standard variables they get say (headers left out). */
export interface LocalTelemetry {
  traces?: { url: string; protocol: OtlpProtocol };
  metrics?: { url: string; protocol: OtlpProtocol };
  /** One line per variable ignored or signal turned off (the stack's caller prints them). */
  warnings: string[];
}

export interface LocalStack {
  apiUrl: string;
  /** The web inspector: `${apiUrl}/ui/`. */
  uiUrl: string;
  port: number;
  dynamo: string;
  resources: CreatedResources;
  /** The environment the worker processes run with. */
  env: Record<string, string>;
  /** Spans and metrics the workers send, from the OTEL_* variables they get. */
  telemetry: LocalTelemetry;
  /** The in-process runtime serving the API and the sweeper (same adapters as the worker). */
  runtime: Runtime;
  runner: LocalEventSourceRunner;
  workerLog: string;
  /** The directory holding the worker log (and whatever the application keeps there). */
  workDir: string;
  /** Run one sweep now (the sweeper handler's work), optionally as if at a later time. */
  sweepNow(now?: number): Promise<{ woken: number }>;
  /** The agents' and workflows' schedules, fired on their cron through the schedule handler. */
  schedules: LocalScheduleTimer;
  /** Fire every schedule due up to `now` (default the clock), as the timer does. */
  fireSchedules(now?: number): Promise<LocalFiring[]>;
  stop(): Promise<void>;
}

/**
 * Local timings: short leases so a killed worker's run resumes within seconds. The worker's
 * invocation is as long as the deployed one's, so every tool that deploys (timeoutMs up to
 * MAX_TOOL_TIMEOUT_MS, 60 s by default) also runs locally. The back-off base is shorter than the
 * lease locally: a demo storm should not idle for minutes.
 */
export const LOCAL_TIMINGS = {
  leaseMs: 5_000,
  marginMs: 1_000,
  modelTimeoutMs: 15_000,
  workerTimeoutMs: WORKER_TIMEOUT_MS,
  visibilityMarginS: 2,
  queueVisibilityS: 30,
  backoffBaseS: 2,
};

/**
 * The local stack's per-tenant limit of unfinished runs unless told otherwise: with none, one
 * tenant's flood of 300 starts filled the step queue ahead of everyone and made another tenant's
 * run 144x slower; with this limit and the stack's 2 workers another tenant's run waits behind at
 * most ~LOCAL_MAX_ACTIVE_RUNS / 2 steps per turn, while a developer can still keep a handful of
 * runs waiting for approvals or parked (they hold slots too).
 */
export const LOCAL_MAX_ACTIVE_RUNS = 10;

/** The limit a local stack applies: the option, then LOGBOOK_MAX_ACTIVE_RUNS, then the default. */
export function localMaxActiveRuns(option: number | undefined, env: Record<string, string | undefined>): number {
  if (option !== undefined) return option;
  const raw = env.LOGBOOK_MAX_ACTIVE_RUNS;
  if (raw === undefined || raw.trim() === '') return LOCAL_MAX_ACTIVE_RUNS;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`LOGBOOK_MAX_ACTIVE_RUNS must be a whole number (0: no limit), not ${JSON.stringify(raw)}`);
  return n;
}

/**
 * The whole of Logbook on this machine: emulators, the table/bucket/queues from the shared
 * definitions, the HTTP API on 127.0.0.1, the local event-source runner driving the worker
 * handler in child processes, and the sweeper on a timer.
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const workDir = resolve(options.workDir ?? '.logbook');
  mkdirSync(workDir, { recursive: true });
  let emulators: Emulators | undefined;
  const cleanups: (() => Promise<void>)[] = [];
  try {
    if (!options.endpoints) {
      emulators = await startEmulators({ dynamo: options.dynamo ?? 'auto' });
      cleanups.push(() => emulators?.stop() ?? Promise.resolve());
    }
    const endpoints = options.endpoints ?? (emulators as Emulators).endpoints;
    // AWS wants visibility >= 6 x the function timeout because its poller retries throttled
    // invocations. The local runner never throttles, and a live worker keeps its tick invisible
    // by renewing it with the lease, and the runner hands each message to a worker as soon as it
    // receives it (batch size 1), so 30 s is plenty: a worker killed before it could shorten its
    // tick's visibility (a kill storm hits workers while they boot) then costs 30 s, not 30 min.
    const resources = await createResources(endpoints, resourceNames(options.prefix ?? 'logbook-local'), {
      visibilityTimeoutSeconds: LOCAL_TIMINGS.queueVisibilityS,
    });
    const workerLog = join(workDir, 'worker.log');
    const agentsModule = resolve(options.agentsModule);
    const agents = await loadAgentsModule(agentsModule);
    const env: Record<string, string> = {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      LOGBOOK_TABLE: resources.tableName,
      LOGBOOK_BUCKET: resources.bucket,
      LOGBOOK_QUEUE_URL: resources.queueUrl,
      LOGBOOK_DYNAMODB_ENDPOINT: endpoints.dynamodb,
      LOGBOOK_S3_ENDPOINT: endpoints.s3,
      LOGBOOK_SQS_ENDPOINT: endpoints.sqs,
      LOGBOOK_LEASE_MS: String(options.leaseMs ?? LOCAL_TIMINGS.leaseMs),
      LOGBOOK_MARGIN_MS: String(LOCAL_TIMINGS.marginMs),
      LOGBOOK_MODEL_TIMEOUT_MS: String(LOCAL_TIMINGS.modelTimeoutMs),
      LOGBOOK_VISIBILITY_MARGIN_S: String(LOCAL_TIMINGS.visibilityMarginS),
      LOGBOOK_BACKOFF_BASE_S: String(LOCAL_TIMINGS.backoffBaseS),
      LOGBOOK_AGENTS_MODULE: agentsModule,
      // Where the application may keep local state its worker processes share (fake services).
      LOGBOOK_WORK_DIR: workDir,
      ...options.env,
      ...otlpShorthand(options.otlp),
    };
    // The per-tenant limit the API applies: the option, LOGBOOK_MAX_ACTIVE_RUNS, or the local default.
    env.LOGBOOK_MAX_ACTIVE_RUNS = String(localMaxActiveRuns(options.maxActiveRuns, { ...process.env, ...options.env }));
    // The workers' service.name, unless the variables name one.
    if (!namesService({ ...process.env, ...env })) env.OTEL_SERVICE_NAME = 'logbook-local';
    // This process serves the API and the sweeper, which run no step: only the workers trace.
    const runtime = await createRuntime('logbook-local', { agents, env: { ...process.env, ...env, POWERTOOLS_LOG_LEVEL: 'ERROR' }, runsSteps: false });
    cleanups.push(async () => runtime.clients.destroy());

    const app = createApiApp({
      service: engineRunService(runtime.engine),
      caller: () => LOCAL_CALLER,
      sse: true,
      ...(options.maxOpenStreams !== undefined ? { maxOpenStreams: options.maxOpenStreams } : {}),
      logger: { info() {}, warn: (m, f) => runtime.logger.warn(m, safeFields(f)), error: (m, f) => runtime.logger.error(m, safeFields(f)) },
    });
    // The web inspector, on the same origin as the API it reads (the deployed API never serves it).
    app.route('/ui', createInspectorApp({ label: 'local stack' }));
    // Any web page the developer opens can send requests to 127.0.0.1: only this machine's
    // programs and the inspector's own page get through (loopback Host against DNS rebinding, no
    // cross-site Origin or Sec-Fetch-Site against a form or no-cors POST such as a bodiless cancel).
    // `logbook runs import` posts run files here: written into this stack's table and bucket, as the local tenant's.
    const server = await serveLoopback(
      loopbackOnly(withImportRoute(app.fetch, runtime.engine, LOCAL_CALLER.tenant)),
      options.port ?? Number(process.env.LOGBOOK_PORT ?? 8787),
    );
    cleanups.push(() => server.close());
    const port = server.port;
    // A fresh stack is a fresh world: the emulators start empty, so does the worker log (only now
    // that the port is ours, so a second stack cannot wipe the first one's).
    writeFileSync(workerLog, '');

    const runner = new LocalEventSourceRunner({
      sqs: runtime.clients.sqs,
      queueUrl: resources.queueUrl,
      region: 'us-east-1',
      env,
      logFile: workerLog,
      concurrency: options.concurrency ?? 2,
      timeoutMs: LOCAL_TIMINGS.workerTimeoutMs,
    });
    await runner.start();
    cleanups.push(() => runner.stop());

    // Passes every 2 s are cheap: a run the sweeper woke is held off (back-off recorded on its
    // head) and a run whose tick waits in the backlog is not woken at all (sweep-index.ts).
    const sweepNow = (now?: number) => sweep(runtime.engine, { now: now ?? Date.now() });
    const every = options.sweepEveryMs ?? 2_000;
    let sweeping = false;
    const timer =
      every > 0
        ? setInterval(() => {
            if (sweeping) return;
            sweeping = true;
            sweepNow()
              .catch(() => undefined)
              .finally(() => {
                sweeping = false;
              });
          }, every)
        : undefined;
    cleanups.push(async () => clearInterval(timer));

    // The schedules: the deployed schedule handler, fed the firings the pure cron says are due.
    const scheduleHandler = scheduleHandlerFor(async () => runtime);
    const schedules = new LocalScheduleTimer(runtime.engine.registry.schedules(), scheduleHandler, LOCAL_CALLER.tenant, Date.now());
    const fireSchedules = (now?: number) => schedules.tick(now ?? Date.now());
    const scheduleEvery = options.scheduleEveryMs ?? 1_000;
    let firing = false;
    const scheduleTimer =
      scheduleEvery > 0 && runtime.engine.registry.schedules().length > 0
        ? setInterval(() => {
            if (firing) return;
            firing = true;
            fireSchedules()
              .catch(() => undefined)
              .finally(() => {
                firing = false;
              });
          }, scheduleEvery)
        : undefined;
    cleanups.push(async () => clearInterval(scheduleTimer));

    return {
      apiUrl: `http://127.0.0.1:${port}`,
      uiUrl: `http://127.0.0.1:${port}/ui/`,
      port,
      dynamo: emulators?.dynamo ?? 'external',
      resources,
      env,
      telemetry: telemetryOf({ ...process.env, ...env }),
      runtime,
      runner,
      workerLog,
      workDir,
      sweepNow,
      schedules,
      fireSchedules,
      stop: () => runCleanups(cleanups),
    };
  } catch (error) {
    await runCleanups(cleanups);
    throw error;
  }
}

/**
 * `--otlp URL` as the standard variables: spans on, to URL/v1/traces (and URL/v1/metrics when
 * metrics are on), whatever per-signal endpoint or OTEL_TRACES_EXPORTER the shell has (empty is
 * unset, as the spec says). OTEL_SDK_DISABLED=true still wins.
 */
function otlpShorthand(url: string | undefined): Record<string, string> {
  if (!url) return {};
  return { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: url, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '', OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: '' };
}

function telemetryOf(env: Record<string, string | undefined>): LocalTelemetry {
  const tracing = env.LOGBOOK_TRACING;
  const config = otelConfig(env, tracing === 'otlp' || tracing === 'off' ? { traces: tracing === 'otlp' } : {});
  const where = (t: { url: string; protocol: OtlpProtocol } | undefined) => (t ? { url: t.url, protocol: t.protocol } : undefined);
  const traces = where(config.traces);
  const metrics = where(config.metrics);
  return { ...(traces ? { traces } : {}), ...(metrics ? { metrics } : {}), warnings: config.warnings };
}

async function runCleanups(cleanups: (() => Promise<void>)[]): Promise<void> {
  while (cleanups.length > 0) {
    const next = cleanups.pop();
    await next?.().catch(() => undefined);
  }
}
