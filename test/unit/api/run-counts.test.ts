// GET /run-counts and GET /runs through the API app on the memory world: a run awaiting approval
// is listed under "all" and under its own status, every status is counted exactly (the total is
// every run the listing pages through), counts are per tenant, and the inspector's status list is
// the API's (the page once summed six of the seven statuses: "All (2)" with three runs).
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApiApp } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import { RunStatusSchema } from '../../../lib/api/schemas.js';
import type { Caller } from '../../../lib/api/tenant.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { waitForSignal } from '../../../lib/authoring/waits.js';
import { RUN_STATUSES as PORT_STATUSES } from '../../../lib/ports/run-heads.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { RUN_STATUSES as PAGE_STATUSES } from '../../../dev/ui/client/types.js';
import { drain } from '../control/helpers.js';

let t: ReturnType<typeof scriptedWorld>;

function world() {
  const refund = defineTool({
    name: 'issue_refund',
    version: '1',
    description: 'Refund.',
    input: z.object({ orderId: z.string(), amountCents: z.number().int().positive() }),
    approval: 'always',
    execute: async (a) => ({ refunded: a.amountCents }),
  });
  const wait = waitForSignal({
    name: 'wait_for_return',
    description: 'Wait.',
    signal: 'parcel_returned',
    payload: z.object({ trackingId: z.string() }),
    timeoutSeconds: 600,
  });
  return scriptedWorld({
    tools: [refund, wait],
    script: [
      (r) => {
        const task = r.messages[0]?.role === 'user' ? r.messages[0].content : '';
        if (task.includes('wait')) return { calls: [{ name: 'wait_for_return', args: {} }] };
        if (task.includes('refund')) return { calls: [{ name: 'issue_refund', args: { orderId: 'o-1', amountCents: 4500 } }] };
        return { text: 'hello' };
      },
      { text: 'done' },
    ],
  });
}

async function call(path: string, options: { method?: string; tenant?: string; body?: unknown } = {}) {
  const app = createApiApp({
    service: engineRunService(t.worker.deps),
    caller: (c): Caller | undefined => ({ tenant: c.req.header('x-test-tenant') ?? 't', principal: 'p' }),
  });
  const res = await app.request(path, {
    method: options.method ?? 'GET',
    headers: { 'x-test-tenant': options.tenant ?? 't', ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are inspected loosely
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

async function start(runId: string, input: string, tenant = 't') {
  expect((await call('/runs', { method: 'POST', tenant, body: { agent: 'agent', input, runId } })).status).toBe(201);
  await drain(t.world, t.worker);
}

beforeEach(() => {
  t = world();
});

describe('GET /run-counts and the listing of every run', () => {
  it('lists a run awaiting approval among all runs and counts each status exactly', async () => {
    await start('r-hello', 'say hello');
    await start('r-wait', 'please wait');
    await start('r-refund', 'refund it');
    expect((await call('/runs/r-refund')).body.status).toBe('awaiting_approval');

    const all = await call('/runs?limit=100');
    expect(all.body.runs.map((r: { runId: string }) => r.runId).sort()).toEqual(['r-hello', 'r-refund', 'r-wait']);
    const counts = await call('/run-counts');
    expect(counts.status).toBe(200);
    expect(counts.body).toEqual({
      counts: { running: 0, waiting: 1, awaiting_approval: 1, parked: 0, completed: 1, failed: 0, cancelled: 0 },
      total: 3,
    });
    // Each count is what the listing by that status shows.
    for (const [status, n] of Object.entries(counts.body.counts as Record<string, number>)) {
      expect((await call(`/runs?status=${status}&limit=100`)).body.runs, status).toHaveLength(n);
    }
    // Another tenant sees none of them.
    expect((await call('/run-counts', { tenant: 'other' })).body.total).toBe(0);
  });

  it('moves a run between counts as its status changes', async () => {
    await start('r-refund', 'refund it');
    const waiting = (await call('/runs/r-refund')).body.waiting[0];
    expect(
      (await call('/runs/r-refund/approve', { method: 'POST', body: { callId: waiting.callId, decision: 'approve', argsHash: waiting.argsHash } })).status,
    ).toBe(202);
    await drain(t.world, t.worker);
    expect((await call('/run-counts')).body).toMatchObject({ counts: { awaiting_approval: 0, completed: 1 }, total: 1 });
  });

  it('answers 401 without an authorized caller, as every route does', async () => {
    const app = createApiApp({ service: engineRunService(t.worker.deps), caller: () => undefined });
    expect((await app.request('/run-counts')).status).toBe(401);
  });

  it('the inspector knows every status the API and the store have', () => {
    expect([...PAGE_STATUSES]).toEqual(RunStatusSchema.options);
    expect([...PORT_STATUSES]).toEqual(RunStatusSchema.options);
  });
});
