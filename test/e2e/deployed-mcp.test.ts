/**
 * A stdio MCP server, deployed: the MCP example (examples/mcp-agent/agents.ts, whose warehouse
 * server has `transport.bundle`, behind handler files of its own) is synthesized WITH bundling in
 * a user's own stack, and its
 * worker and API bundles run from cdk.out, in a temporary folder with no node_modules anywhere
 * above or inside it, in plain `node` processes with the environment the template sets (and cwd
 * and LAMBDA_TASK_ROOT at the code root, as Lambda has them), against the emulators. The API
 * bundle starts a run without starting the server; the worker bundle starts the bundled server at
 * the first tool call and the run completes through all three of its tools.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Logbook } from 'logbook/cdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userApp } from '../infra/user-app.js';
import { createTestStack, endpointsFor, type DynamoTarget, type TestStack } from '../setup/emulator-context.js';
import { fakeEventBridge } from '../setup/fake-eventbridge.js';
import { deployedFunctions, readTemplate, resolveVariables, type DeployedFunction } from './deployed-artifact-assembly.js';
import { apiEvent, deliverTicks } from './deployed-artifact-driver.js';
import { Sandbox } from './deployed-artifact-sandbox.js';

const target: DynamoTarget | undefined = endpointsFor('dynamodb-local') ? 'dynamodb-local' : endpointsFor('dynalite') ? 'dynalite' : undefined;
const STACK = 'UserStack';
const AGENTS = 'examples/mcp-agent/agents.ts';
const IAM_CALLER = { iam: { accountId: '111122223333', userArn: 'arn:aws:iam::111122223333:user/dev' } };

type ApiResponse = { statusCode: number; body: string };
type Spawned = { fn: string; command: string; args: string[] };

let outdir: string;
let functions: Record<string, DeployedFunction>;
let stack: TestStack;
let bus: Awaited<ReturnType<typeof fakeEventBridge>>;
let workDir: string;
const sandboxes: Sandbox[] = [];

const fn = (service: string): DeployedFunction => {
  const found = functions[service];
  if (!found) throw new Error(`no ${service} function in the template`);
  return found;
};

/** Every directory from `dir` up to the root that holds a node_modules (where Node could resolve a package from). */
function nodeModulesAbove(dir: string): string[] {
  const found: string[] = [];
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, 'node_modules'))) found.push(d);
    if (dirname(d) === d) return found;
  }
}

function spawned(service: string): Spawned[] {
  const file = join(workDir, `${service}.spawns.jsonl`);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Spawned);
}

async function sandbox(service: string): Promise<Sandbox> {
  const f = fn(service);
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    ...resolveVariables(f, readTemplate(outdir, STACK), { tableName: stack.resources.tableName, bucket: stack.resources.bucket, queueUrl: stack.resources.queueUrl }),
    AWS_REGION: 'us-east-1',
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_LAMBDA_FUNCTION_NAME: f.logicalId,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(f.memoryMb),
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    LAMBDA_TASK_ROOT: f.dir,
    LOGBOOK_DYNAMODB_ENDPOINT: stack.endpoints.dynamodb,
    LOGBOOK_S3_ENDPOINT: stack.endpoints.s3,
    LOGBOOK_SQS_ENDPOINT: stack.endpoints.sqs,
    LOGBOOK_EVENTS_ENDPOINT: bus.url,
    // The example's agents module passes this to its server (the server's own state file).
    WAREHOUSE_STATE: join(workDir, 'warehouse.json'),
    ARTIFACT_SPAWN_LOG: join(workDir, `${service}.spawns.jsonl`),
  };
  const s = await Sandbox.start(f, env, join(workDir, `${service}.log`), { cwd: f.dir });
  sandboxes.push(s);
  return s;
}

describe.skipIf(!target)('a stdio MCP server in the deployed artifact (cdk.out bundles) on the emulators', () => {
  beforeAll(async () => {
    const u = userApp({ bundle: true });
    // The application's own handler files over the example's agents module (the generated ones are
    // covered by deployed-artifact.test.ts; these also resolve the module where node_modules is a link).
    const handlers = Object.fromEntries(['worker', 'api', 'trigger'].map((k) => [k, `test/fixtures/apps/mcp-deployed/${k}.ts`]));
    new Logbook(u.stack, 'Agents', { agents: AGENTS, handlers });
    u.synth();
    outdir = u.outdir;
    functions = deployedFunctions(outdir, STACK);
    workDir = mkdtempSync(join(tmpdir(), 'logbook-artifact-mcp-'));
    [stack, bus] = await Promise.all([createTestStack(target as DynamoTarget, 'artifact-mcp'), fakeEventBridge()]);
  }, 300_000);

  afterAll(async () => {
    for (const s of sandboxes) s.stop();
    bus?.server.close();
    await stack?.dispose();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
    if (outdir) rmSync(outdir, { recursive: true, force: true });
  });

  it('ships the bundled server with the worker only, the tool listing with the worker, API and trigger, in folders no package resolves from', () => {
    for (const service of ['logbook-worker', 'logbook-api', 'logbook-trigger', 'logbook-sweeper']) {
      const f = fn(service);
      expect(f.dir.startsWith(tmpdir()), service).toBe(true);
      expect(nodeModulesAbove(f.dir), service).toEqual([]);
      expect(readdirSync(f.dir), service).not.toContain('node_modules');
    }
    const servers = readdirSync(join(fn('logbook-worker').dir, 'logbook-mcp', 'servers'));
    expect(servers).toEqual([expect.stringMatching(/warehouse-server-ts-[0-9a-f]{8}\.mjs$/)]);
    for (const service of ['logbook-api', 'logbook-trigger']) expect(readdirSync(join(fn(service).dir, 'logbook-mcp')), service).toEqual(['manifest.json']);
    expect(existsSync(join(fn('logbook-sweeper').dir, 'logbook-mcp'))).toBe(false);
  });

  it('the API bundle starts a run without starting the server; the worker bundle starts it at the first call and completes the run', async () => {
    const [api, worker] = await Promise.all([sandbox('logbook-api'), sandbox('logbook-worker')]);
    const call = (method: string, path: string, body?: unknown) => api.invoke<ApiResponse>(apiEvent(method, path, IAM_CALLER, body));

    // Phase 1: the API pins the MCP tools' schemas in run_started from the shipped listing.
    const created = await call('POST', '/runs', { agent: 'warehouse', runId: 'mcp-1', input: 'Ship one anvil to 1 Main St' });
    expect(created.statusCode, created.body).toBe(201);
    const { events: started } = JSON.parse((await call('GET', '/runs/mcp-1/events')).body) as { events: { type: string; tools?: { name: string; version: string }[] }[] };
    expect(started[0]?.tools?.map((t) => [t.name, t.version])).toEqual([
      ['warehouse_find_item', 'warehouse@1.0.0'],
      ['warehouse_reserve_item', 'warehouse@1.0.0'],
      ['warehouse_ship_order', 'warehouse@1.0.0'],
    ]);
    // Loading the agents module (init) and serving the start route spawned nothing; nor did the worker's init.
    expect(spawned('logbook-api')).toEqual([]);
    expect(spawned('logbook-worker')).toEqual([]);

    // Phase 2: the worker runs the run: find, reserve, ship, answer.
    const done = async () => {
      const { status } = JSON.parse((await call('GET', '/runs/mcp-1')).body) as { status: string };
      return status !== 'running' && status !== 'waiting';
    };
    const delivered = await deliverTicks(stack, worker, done);
    expect(delivered.itemFailures).toBe(0);
    const view = JSON.parse((await call('GET', '/runs/mcp-1')).body) as { status: string; result: unknown };
    expect(view.status).toBe('completed');
    expect(view.result).toBe('Done: shipped res-1 to 1 Main St, Springfield.');

    // The server ran from the worker's bundle, started once, by the runtime's own node.
    const serverScript = join(fn('logbook-worker').dir, 'logbook-mcp', 'servers', readdirSync(join(fn('logbook-worker').dir, 'logbook-mcp', 'servers'))[0] as string);
    expect(spawned('logbook-worker')).toEqual([{ fn: 'spawn', command: process.execPath, args: [serverScript] }]);
    expect(spawned('logbook-api')).toEqual([]);
    // Its side effects, in the state file the agents module pointed it at.
    const state = JSON.parse(readFileSync(join(workDir, 'warehouse.json'), 'utf8')) as { reservations: Record<string, { id: string }>; shipments: unknown[] };
    expect(Object.values(state.reservations).map((r) => r.id)).toEqual(['res-1']);
    expect(state.shipments).toEqual([{ reservationId: 'res-1', address: '1 Main St, Springfield' }]);
  });
});
