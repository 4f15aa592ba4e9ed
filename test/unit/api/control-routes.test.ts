import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApiApp } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import type { Caller } from '../../../lib/api/tenant.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { waitForSignal } from '../../../lib/authoring/waits.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
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
    description: 'Wait for the parcel.',
    signal: 'parcel_returned',
    payload: z.object({ trackingId: z.string().min(3) }),
    timeoutSeconds: 600,
  });
  return scriptedWorld({
    tools: [refund, wait],
    script: [
      (r) => {
        const task = r.messages[0]?.role === 'user' ? r.messages[0].content : '';
        return task.includes('wait')
          ? { calls: [{ name: 'wait_for_return', args: {} }] }
          : { calls: [{ name: 'issue_refund', args: { orderId: 'o-1', amountCents: 4500 } }] };
      },
      { text: 'done' },
      { text: 'follow-up answered' },
    ],
  });
}

async function call(method: string, path: string, options: { tenant?: string; body?: unknown } = {}) {
  const app = createApiApp({
    service: engineRunService(t.worker.deps),
    caller: (c): Caller | undefined => ({ tenant: c.req.header('x-test-tenant') ?? 't', principal: 'alice@example.com' }),
  });
  const res = await app.request(path, {
    method,
    headers: { 'x-test-tenant': options.tenant ?? 't', ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await res.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are inspected loosely
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, any>) : undefined };
}

const paths = (res: { body?: Record<string, unknown> }) => ((res.body?.error as { issues?: { path: string }[] })?.issues ?? []).map((i) => i.path);

async function started(input: string, runId: string) {
  expect((await call('POST', '/runs', { body: { agent: 'agent', input, runId } })).status).toBe(201);
  await drain(t.world, t.worker);
}

beforeEach(() => {
  t = world();
});

describe('POST /runs/{runId}/approve', () => {
  it('shows the call awaiting approval with its arguments, takes one decision (202) and refuses a second (409)', async () => {
    await started('refund please', 'a-1');
    const view = await call('GET', '/runs/a-1');
    expect(view.body).toMatchObject({
      status: 'awaiting_approval',
      waiting: [{ callId: '3-0', tool: 'issue_refund', kind: 'approval', args: { orderId: 'o-1', amountCents: 4500 } }],
    });
    const ok = await call('POST', '/runs/a-1/approve', { body: { callId: '3-0', decision: 'approve', argsHash: view.body?.waiting[0].argsHash } });
    expect(ok).toMatchObject({ status: 202, body: { runId: 'a-1', accepted: true, inboxId: 'approval-3-0', callId: '3-0' } });
    const second = await call('POST', '/runs/a-1/approve', { body: { callId: '3-0', decision: 'reject' } });
    expect(second.status).toBe(409);
    expect(second.body?.error.code).toBe('approval_conflict');
    await drain(t.world, t.worker);
    const events = (await call('GET', '/runs/a-1/events')).body?.events as { type: string; decidedBy?: string }[];
    expect(events.find((e) => e.type === 'approval_decided')?.decidedBy).toBe('alice@example.com');
    expect((await call('POST', '/runs/a-1/approve', { body: { callId: '3-0', decision: 'approve' } })).body?.error).toEqual({
      code: 'run_ended',
      message: 'run a-1 is completed: it takes no approvals; nothing more runs in an ended run (fork it to continue)',
    });
  });

  it('answers 400 with paths for bad bodies and for edited arguments that do not fit the pinned schema', async () => {
    await started('refund please', 'a-2');
    expect(paths(await call('POST', '/runs/a-2/approve', { body: { callId: 'x', decision: 'maybe', extra: 1 } }))).toEqual([
      'body.callId',
      'body.decision',
      'body.extra',
    ]);
    expect(paths(await call('POST', '/runs/a-2/approve', { body: { callId: '3-0', decision: 'edit' } }))).toEqual(['body.args']);
    expect(paths(await call('POST', '/runs/a-2/approve', { body: { callId: '3-0', decision: 'approve', args: {} } }))).toEqual(['body.args']);
    const edit = await call('POST', '/runs/a-2/approve', { body: { callId: '3-0', decision: 'edit', args: { orderId: 'o-1', amountCents: -5 } } });
    expect(edit.status).toBe(400);
    expect(paths(edit)).toEqual(['body.args.amountCents']);
    expect((await call('POST', '/runs/a-2/approve', { body: { callId: '3-0', decision: 'edit', args: { orderId: 'o-1', amountCents: 2000 } } })).status).toBe(
      202,
    );
  });

  it("answers 404 for an unknown run, an unknown call and another tenant's run", async () => {
    await started('refund please', 'a-3');
    expect((await call('POST', '/runs/nope/approve', { body: { callId: '3-0', decision: 'approve' } })).status).toBe(404);
    const unknown = await call('POST', '/runs/a-3/approve', { body: { callId: '42-0', decision: 'approve' } });
    expect(unknown).toMatchObject({ status: 404, body: { error: { code: 'call_not_found', message: 'run a-3 has no call 42-0' } } });
    expect((await call('POST', '/runs/a-3/approve', { tenant: 'other', body: { callId: '3-0', decision: 'approve' } })).status).toBe(404);
  });
});

describe('an ended run', () => {
  it('cancelled while awaiting approval: lists nothing pending and refuses approve, signal, resolve, retry and cancel with 409 run_ended', async () => {
    await started('refund please', 'c-1');
    expect((await call('GET', '/runs/c-1')).body?.waiting).toHaveLength(1);
    expect((await call('POST', '/runs/c-1/cancel', { body: { reason: 'customer withdrew' } })).status).toBe(202);
    await drain(t.world, t.worker);
    const view = await call('GET', '/runs/c-1');
    expect(view.body).toMatchObject({ status: 'cancelled', attention: [] });
    expect(view.body?.waiting).toBeUndefined();
    const refused = {
      approve: await call('POST', '/runs/c-1/approve', { body: { callId: '3-0', decision: 'approve' } }),
      reject: await call('POST', '/runs/c-1/approve', { body: { callId: '3-0', decision: 'reject', comment: 'no' } }),
      signal: await call('POST', '/runs/c-1/signals', { body: { signal: 'parcel_returned', payload: { trackingId: 'TRK-1' } } }),
      resolve: await call('POST', '/runs/c-1/resolve', { body: { callId: '3-0', outcome: 'failed' } }),
      retry: await call('POST', '/runs/c-1/resolve', { body: { action: 'retry' } }),
      cancel: await call('POST', '/runs/c-1/cancel', { body: {} }),
    };
    for (const [what, res] of Object.entries(refused)) {
      expect(res.status, what).toBe(409);
      expect(res.body?.error.code, what).toBe('run_ended');
      expect(res.body?.error.message, what).toMatch(/^run c-1 is cancelled: /);
    }
    expect(refused.approve.body?.error.message).toContain('it takes no approvals');
    expect(refused.signal.body?.error.message).toContain('it takes no signals');
    // Nothing was written for the worker to drop: the inbox holds nothing.
    expect(await t.storage.inbox.list({ tenant: 't', runId: 'c-1' })).toEqual([]);
    // A follow-up message to a cancelled run stays refused; a fork is the way on.
    expect((await call('POST', '/runs/c-1/messages', { body: { input: 'hello?' } })).status).toBe(409);
    expect((await call('POST', '/runs/c-1/fork', { body: { atSeq: 1, runId: 'c-1-again' } })).status).toBe(201);
  });

  it('completed: refuses approve, signal, resolve and retry, and still takes a follow-up message (202)', async () => {
    await started('refund please', 'd-1');
    expect((await call('POST', '/runs/d-1/approve', { body: { callId: '3-0', decision: 'approve' } })).status).toBe(202);
    await drain(t.world, t.worker);
    expect((await call('GET', '/runs/d-1')).body).toMatchObject({ status: 'completed', attention: [] });
    for (const body of [{ callId: '3-0', outcome: 'rerun' }, { action: 'fail' }]) {
      expect((await call('POST', '/runs/d-1/resolve', { body })).body?.error.code).toBe('run_ended');
    }
    expect((await call('POST', '/runs/d-1/signals', { body: { signal: 'parcel_returned', payload: { trackingId: 'TRK-1' } } })).body?.error.code).toBe(
      'run_ended',
    );
    expect((await call('POST', '/runs/d-1/messages', { body: { input: 'and now?' } })).status).toBe(202);
  });
});

describe('POST /runs/{runId}/signals', () => {
  it('validates the payload (400 with paths), completes the waiting call (202) once (then 409)', async () => {
    await started('wait for the parcel', 's-1');
    expect((await call('GET', '/runs/s-1')).body).toMatchObject({
      status: 'waiting',
      waiting: [{ kind: 'signal', signal: 'parcel_returned', until: expect.any(String) }],
    });
    const bad = await call('POST', '/runs/s-1/signals', { body: { signal: 'parcel_returned', payload: { trackingId: 'x' } } });
    expect(bad.status).toBe(400);
    expect(paths(bad)).toEqual(['body.payload.trackingId']);
    expect(paths(await call('POST', '/runs/s-1/signals', { body: { signal: 'bad name!', payload: {} } }))).toEqual(['body.signal']);
    const none = await call('POST', '/runs/s-1/signals', { body: { signal: 'other', payload: {} } });
    expect(none).toMatchObject({ status: 409, body: { error: { code: 'signal_not_awaited' } } });
    const ok = await call('POST', '/runs/s-1/signals', { body: { signal: 'parcel_returned', payload: { trackingId: 'TRK-1' } } });
    expect(ok).toMatchObject({ status: 202, body: { callId: '3-0', inboxId: 'signal-3-0' } });
    expect((await call('POST', '/runs/s-1/signals', { body: { signal: 'parcel_returned', payload: { trackingId: 'TRK-2' } } })).status).toBe(409);
    await drain(t.world, t.worker);
    expect((await call('GET', '/runs/s-1')).body?.status).toBe('completed');
    expect((await call('POST', '/runs/nope/signals', { body: { signal: 'parcel_returned', payload: {} } })).status).toBe(404);
    expect((await call('POST', '/runs/s-1/signals', { tenant: 'other', body: { signal: 'parcel_returned', payload: { trackingId: 'TRK-3' } } })).status).toBe(
      404,
    );
  });
});

describe('POST /runs/{runId}/messages', () => {
  it('continues a completed run (202), refuses bad bodies (400) and finished runs (409)', async () => {
    await started('refund please', 'm-1');
    await call('POST', '/runs/m-1/approve', { body: { callId: '3-0', decision: 'approve' } });
    await drain(t.world, t.worker);
    expect(paths(await call('POST', '/runs/m-1/messages', { body: { input: '' } }))).toEqual(['body.input']);
    expect(paths(await call('POST', '/runs/m-1/messages', { body: {} }))).toEqual(['body.input']);
    expect((await call('POST', '/runs/m-1/messages', { body: { input: 'thanks! one more thing', messageId: 'm1' } })).status).toBe(202);
    await drain(t.world, t.worker);
    expect((await call('GET', '/runs/m-1')).body).toMatchObject({ status: 'completed', result: 'follow-up answered', usage: { steps: 3 } });
    await call('POST', '/runs', { body: { agent: 'agent', input: 'refund please', runId: 'm-2' } });
    await call('POST', '/runs/m-2/cancel', { body: {} });
    await drain(t.world, t.worker);
    const refused = await call('POST', '/runs/m-2/messages', { body: { input: 'hello?' } });
    expect(refused).toMatchObject({ status: 409, body: { error: { code: 'message_conflict', message: expect.stringContaining('is cancelled') } } });
    expect((await call('POST', '/runs/nope/messages', { body: { input: 'x' } })).status).toBe(404);
    expect((await call('POST', '/runs/m-1/messages', { tenant: 'other', body: { input: 'x' } })).status).toBe(404);
  });
});

describe('POST /runs/{runId}/fork', () => {
  it('forks at a boundary (201, then 200), refuses a non-boundary naming the call (409) and bad bodies (400)', async () => {
    await started('refund please', 'f-1');
    await call('POST', '/runs/f-1/approve', { body: { callId: '3-0', decision: 'approve' } });
    await drain(t.world, t.worker);
    expect(paths(await call('POST', '/runs/f-1/fork', { body: { atSeq: 0, runId: 'bad id' } }))).toEqual(['body.atSeq', 'body.runId']);
    expect(paths(await call('POST', '/runs/f-1/fork', { body: { atSeq: 500 } }))).toEqual(['body.atSeq']);
    const mid = await call('POST', '/runs/f-1/fork', { body: { atSeq: 3 } });
    expect(mid).toMatchObject({ status: 409, body: { error: { code: 'fork_conflict', message: expect.stringContaining('call 3-0') } } });
    const events = (await call('GET', '/runs/f-1/events')).body?.events as { type: string; seq: number }[];
    const boundary = events.find((e) => e.type === 'tool_result')!.seq;
    const created = await call('POST', '/runs/f-1/fork', { body: { atSeq: boundary, runId: 'f-1-b' } });
    expect(created).toMatchObject({ status: 201, body: { runId: 'f-1-b', created: true, forkedFrom: { runId: 'f-1', seq: boundary } } });
    expect((await call('POST', '/runs/f-1/fork', { body: { atSeq: boundary, runId: 'f-1-b' } })).status).toBe(200);
    expect((await call('POST', '/runs/f-1/fork', { body: { atSeq: 1, runId: 'f-1-b' } })).status).toBe(409);
    expect((await call('POST', '/runs/f-1/fork', { tenant: 'other', body: { atSeq: 1 } })).status).toBe(404);
    await drain(t.world, t.worker);
    expect((await call('GET', '/runs/f-1-b')).body).toMatchObject({ status: 'completed', forkedFrom: { runId: 'f-1', seq: boundary } });
  });
});

describe('OpenAPI', () => {
  it('documents the control routes with their operationIds', async () => {
    const res = await call('GET', '/openapi.json');
    const doc = res.body as { paths: Record<string, Record<string, { operationId?: string }>> };
    expect(doc.paths['/runs/{runId}/approve']?.post?.operationId).toBe('approveCall');
    expect(doc.paths['/runs/{runId}/fork']?.post?.operationId).toBe('forkRun');
    expect(doc.paths['/runs/{runId}/signals']?.post?.operationId).toBe('sendSignal');
    expect(doc.paths['/runs/{runId}/messages']?.post?.operationId).toBe('sendMessage');
  });
});
