import { beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, MemoryBlobStore, MemoryStepQueue, MemoryStore, SequentialIds } from '../../../lib/adapters/memory/index.js';
import { createApiApp } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import type { Caller } from '../../../lib/api/tenant.js';
import { AgentRegistry } from '../../../lib/authoring/registry.js';
import { createEngine, type EngineDeps } from '../../../lib/engine/engine.js';
import { runStep } from '../../../lib/engine/step-runner.js';
import { StaticModelResolver } from '../../../lib/models/scripted-model.js';
import { SUPPORT_MODEL_ID, supportAgent, supportModel } from '../../../examples/support-agent/agent.js';
import { MemoryLedger } from '../../../examples/support-agent/ledger.js';
import { SupportServices } from '../../../examples/support-agent/services.js';

let deps: EngineDeps;
let queue: MemoryStepQueue;
let clock: ManualClock;

/** The app with a caller chosen per request by a test header (the Lambda handler uses the authorizer). */
function app() {
  return createApiApp({
    service: engineRunService(deps),
    caller: (c): Caller | undefined => {
      const tenant = c.req.header('x-test-tenant');
      return tenant ? { tenant, principal: `user-of-${tenant}` } : undefined;
    },
  });
}

async function call(method: string, path: string, options: { tenant?: string | null; body?: unknown; raw?: string } = {}) {
  const headers: Record<string, string> = {};
  if (options.tenant !== null) headers['x-test-tenant'] = options.tenant ?? 'acme';
  if (options.body !== undefined || options.raw !== undefined) headers['content-type'] = 'application/json';
  const res = await app().request(path, {
    method,
    headers,
    ...(options.raw !== undefined ? { body: options.raw } : options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await res.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are inspected loosely
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, any>) : undefined };
}

/** Drive queued ticks through the engine, as the worker would. */
async function drain(max = 50) {
  for (let i = 0; i < max; i++) {
    const next = queue.take();
    if (!next) return;
    await runStep(deps, next.tick, { owner: `w${i}`, deadlineAt: clock.now() + 300_000 });
  }
}

beforeEach(() => {
  const store = new MemoryStore();
  queue = new MemoryStepQueue();
  clock = new ManualClock(Date.UTC(2026, 10, 1));
  const services = new SupportServices(new MemoryLedger(), { now: () => clock.now() });
  deps = createEngine({
    log: store,
    heads: store,
    inbox: store,
    blobs: new MemoryBlobStore(),
    queue,
    models: new StaticModelResolver({ [SUPPORT_MODEL_ID]: supportModel() }),
    registry: new AgentRegistry().register(supportAgent(services)),
    clock,
    ids: new SequentialIds('t'),
  });
});

describe('POST /runs', () => {
  it('creates a run (201), and the same runId again returns it (200), never a second run', async () => {
    const body = { agent: 'support', input: 'order arrived damaged', runId: 'r-1' };
    const first = await call('POST', '/runs', { body });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ runId: 'r-1', status: 'running', created: true });
    const again = await call('POST', '/runs', { body });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ runId: 'r-1', created: false });
    expect(queue.messages).toHaveLength(1);
  });

  it('answers 409 for the same runId with a different request', async () => {
    await call('POST', '/runs', { body: { agent: 'support', input: 'a', runId: 'r-2' } });
    const other = await call('POST', '/runs', { body: { agent: 'support', input: 'b', runId: 'r-2' } });
    expect(other.status).toBe(409);
    expect(other.body?.error.code).toBe('run_conflict');
    // The caller's run id, never the storage key (`RUN#<tenant>#<runId>`) with the tenant in it.
    expect(other.body?.error.message).toBe('run r-2 already exists with a different request');
  });

  it('answers 400 with the path of each bad field', async () => {
    const res = await call('POST', '/runs', { body: { agent: '', input: 'x', runId: 'bad id', budgets: { maxSteps: 0 }, tenant: 'evil' } });
    expect(res.status).toBe(400);
    const paths = (res.body?.error.issues as { path: string }[]).map((i) => i.path).sort();
    expect(paths).toEqual(['body.agent', 'body.budgets.maxSteps', 'body.runId', 'body.tenant']);
  });

  it('answers 400 for malformed JSON and for an unknown agent', async () => {
    expect((await call('POST', '/runs', { raw: '{"agent":' })).status).toBe(400);
    const unknown = await call('POST', '/runs', { body: { agent: 'nope', input: 'x' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body?.error.issues[0].path).toBe('body.agent');
  });

  it('answers 401 without an authorized caller', async () => {
    expect((await call('GET', '/runs', { tenant: null })).status).toBe(401);
  });
});

describe('reading runs', () => {
  it('shows status, pinned versions, usage and the answer, and the paginated log', async () => {
    await call('POST', '/runs', { body: { agent: 'support', input: 'refund please', runId: 'r-3' } });
    await drain();
    const run = await call('GET', '/runs/r-3');
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({
      runId: 'r-3',
      status: 'completed',
      agent: { name: 'support', version: '1.0.0' },
      pinned: { model: SUPPORT_MODEL_ID, prompt: { version: 'v14' } },
      usage: { steps: 4 },
    });
    expect(String(run.body?.result)).toContain('Refunded order');
    const page1 = await call('GET', '/runs/r-3/events?limit=5');
    expect(page1.body?.events.map((e: { seq: number }) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(page1.body?.next).toBe(5);
    const page2 = await call('GET', `/runs/r-3/events?after=${page1.body?.next}&limit=100`);
    expect(page2.body?.events.at(-1).type).toBe('run_completed');
    const list = await call('GET', '/runs?status=completed');
    expect(list.body?.runs.map((r: { runId: string }) => r.runId)).toEqual(['r-3']);
  });

  it('validates query and path parameters', async () => {
    expect((await call('GET', '/runs?limit=0')).body?.error.issues[0].path).toBe('query.limit');
    expect((await call('GET', '/runs?status=sleeping')).body?.error.issues[0].path).toBe('query.status');
    expect((await call('GET', '/runs/a%20b')).body?.error.issues[0].path).toBe('path.runId');
  });

  it("answers 404 for an unknown run and for another tenant's run, never its data", async () => {
    await call('POST', '/runs', { tenant: 'acme', body: { agent: 'support', input: 'secret stuff', runId: 'r-4' } });
    expect((await call('GET', '/runs/nope')).status).toBe(404);
    for (const [method, path, body] of [
      ['GET', '/runs/r-4', undefined],
      ['GET', '/runs/r-4/events', undefined],
      ['POST', '/runs/r-4/cancel', {}],
      ['POST', '/runs/r-4/resolve', { callId: '3-0', outcome: 'succeeded' }],
    ] as const) {
      const res = await call(method, path, { tenant: 'globex', ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(JSON.stringify(res.body)).not.toContain('secret');
      expect(JSON.stringify(res.body)).not.toContain('acme');
    }
    expect((await call('GET', '/runs', { tenant: 'globex' })).body?.runs).toEqual([]);
    // The same id is free for the other tenant: ids are scoped by tenant.
    expect((await call('POST', '/runs', { tenant: 'globex', body: { agent: 'support', input: 'x', runId: 'r-4' } })).status).toBe(201);
  });
});

describe('cancel and resolve', () => {
  it('queues a cancel (202) with or without a body, and refuses it for a finished run (409)', async () => {
    await call('POST', '/runs', { body: { agent: 'support', input: 'x', runId: 'r-5' } });
    const res = await call('POST', '/runs/r-5/cancel', { raw: '' });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ runId: 'r-5', accepted: true });
    expect(queue.messages.map((m) => m.dedupeId)).toContain(`r-5:inbox:${res.body?.inboxId}`);
    await drain();
    expect((await call('GET', '/runs/r-5')).body?.status).toBe('cancelled');
    expect((await call('POST', '/runs/r-5/cancel', { body: { reason: 'again' } })).status).toBe(409);
  });

  it('never names the storage key or the tenant in a 409', async () => {
    await call('POST', '/runs', { body: { agent: 'support', input: 'a', runId: 'ops-1' } });
    await drain();
    const refusals = [
      await call('POST', '/runs', { body: { agent: 'support', input: 'b', runId: 'ops-1' } }),
      await call('POST', '/runs/ops-1/cancel', { body: {} }),
      await call('POST', '/runs/ops-1/resolve', { body: { callId: '3-0', outcome: 'succeeded' } }),
      await call('POST', '/runs/ops-1/resolve', { body: { action: 'retry' } }),
    ];
    for (const res of refusals) {
      expect(res.status).toBe(409);
      expect(res.body?.error.message).not.toMatch(/RUN#|acme/);
    }
  });

  it('refuses a resolution with no open attention on that call (409) and validates the body (400)', async () => {
    await call('POST', '/runs', { body: { agent: 'support', input: 'x', runId: 'r-6' } });
    expect((await call('POST', '/runs/r-6/resolve', { body: { callId: '3-0', outcome: 'succeeded' } })).status).toBe(409);
    expect((await call('POST', '/runs/r-6/resolve', { body: { action: 'retry' } })).status).toBe(409);
    const bad = await call('POST', '/runs/r-6/resolve', { body: { callId: '3-0', outcome: 'maybe' } });
    expect(bad.status).toBe(400);
    expect(bad.body?.error.issues[0].path).toBe('body.outcome');
    expect((await call('POST', '/runs/r-6/resolve', { body: { callId: 'x', outcome: 'rerun' } })).body?.error.issues[0].path).toBe('body.callId');
  });
});

describe('GET /openapi.json', () => {
  it('documents every route', async () => {
    const res = await app().request('/openapi.json');
    const doc = (await res.json()) as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/agents/{name}/schema',
      '/attachments',
      '/attachments/{sha256}',
      '/run-counts',
      '/runs',
      '/runs/{runId}',
      '/runs/{runId}/approve',
      '/runs/{runId}/blobs/{sha256}',
      '/runs/{runId}/cancel',
      '/runs/{runId}/chat',
      '/runs/{runId}/events',
      '/runs/{runId}/fork',
      '/runs/{runId}/messages',
      '/runs/{runId}/operations',
      '/runs/{runId}/resolve',
      '/runs/{runId}/signals',
      '/runs/{runId}/stream',
      '/workflows',
    ]);
    expect(Object.keys(doc.paths['/runs'] ?? {}).sort()).toEqual(['get', 'post']);
  });

  it('documents child runs: the parent filter of the listing, parent and children of a run, child waits', async () => {
    const doc = (await (await app().request('/openapi.json')).json()) as {
      paths: Record<string, { get?: { parameters?: { name: string; in: string }[] } }>;
      components: { schemas: Record<string, { properties?: Record<string, { enum?: string[] }> } | undefined> };
    };
    expect(doc.paths['/runs']?.get?.parameters?.map((p) => `${p.in}:${p.name}`)).toContain('query:parent');
    // Run extends RunSummary (allOf): `parent` is on the summary, `children` on the run.
    expect(Object.keys(doc.components.schemas.RunSummary?.properties ?? {})).toContain('parent');
    const run = doc.components.schemas.Run as { allOf?: { properties?: Record<string, unknown> }[] };
    expect(run.allOf?.flatMap((part) => Object.keys(part.properties ?? {}))).toContain('children');
    expect(Object.keys(doc.components.schemas.ChildRun?.properties ?? {}).sort()).toEqual(['callId', 'runId', 'status', 'summary']);
    expect(doc.components.schemas.Wait?.properties?.kind?.enum).toContain('child');
    expect(Object.keys(doc.components.schemas.Wait?.properties ?? {})).toEqual(expect.arrayContaining(['childRunId', 'childStatus']));
  });

  it("documents workflows: the start request, the kind of a run, the registered workflows and a run's operations", async () => {
    const doc = (await (await app().request('/openapi.json')).json()) as {
      paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
      components: { schemas: Record<string, { properties?: Record<string, { enum?: string[] }>; required?: string[] } | undefined> };
    };
    const start = doc.components.schemas.StartRunRequest;
    expect(Object.keys(start?.properties ?? {})).toEqual(expect.arrayContaining(['agent', 'workflow', 'version', 'input']));
    // Exactly one of the two: neither is required by itself.
    expect(start?.required ?? []).not.toContain('agent');
    expect(doc.components.schemas.RunSummary?.properties?.kind?.enum).toEqual(['agent', 'workflow']);
    expect(Object.keys(doc.components.schemas.RunSummary?.properties ?? {})).toContain('workflow');
    expect(Object.keys(doc.components.schemas.Operation?.properties ?? {})).toEqual(
      expect.arrayContaining(['op', 'callId', 'kind', 'name', 'status', 'startedAt', 'endedAt', 'child', 'error']),
    );
    expect(Object.keys(doc.paths['/runs/{runId}/operations']?.get?.responses ?? {})).toEqual(expect.arrayContaining(['200', '404', '409']));
    expect(Object.keys(doc.components.schemas.Workflow?.properties ?? {}).sort()).toEqual(['latest', 'versions', 'workflow']);
  });
});
