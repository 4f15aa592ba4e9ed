// Workflows through the HTTP API (the real Hono app over a memory world): started by POST /runs
// with `workflow`, listed by GET /workflows, shown by the run views and GET /runs/{id}/operations,
// signalled, approved and cancelled through the same routes as agent runs.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MemoryAdmission } from '../../../lib/adapters/memory/memory-admission.js';
import { createApiApp } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { defineWorkflow } from '../../../lib/authoring/define-workflow.js';
import { ScriptedModel } from '../../../lib/models/scripted-model.js';
import { spawnWorker } from '../../../lib/testing/world.js';
import type { WorkerProcess } from '../../../lib/testing/world.js';
import { nothingWritten } from '../agents/agent-world.js';
import { drain, headOf, later } from '../control/helpers.js';
import { haltAt } from '../engine/helpers.js';
import { workflowWorld } from '../workflows/world.js';

const orders: Record<string, number> = { o_1: 1200, o_big: 90_000 };

const refundReview = defineWorkflow({
  name: 'refund-review',
  version: '1.0.0',
  description: 'refund an order, asking a manager above 500 dollars',
  input: z.object({ orderId: z.string(), reason: z.string() }),
  output: z.object({ refundedCents: z.number() }),
  async run(ctx, input) {
    const total = await ctx.step('load order', () => orders[input.orderId] ?? 0, { policy: 'rerun' });
    if (total > 50_000) {
      const answer = await ctx.waitForSignal('manager-approved', { payload: z.object({ ok: z.boolean() }), timeoutSeconds: 3 * 86_400 });
      if (answer.timedOut || !answer.payload.ok) return { refundedCents: 0 };
    }
    const approval = await ctx.approval('send refund', { args: { cents: total }, schema: z.object({ cents: z.number().max(100_000) }) });
    return { refundedCents: approval.approved ? approval.args.cents : 0 };
  },
});
// A second version, registered beside the first: new runs get it, GET /workflows lists both.
const refundReviewV2 = defineWorkflow({ ...refundReview, version: '2.0.0' });

const waiter = defineWorkflow({
  name: 'waiter',
  version: '1',
  async run(ctx) {
    await ctx.waitForSignal('go', { payload: z.object({}), timeoutSeconds: 86_400 });
    return 'went';
  },
});
const parent = defineWorkflow({
  name: 'parent',
  version: '1',
  async run(ctx) {
    return ctx.workflow(waiter, {});
  },
});
// A write that must not repeat (escalate, the default): cut off by a crash, it is a person's to answer.
const payout = defineWorkflow({
  name: 'payout',
  version: '1',
  async run(ctx) {
    const receipt = await ctx.step('send money', () => ({ receipt: 'live' }), { timeoutSeconds: 60 });
    return { receipt };
  },
});

const helper = defineAgent({
  name: 'helper',
  version: '1',
  model: { id: 'scripted:helper', maxOutputTokens: 64 },
  system: { version: 's', text: 'hi' },
  tools: [],
});

function setup(options: { maxActiveRuns?: number } = {}) {
  const t = workflowWorld({
    workflows: [refundReview, refundReviewV2, parent, waiter, payout],
    agents: [helper],
    models: { 'scripted:helper': () => new ScriptedModel([{ text: 'done' }]) },
  });
  const worker: WorkerProcess =
    options.maxActiveRuns !== undefined
      ? spawnWorker(t.world, undefined, { config: { maxActiveRuns: options.maxActiveRuns, admissionRetryAfterS: 3 } }, { admission: new MemoryAdmission() })
      : t.worker;
  const app = createApiApp({ service: engineRunService(worker.deps), caller: () => ({ tenant: 't1', principal: 'alice' }) });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await app.request(path, {
      method,
      ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are inspected loosely
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
  };
  const run = (runId: string) => ({ tenant: 't1', runId });
  return { ...t, worker, call, run, drain: () => drain(t.world, worker) };
}

const paths = (res: { body: { error?: { issues?: { path: string }[] } } }) => (res.body.error?.issues ?? []).map((i) => i.path);

describe('POST /runs with a workflow', () => {
  it('starts it, signals it, approves its operation and shows its operations to the end, then its outcome names the workflow', async () => {
    const t = setup();
    const start = await t.call('POST', '/runs', { workflow: 'refund-review', runId: 'wf-a', input: { orderId: 'o_big', reason: 'broken' } });
    expect(start).toMatchObject({ status: 201, body: { runId: 'wf-a', created: true } });
    // The same request again is the same run.
    expect((await t.call('POST', '/runs', { workflow: 'refund-review', runId: 'wf-a', input: { orderId: 'o_big', reason: 'broken' } })).status).toBe(200);
    await t.drain();

    const view = await t.call('GET', '/runs/wf-a');
    expect(view.body).toMatchObject({
      kind: 'workflow',
      workflow: { name: 'refund-review', version: '2.0.0' },
      status: 'waiting',
      waiting: [{ callId: 'op-2', kind: 'signal', signal: 'manager-approved' }],
    });
    expect(view.body.pinned).toBeUndefined();
    const list = await t.call('GET', '/runs');
    expect(list.body.runs).toEqual([expect.objectContaining({ runId: 'wf-a', kind: 'workflow', workflow: { name: 'refund-review', version: '2.0.0' } })]);

    const waiting = await t.call('GET', '/runs/wf-a/operations');
    expect(waiting.status).toBe(200);
    expect(waiting.body).toMatchObject({ runId: 'wf-a', workflow: { name: 'refund-review', version: '2.0.0' } });
    expect(waiting.body.operations).toEqual([
      expect.objectContaining({ op: 1, callId: 'op-1', kind: 'step', name: 'load order', status: 'succeeded', result: 90_000, source: 'step' }),
      expect.objectContaining({ op: 2, kind: 'signal', name: 'manager-approved', status: 'started', waitsFor: { kind: 'signal', signal: 'manager-approved' } }),
    ]);
    expect(waiting.body.operations[1].deadline).toBe(new Date(t.world.clock.now() + 3 * 86_400_000).toISOString());
    expect(waiting.body.operations[1].endedAt).toBeUndefined();

    // The payload is checked against the JSON Schema the operation pinned: a 400 with its path, nothing queued.
    const bad = await t.call('POST', '/runs/wf-a/signals', { signal: 'manager-approved', payload: { ok: 'yes' } });
    expect(bad.status).toBe(400);
    expect(paths(bad)).toEqual(['body.payload']);
    expect(bad.body.error.issues[0].message).toMatch(/ok/);
    // A signal no operation waits for is a 409 with its own code, naming what the run waits for.
    const nobody = await t.call('POST', '/runs/wf-a/signals', { signal: 'cfo-approved', payload: { ok: true } });
    expect(nobody).toMatchObject({ status: 409, body: { error: { code: 'signal_not_awaited' } } });
    expect(nobody.body.error.message).toContain('"manager-approved"');
    expect(await t.world.storage.inbox.list(t.run('wf-a'))).toEqual([]);

    const signal = await t.call('POST', '/runs/wf-a/signals', { signal: 'manager-approved', payload: { ok: true } });
    expect(signal).toMatchObject({ status: 202, body: { callId: 'op-2', inboxId: 'signal-op-2' } });
    await t.drain();

    const asking = await t.call('GET', '/runs/wf-a');
    expect(asking.body).toMatchObject({
      status: 'awaiting_approval',
      waiting: [{ callId: 'op-3', kind: 'approval', tool: 'send refund', args: { cents: 90_000 } }],
    });
    // The edit must fit the approval's schema (400 naming body.args); then an edit within it.
    const tooMuch = await t.call('POST', '/runs/wf-a/approve', { callId: 'op-3', decision: 'edit', args: { cents: 200_000 } });
    expect(tooMuch.status).toBe(400);
    expect(paths(tooMuch)).toEqual(['body.args']);
    const approved = await t.call('POST', '/runs/wf-a/approve', {
      callId: 'op-3',
      decision: 'edit',
      args: { cents: 50_000 },
      argsHash: asking.body.waiting[0].argsHash,
    });
    expect(approved).toMatchObject({ status: 202, body: { callId: 'op-3' } });
    await t.drain();

    const done = await t.call('GET', '/runs/wf-a');
    expect(done.body).toMatchObject({ status: 'completed', kind: 'workflow', output: { refundedCents: 50_000 } });
    const ops = (await t.call('GET', '/runs/wf-a/operations')).body.operations as Record<string, unknown>[];
    expect(ops.map((o) => [o.op, o.kind, o.status, o.source])).toEqual([
      [1, 'step', 'succeeded', 'step'],
      [2, 'signal', 'succeeded', 'signal'],
      [3, 'approval', 'succeeded', 'human'],
    ]);
    expect(ops[1]).toMatchObject({ sentBy: 'alice', result: { ok: true } });
    for (const op of ops) expect(Date.parse(op.endedAt as string)).toBeGreaterThanOrEqual(Date.parse(op.startedAt as string));

    const notices = (t.world.storage.publisher?.notices ?? []) as Record<string, unknown>[];
    expect(notices.filter((n) => n.runId === 'wf-a')).toEqual([
      expect.objectContaining({ detailType: 'Agent Run Needs Approval', workflow: { name: 'refund-review', version: '2.0.0' } }),
      expect.objectContaining({ detailType: 'Agent Run Completed', workflow: { name: 'refund-review', version: '2.0.0' } }),
    ]);
  });

  it('pages through operations with after and limit', async () => {
    const t = setup();
    await t.call('POST', '/runs', { workflow: 'refund-review', version: '1.0.0', runId: 'wf-p', input: { orderId: 'o_big', reason: 'x' } });
    await t.drain();
    const first = await t.call('GET', '/runs/wf-p/operations?limit=1');
    expect(first.body).toMatchObject({ workflow: { version: '1.0.0' }, next: 1 });
    expect(first.body.operations.map((o: { op: number }) => o.op)).toEqual([1]);
    const second = await t.call('GET', '/runs/wf-p/operations?after=1&limit=1');
    expect(second.body.operations.map((o: { op: number }) => o.op)).toEqual([2]);
    expect(second.body.next).toBeUndefined();
    expect(paths(await t.call('GET', '/runs/wf-p/operations?limit=0'))).toEqual(['query.limit']);
  });

  it('refuses hostile requests with a 400 naming the path, writing nothing', async () => {
    const t = setup();
    const both = await t.call('POST', '/runs', { agent: 'helper', workflow: 'refund-review', runId: 'h-1', input: { orderId: 'o_1', reason: 'x' } });
    expect(both.status).toBe(400);
    expect(paths(both)).toEqual(['body.workflow']);
    const neither = await t.call('POST', '/runs', { runId: 'h-2', input: { orderId: 'o_1', reason: 'x' } });
    expect(paths(neither)).toEqual(['body.agent']);
    const wrongType = await t.call('POST', '/runs', { workflow: 42, runId: 'h-3', input: {} });
    expect(wrongType.status).toBe(400);
    expect(paths(wrongType)).toEqual(['body.workflow']);
    const badInput = await t.call('POST', '/runs', { workflow: 'refund-review', runId: 'h-4', input: { orderId: 7, reason: 'x', extra: true } });
    expect(badInput.status).toBe(400);
    expect(paths(badInput).sort()).toEqual(['body.input.orderId']);
    const extra = await t.call('POST', '/runs', { workflow: 'refund-review', runId: 'h-5', input: { orderId: 'o_1', reason: 'x', extra: true } });
    expect(paths(extra)).toEqual(['body.input.extra']);
    const badVersion = await t.call('POST', '/runs', { workflow: 'refund-review', version: '9', runId: 'h-6', input: { orderId: 'o_1', reason: 'x' } });
    expect(paths(badVersion)).toEqual(['body.version']);
    // An unknown workflow whose name is a secret: refused, the secret never repeated.
    const secret = 'sk-live-0123456789abcdefghijklmnopqrstuv';
    const unknown = await t.call('POST', '/runs', { workflow: secret, runId: 'h-7', input: {} });
    expect(unknown.status).toBe(400);
    expect(paths(unknown)).toEqual(['body.workflow']);
    expect(JSON.stringify(unknown.body)).not.toContain(secret);
    expect(unknown.body.error.issues[0].message).toContain('refund-review');
    // An agent's name given as a workflow is not a workflow.
    expect(paths(await t.call('POST', '/runs', { workflow: 'helper', runId: 'h-8', input: 'hi' }))).toEqual(['body.workflow']);
    for (const id of ['h-1', 'h-2', 'h-3', 'h-4', 'h-5', 'h-6', 'h-7', 'h-8']) expect(await nothingWritten(t.world, t.run(id))).toBe(true);
  });

  it('goes through the admission gate like an agent run: 429 with Retry-After at the limit, nothing written', async () => {
    const t = setup({ maxActiveRuns: 1 });
    expect((await t.call('POST', '/runs', { workflow: 'waiter', runId: 'g-1', input: {} })).status).toBe(201);
    await t.drain();
    const refused = await t.call('POST', '/runs', { workflow: 'waiter', runId: 'g-2', input: {} });
    expect(refused).toMatchObject({ status: 429, body: { error: { code: 'too_many_runs' } } });
    expect(refused.headers.get('retry-after')).toBe('3');
    expect(await nothingWritten(t.world, t.run('g-2'))).toBe(true);
    // An agent run counts against the same limit.
    expect((await t.call('POST', '/runs', { agent: 'helper', runId: 'g-3', input: 'hi' })).status).toBe(429);
  });
});

describe('GET /workflows', () => {
  it('lists every registered workflow with its versions and their input and output JSON Schemas', async () => {
    const t = setup();
    const res = await t.call('GET', '/workflows');
    expect(res.status).toBe(200);
    const review = res.body.workflows.find((w: { workflow: string }) => w.workflow === 'refund-review');
    expect(review).toMatchObject({ latest: '2.0.0', versions: [{ version: '1.0.0' }, { version: '2.0.0' }] });
    expect(review.versions[0]).toMatchObject({
      description: 'refund an order, asking a manager above 500 dollars',
      input: {
        jsonSchema: { type: 'object', properties: { orderId: { type: 'string' }, reason: { type: 'string' } } },
        sha256: refundReview.inputSchema!.sha256,
      },
      output: { jsonSchema: { type: 'object', properties: { refundedCents: { type: 'number' } } } },
    });
    expect(res.body.workflows.find((w: { workflow: string }) => w.workflow === 'waiter').versions[0]).toMatchObject({ input: null, output: null });
    // Agents are not workflows.
    expect(res.body.workflows.map((w: { workflow: string }) => w.workflow).sort()).toEqual(['parent', 'payout', 'refund-review', 'waiter']);
  });
});

describe('operations and control of runs by kind', () => {
  it('GET /runs/{id}/operations of an agent run is a 409 not_workflow_run; of an unknown run a 404', async () => {
    const t = setup();
    await t.call('POST', '/runs', { agent: 'helper', runId: 'ag-1', input: 'hi' });
    await t.drain();
    expect((await t.call('GET', '/runs/ag-1')).body).toMatchObject({ kind: 'agent', status: 'completed' });
    expect((await t.call('GET', '/runs/ag-1')).body.workflow).toBeUndefined();
    expect(await t.call('GET', '/runs/ag-1/operations')).toMatchObject({ status: 409, body: { error: { code: 'not_workflow_run' } } });
    expect(await t.call('GET', '/runs/nope/operations')).toMatchObject({ status: 404, body: { error: { code: 'run_not_found' } } });
  });

  it('POST /cancel stops a workflow run and its child run; the operations show the child', async () => {
    const t = setup();
    await t.call('POST', '/runs', { workflow: 'parent', runId: 'p-1', input: {} });
    await t.drain();
    const ops = (await t.call('GET', '/runs/p-1/operations')).body.operations;
    expect(ops).toEqual([
      expect.objectContaining({
        op: 1,
        kind: 'child',
        name: 'waiter',
        status: 'started',
        child: { runId: 'p-1-cop-1', kind: 'workflow', name: 'waiter', version: '1' },
      }),
    ]);
    expect((await t.call('GET', '/runs/p-1')).body.children).toEqual([expect.objectContaining({ runId: 'p-1-cop-1', callId: 'op-1', status: 'waiting' })]);
    const child = await t.call('GET', '/runs/p-1-cop-1');
    expect(child.body).toMatchObject({ kind: 'workflow', parent: { runId: 'p-1', callId: 'op-1' } });
    expect((await t.call('POST', '/runs/p-1/cancel', { reason: 'not needed' })).status).toBe(202);
    await t.drain();
    expect((await headOf(t.world, t.run('p-1'))).status).toBe('cancelled');
    expect((await headOf(t.world, t.run('p-1-cop-1'))).status).toBe('cancelled');
    expect(await t.call('POST', '/runs/p-1/signals', { signal: 'go', payload: {} })).toMatchObject({ status: 409, body: { error: { code: 'run_ended' } } });
  });

  it('a workflow run takes no follow-up messages (409) and callIds outside both shapes are a 400', async () => {
    const t = setup();
    await t.call('POST', '/runs', { workflow: 'waiter', runId: 'm-1', input: {} });
    await t.drain();
    expect(await t.call('POST', '/runs/m-1/messages', { input: 'hello' })).toMatchObject({ status: 409, body: { error: { code: 'message_conflict' } } });
    expect(paths(await t.call('POST', '/runs/m-1/approve', { callId: 'op-0', decision: 'approve' }))).toEqual(['body.callId']);
    expect(paths(await t.call('POST', '/runs/m-1/resolve', { callId: 'op-x', outcome: 'failed' }))).toEqual(['body.callId']);
    // A well-formed operation id with nothing open on it: a 409, not a 400.
    expect((await t.call('POST', '/runs/m-1/resolve', { callId: 'op-1', outcome: 'failed' })).status).toBe(409);
    expect((await t.call('POST', '/runs/m-1/approve', { callId: 'op-1', decision: 'approve' })).status).toBe(409);
  });

  it('a step a crash cut off parks for a person, who answers it through POST /resolve with callId op-<n>; the run goes on', async () => {
    const t = setup();
    await t.call('POST', '/runs', { workflow: 'payout', runId: 'e-1', input: {} });
    // The worker dies after op_started is written and before the function runs.
    const dying = spawnWorker(t.world, haltAt('before-step:send money#op-1'));
    await drain(t.world, dying).catch(() => undefined);
    // Past the lease, the step's deadline and the grace period: the sweeper brings the run back, and the policy applies.
    await later(t.world, t.worker, 10 * 60_000, 1);
    const parked = await t.call('GET', '/runs/e-1');
    expect(parked.body).toMatchObject({ kind: 'workflow', status: 'parked', attention: [{ callId: 'op-1' }] });
    const op = (await t.call('GET', '/runs/e-1/operations')).body.operations[0];
    expect(op).toMatchObject({ op: 1, kind: 'step', status: 'started', policy: 'escalate', attempt: 1 });
    const resolved = await t.call('POST', '/runs/e-1/resolve', { callId: 'op-1', outcome: 'succeeded', result: { receipt: 'checked by hand' } });
    expect(resolved.status).toBe(202);
    await t.drain();
    expect((await t.call('GET', '/runs/e-1')).body).toMatchObject({ status: 'completed', result: JSON.stringify({ receipt: { receipt: 'checked by hand' } }) });
    expect((await t.call('GET', '/runs/e-1/operations')).body.operations[0]).toMatchObject({
      status: 'succeeded',
      source: 'human',
      result: { receipt: 'checked by hand' },
    });
  });
});
