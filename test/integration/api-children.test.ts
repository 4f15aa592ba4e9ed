// Child runs through the HTTP API on the real DynamoDB, S3 and SQS adapters (emulators): a
// planner whose research call starts a researcher child that waits for a person's approval.
// GET /runs/{id} lists the child with its status and GET /runs?parent= pages through children,
// both scoped by the caller's tenant (another tenant gets 404 and an empty list).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoStore } from '../../lib/adapters/aws/dynamo-store.js';
import { S3BlobStore } from '../../lib/adapters/aws/s3-blob-store.js';
import { SqsStepQueue } from '../../lib/adapters/aws/sqs-step-queue.js';
import { ManualClock } from '../../lib/adapters/memory/manual-clock.js';
import { CryptoIds } from '../../lib/adapters/system/crypto-ids.js';
import { createApiApp } from '../../lib/api/app.js';
import { engineRunService } from '../../lib/api/engine-service.js';
import { createEngine, type EngineDeps } from '../../lib/engine/engine.js';
import { runStep } from '../../lib/engine/step-runner.js';
import { effectLog } from '../../lib/testing/side-effects.js';
import { createTestStack, endpointsFor, type TestStack } from '../setup/emulator-context.js';
import { familyAgents } from '../unit/children/family-agents.js';
import { CALLERS } from './api-world.js';

const target = endpointsFor('dynamodb-local') ? 'dynamodb-local' : 'dynalite';
const json = { 'content-type': 'application/json' };

describe.runIf(endpointsFor(target))(`child runs through the API on ${target}`, () => {
  let stack: TestStack;
  let deps: EngineDeps;
  let request: (path: string, init?: RequestInit & { caller?: number }) => Promise<{ status: number; body: Record<string, unknown> }>;
  const child = 'plan-1-c3-0';

  /** Step every run of the family until none made progress (what the workers would do). */
  async function settle(): Promise<void> {
    for (let round = 0; round < 20; round++) {
      let appended = 0;
      for (const runId of ['plan-1', child]) {
        const out = await runStep(deps, { tenant: 'acme', runId }, { owner: `w-${round}`, deadlineAt: Date.now() + 300_000 }).catch(() => undefined);
        appended += out?.appended ?? 0;
      }
      if (appended === 0) return;
    }
  }

  beforeAll(async () => {
    stack = await createTestStack(target, 'children');
    const clock = new ManualClock(Date.now());
    const store = new DynamoStore({ doc: stack.clients.doc, tableName: stack.resources.tableName, now: () => clock.now() });
    const agents = familyAgents(effectLog(), { childApproval: true });
    deps = createEngine({
      log: store,
      heads: store,
      inbox: store,
      blobs: new S3BlobStore({ s3: stack.clients.s3, bucket: stack.resources.bucket }),
      queue: new SqsStepQueue({ sqs: stack.clients.sqs, queueUrl: stack.resources.queueUrl }),
      models: { resolve: (id) => agents.model(id) },
      registry: agents.registry,
      clock,
      ids: new CryptoIds(() => clock.now()),
    });
    const app = createApiApp({ service: engineRunService(deps), caller: (c) => CALLERS[Number(c.req.header('x-caller') ?? 0)] });
    request = async (path, init = {}) => {
      const { caller = 0, headers, ...rest } = init;
      const res = await app.request(path, { ...rest, headers: { ...(headers as Record<string, string>), 'x-caller': String(caller) } });
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
    };
    const started = await request('/runs', { method: 'POST', headers: json, body: JSON.stringify({ agent: 'planner', runId: 'plan-1', input: 'plan a mug shop' }) });
    expect(started.status).toBe(201);
    await settle();
  });

  afterAll(async () => {
    await stack?.dispose();
  });

  it('GET /runs/{id} of the parent lists the child, parked for a person, and the open call shows its status', async () => {
    const parent = await request('/runs/plan-1');
    expect(parent.status).toBe(200);
    expect(parent.body).toMatchObject({
      status: 'waiting',
      children: [{ runId: child, callId: '3-0', status: 'awaiting_approval' }],
      waiting: [{ kind: 'child', callId: '3-0', tool: 'research', childRunId: child, childStatus: 'awaiting_approval' }],
    });
    const childView = await request(`/runs/${child}`);
    expect(childView.body).toMatchObject({ status: 'awaiting_approval', parent: { runId: 'plan-1', callId: '3-0' }, agent: { name: 'researcher' } });
  });

  it('GET /runs?parent= lists the children, tenant-scoped; another tenant gets 404 and an empty list', async () => {
    const list = await request('/runs?parent=plan-1');
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ runs: [expect.objectContaining({ runId: child, parent: { runId: 'plan-1', callId: '3-0' } })] });
    expect((await request('/runs?parent=plan-1', { caller: 1 })).body).toEqual({ runs: [] });
    expect((await request('/runs/plan-1', { caller: 1 })).status).toBe(404);
    expect((await request(`/runs/${child}`, { caller: 1 })).status).toBe(404);
    const bad = await request('/runs?parent=not%20an%20id');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('query.parent');
  });

  it("approving the child's call lets it answer; the parent completes with the child's answer", async () => {
    const approved = await request(`/runs/${child}/approve`, { method: 'POST', headers: json, body: JSON.stringify({ callId: '3-0', decision: 'approve' }) });
    expect(approved.status).toBe(202);
    await settle();
    const parent = await request('/runs/plan-1');
    expect(parent.body).toMatchObject({
      status: 'completed',
      result: 'plan: findings: {"topic":"mugs","fact":"mugs hold coffee"}',
      children: [{ runId: child, status: 'completed' }],
    });
    expect(parent.body.waiting).toBeUndefined();
  });
});
