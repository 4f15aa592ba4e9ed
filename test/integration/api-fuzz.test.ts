// Hostile input, from outside: 10,000 generated requests (seeded, see api-fuzz-requests.ts) sent
// to the API app in-process, backed by the real DynamoDB, S3 and SQS adapters on the emulators so
// that SDK validation errors surface as they would on AWS. No answer may be a 5xx, every refusal
// carries an error code, and no run may be created by a request that is not a valid start.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DynamoStore } from '../../lib/adapters/aws/dynamo-store.js';
import { S3BlobStore } from '../../lib/adapters/aws/s3-blob-store.js';
import { SqsStepQueue } from '../../lib/adapters/aws/sqs-step-queue.js';
import { ManualClock } from '../../lib/adapters/memory/manual-clock.js';
import { CryptoIds } from '../../lib/adapters/system/crypto-ids.js';
import { createApiApp } from '../../lib/api/app.js';
import { DEFAULT_BODY_LIMITS, shapeProblem } from '../../lib/api/body-guard.js';
import { engineRunService } from '../../lib/api/engine-service.js';
import { StartRunBodySchema } from '../../lib/api/schemas.js';
import type { Caller } from '../../lib/api/tenant.js';
import { AgentRegistry, defineAgent } from '../../lib/engine/agents.js';
import { createEngine, type EngineDeps } from '../../lib/engine/engine.js';
import { runStep } from '../../lib/engine/step-runner.js';
import { defineTool } from '../../lib/engine/tools.js';
import { ToolOutcomeUnknownError } from '../../lib/core/errors.js';
import { ScriptedModel, StaticModelResolver } from '../../lib/models/scripted-model.js';
import { SUPPORT_MODEL_ID, supportAgent, supportModel } from '../../examples/support-agent/agent.js';
import { MemoryLedger } from '../../examples/support-agent/ledger.js';
import { SupportServices } from '../../examples/support-agent/services.js';
import { createTestStack, endpointsFor, type TestStack } from '../setup/emulator-context.js';
import { fuzzRequest, prng, type FuzzContext, type FuzzRequest } from './api-fuzz-requests.js';

const target = endpointsFor('dynamodb-local') ? 'dynamodb-local' : 'dynalite';
const SEED = Number(process.env.LOGBOOK_FUZZ_SEED ?? 20261201);
const REQUESTS = 10_000;
const IN_FLIGHT = 8;
const TENANTS: (Caller | undefined)[] = [{ tenant: 'acme', principal: 'alice' }, { tenant: 'globex', principal: 'bob' }, undefined];

/** An agent whose one escalate call never learns its outcome: the run parks with an open attention. */
function deskAgent() {
  const approve = defineTool({
    name: 'approve',
    version: '1',
    description: 'Approve something irreversible.',
    input: z.object({}),
    policy: 'escalate',
    timeoutMs: 1_000,
    async execute() {
      throw new ToolOutcomeUnknownError('the line went dead');
    },
  });
  return defineAgent({
    name: 'desk',
    version: '1',
    model: { id: 'scripted:desk', maxOutputTokens: 64, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 1 } },
    system: { version: 'd1', text: 'Approve.' },
    tools: [approve],
    graceMs: 1_000,
  });
}

/** Our own oracle of a valid start: only such a request may create a run. */
function isValidStart(req: FuzzRequest): boolean {
  if (req.method.toUpperCase() !== 'POST' || req.path.split('?')[0] !== '/runs') return false;
  if (!/^application\/([\w.-]+\+)?json$/i.test((req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '')) return false;
  const bytes = typeof req.body === 'string' ? Buffer.from(req.body) : Buffer.from(req.body ?? []);
  if (bytes.byteLength > DEFAULT_BODY_LIMITS.maxBodyBytes) return false;
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return false;
  }
  if (shapeProblem(value, DEFAULT_BODY_LIMITS.maxJsonDepth)) return false;
  const parsed = StartRunBodySchema.safeParse(value);
  return parsed.success && ['support', 'desk'].includes(parsed.data.agent);
}

describe.runIf(endpointsFor(target))(`the API under ${REQUESTS} hostile requests on ${target}`, () => {
  let stack: TestStack;
  let store: DynamoStore;
  let deps: EngineDeps;
  const clock = new ManualClock(Date.now());
  const errors: string[] = [];

  const app = () =>
    createApiApp({
      service: engineRunService(deps),
      caller: (c) => TENANTS[Number(c.req.header('x-fuzz-caller') ?? 0)],
      logger: { info() {}, warn() {}, error: (m, f) => errors.push(`${m}: ${String(f?.error)}`) },
    });

  async function send(req: FuzzRequest, caller: number) {
    const method = req.method;
    // fetch cannot even build a GET/HEAD with a body; the Lambda adapter's share is tested apart.
    const body = ['GET', 'HEAD'].includes(method.toUpperCase()) ? undefined : req.body;
    const res = await app().request(req.path, { method, headers: { ...req.headers, 'x-fuzz-caller': String(caller) }, ...(body !== undefined ? { body } : {}) });
    return { status: res.status, text: await res.text(), allow: res.headers.get('allow') };
  }

  async function countRuns(): Promise<number> {
    let n = 0;
    for (const tenant of ['acme', 'globex']) {
      let cursor: string | undefined;
      do {
        const page = await store.listRuns(tenant, { limit: 100, ...(cursor ? { cursor } : {}) });
        n += page.runs.length;
        cursor = page.cursor;
      } while (cursor);
    }
    return n;
  }

  beforeAll(async () => {
    stack = await createTestStack(target, 'fuzz');
    store = new DynamoStore({ doc: stack.clients.doc, tableName: stack.resources.tableName, now: () => clock.now() });
    const services = new SupportServices(new MemoryLedger(), { now: () => clock.now() });
    deps = createEngine({
      log: store,
      heads: store,
      inbox: store,
      blobs: new S3BlobStore({ s3: stack.clients.s3, bucket: stack.resources.bucket }),
      queue: new SqsStepQueue({ sqs: stack.clients.sqs, queueUrl: stack.resources.queueUrl }),
      models: new StaticModelResolver({
        [SUPPORT_MODEL_ID]: supportModel(),
        'scripted:desk': new ScriptedModel([{ text: 'Approving.', calls: [{ name: 'approve', args: {} }] }, { text: 'Done.' }]),
      }),
      registry: new AgentRegistry().register(supportAgent(services)).register(deskAgent()),
      clock,
      ids: new CryptoIds(() => clock.now()),
    });
  });

  afterAll(async () => {
    await stack?.dispose();
  });

  it('answers no request with a 5xx, refuses each with a code, and creates runs only for valid starts', async () => {
    // A world worth attacking: runs of two tenants, listing cursors, and a run parked on an open attention.
    const seeded = ['fz-1', 'fz-2', 'fz-3', 'fz-4', 'fz-5'];
    for (const [i, runId] of seeded.entries()) {
      expect((await send({ method: 'POST', path: '/runs', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ agent: 'support', runId, input: 'seed' }), label: 'seed' }, i % 2)).status).toBe(201);
    }
    expect((await send({ method: 'POST', path: '/runs', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ agent: 'desk', runId: 'fz-parked', input: 'approve it' }), label: 'seed' }, 0)).status).toBe(201);
    const parked = { tenant: 'acme', runId: 'fz-parked' };
    await runStep(deps, parked, { owner: 'seed', deadlineAt: clock.now() + 300_000 });
    await clock.advance(5_000);
    await runStep(deps, parked, { owner: 'seed', deadlineAt: clock.now() + 300_000 });
    const head = await store.getHead(parked);
    expect(head?.status).toBe('parked');
    const callId = head?.attention[0]?.callId ?? '';
    await clock.advance(5_000); // past rerunNotBefore: a "rerun" resolution is accepted too
    const cursors: string[] = [];
    for (const [caller, query] of [[0, 'limit=1'], [0, 'limit=1&status=running'], [1, 'limit=1']] as const) {
      const page = JSON.parse((await send({ method: 'GET', path: `/runs?${query}`, headers: {}, label: 'seed' }, caller)).text) as { cursor?: string };
      if (page.cursor) cursors.push(page.cursor);
    }
    expect(cursors).toHaveLength(3);
    const ctx: FuzzContext = { runIds: [...seeded, 'fz-parked'], parked: { runId: 'fz-parked', callId }, cursors };
    const before = await countRuns();

    // The fuzz: bounded concurrency, deterministic requests.
    const r = prng(SEED);
    const requests = Array.from({ length: REQUESTS }, () => ({ req: fuzzRequest(r, ctx), caller: r.pick([0, 0, 0, 1, 2]) }));
    const statuses = new Map<number, number>();
    const failures: string[] = [];
    let created = 0;
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < requests.length; i = next++) {
        const { req, caller } = requests[i]!;
        const res = await send(req, caller);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const where = `#${i} (seed ${SEED}) ${req.method} ${req.path.slice(0, 120)} [${req.label}]`;
        if (res.status >= 500) failures.push(`${res.status} ${where}: ${res.text.slice(0, 200)}`);
        if (res.status === 201) {
          created++;
          if (!isValidStart(req)) failures.push(`created a run for an invalid start ${where}`);
        }
        if (res.status >= 400 && req.method.toUpperCase() !== 'HEAD') {
          const code = (() => {
            try {
              return (JSON.parse(res.text) as { error?: { code?: unknown } }).error?.code;
            } catch {
              return undefined;
            }
          })();
          if (typeof code !== 'string') failures.push(`${res.status} without an error code ${where}: ${res.text.slice(0, 100)}`);
        }
        if (res.status === 405 && !res.allow) failures.push(`405 without Allow ${where}`);
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));

    console.info(`api fuzz: ${REQUESTS} requests (seed ${SEED}), statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}, ${created} runs created by valid starts`);
    expect(failures.slice(0, 20)).toEqual([]);
    expect(errors.slice(0, 5)).toEqual([]);
    expect([...statuses.keys()].filter((s) => s >= 500)).toEqual([]);
    // Every run in the table is a seeded one or was answered 201 to a valid start.
    expect(await countRuns()).toBe(before + created);
    // The mix reached every kind of refusal, not only the first validator.
    for (const status of [400, 401, 404, 405, 409, 413, 415]) expect(statuses.get(status) ?? 0, `status ${status}`).toBeGreaterThan(0);
  }, 180_000);
});
