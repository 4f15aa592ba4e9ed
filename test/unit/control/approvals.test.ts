import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { foldLog } from '../../../lib/core/fold.js';
import type { ModelRequest } from '../../../lib/core/messages.js';
import { requestApproval } from '../../../lib/engine/control-requests.js';
import { hashJson } from '../../../lib/support/hash.js';
import { requestCancel, requestResolution } from '../../../lib/engine/requests.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { type ToolDefinition } from '../../../lib/authoring/types.js';
import type { OutcomeNotice } from '../../../lib/ports/outcome-publisher.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { spawnWorker } from '../../../lib/testing/world.js';
import { haltAt, logOf } from '../engine/helpers.js';
import { drain, headOf, later } from './helpers.js';

type Refund = { orderId: string; amountCents: number };

/** issue_refund asks for approval above $20; every execution is recorded. */
function refundTool(effects: Refund[], options: { policy?: 'escalate' | 'rerun'; approvalTimeoutSeconds?: number } = {}): ToolDefinition<Refund> {
  return defineTool({
    name: 'issue_refund',
    version: '1',
    description: 'Refund an order.',
    input: z.object({ orderId: z.string().min(1), amountCents: z.number().int().positive().max(100_000) }),
    policy: options.policy ?? 'escalate',
    approval: (args) => args.amountCents > 2000,
    ...(options.approvalTimeoutSeconds ? { approvalTimeoutSeconds: options.approvalTimeoutSeconds } : {}),
    async execute(args) {
      effects.push(args);
      return { refunded: args.amountCents };
    },
  });
}

const lastTool = (r: ModelRequest) => [...r.messages].reverse().find((m) => m.role === 'tool');

function refundWorld(amountCents = 4500, options: Parameters<typeof refundTool>[1] = {}) {
  const effects: Refund[] = [];
  const requests: ModelRequest[] = [];
  const t = scriptedWorld({
    tools: [refundTool(effects, options)],
    script: [
      { calls: [{ name: 'issue_refund', args: { orderId: 'o-1', amountCents } }] },
      (r) => (requests.push(r), { text: `refund: ${lastTool(r)?.isError ? 'error ' : ''}${lastTool(r)?.content}` }),
    ],
  });
  const notices: OutcomeNotice[] = [];
  const worker = spawnWorker(t.world, undefined, {}, { publisher: { publish: async (n) => void notices.push(n) } });
  return { ...t, worker, effects, requests, notices };
}

async function awaiting(amountCents = 4500, options: Parameters<typeof refundTool>[1] = {}) {
  const t = refundWorld(amountCents, options);
  await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'refund o-1' });
  await drain(t.world, t.worker);
  return t;
}

describe('approval before a tool runs', () => {
  it('appends approval_requested {callId, argsHash} before any tool_started and waits holding no Lambda', async () => {
    const t = await awaiting();
    const { events, types } = await logOf(t.world, t.run);
    expect(types).toEqual(['run_started', 'model_started', 'model_response', 'approval_requested']);
    expect(events[3]).toMatchObject({ callId: '3-0', argsHash: hashJson({ orderId: 'o-1', amountCents: 4500 }) });
    const head = await headOf(t.world, t.run);
    expect(head.status).toBe('awaiting_approval');
    expect(head.waits).toMatchObject([{ callId: '3-0', tool: 'issue_refund', kind: 'approval', seq: 4, argsHash: hashJson({ orderId: 'o-1', amountCents: 4500 }) }]);
    expect(head.lease).toBeUndefined();
    // No timeout of its own: it expires with the run's deadline (the sweeper wakes it then, or a decision).
    const deadline = (await logOf(t.world, t.run)).state.started.budgets.deadlineAt;
    expect(events[3]).toMatchObject({ expiresAt: deadline });
    expect(head.wakeAt).toBe(deadline);
    expect(t.storage.queue.take()).toBeUndefined();
    expect(t.notices).toMatchObject([{ detailType: 'Agent Run Needs Approval', seq: 4, status: 'awaiting_approval', code: 'approval_required' }]);
    expect(t.effects).toEqual([]);
    // Listing by status finds it.
    expect((await t.storage.heads.listRuns('t', { status: 'awaiting_approval', limit: 10 })).runs.map((r) => r.runId)).toEqual(['r']);
  });

  it('runs an approved call once, recording who decided', async () => {
    const t = await awaiting();
    await requestApproval(t.worker.deps, t.run, { callId: '3-0', decision: 'approve', comment: 'ok by policy' }, 'alice');
    await drain(t.world, t.worker);
    const { events, state } = await logOf(t.world, t.run);
    expect(events.find((e) => e.type === 'approval_decided')).toMatchObject({ decision: 'approve', decidedBy: 'alice', comment: 'ok by policy', inboxId: 'approval-3-0' });
    expect(t.effects).toEqual([{ orderId: 'o-1', amountCents: 4500 }]);
    expect(state.outcome?.type).toBe('completed');
    expect(t.notices.map((n) => n.detailType)).toEqual(['Agent Run Needs Approval', 'Agent Run Completed']);
  });

  it('asks nothing when the predicate says no', async () => {
    const t = await awaiting(1500);
    const { types } = await logOf(t.world, t.run);
    expect(types).not.toContain('approval_requested');
    expect(t.effects).toHaveLength(1);
  });

  it('never executes a rejected call: the model gets an error result carrying the comment', async () => {
    const t = await awaiting();
    await requestApproval(t.worker.deps, t.run, { callId: '3-0', decision: 'reject', comment: 'Refunds above $20 need a photo of the damage.' }, 'bob');
    await drain(t.world, t.worker);
    const { types, state } = await logOf(t.world, t.run);
    expect(types).not.toContain('tool_started');
    expect(t.effects).toEqual([]);
    expect(state.calls['3-0']?.result).toMatchObject({ ok: false, source: 'human', errorCode: 'rejected' });
    const seen = lastTool(t.requests[0]!);
    expect(seen?.isError).toBe(true);
    expect(seen?.content).toContain('Refunds above $20 need a photo of the damage.');
    expect(state.outcome?.type).toBe('completed');
  });

  it('first decision wins: a second decision is a 409, and a second item that slips through is ignored', async () => {
    const t = await awaiting();
    await requestApproval(t.worker.deps, t.run, { callId: '3-0', decision: 'reject', comment: 'no' }, 'bob');
    // A retry of the very same decision is accepted again; another decision is not.
    await requestApproval(t.worker.deps, t.run, { callId: '3-0', decision: 'reject', comment: 'no' }, 'bob');
    await expect(requestApproval(t.worker.deps, t.run, { callId: '3-0', decision: 'approve' }, 'alice')).rejects.toMatchObject({
      code: 'approval_conflict',
      message: expect.stringContaining('already has a decision'),
    });
    await t.storage.inbox.put(t.run, { id: 'zz-late', kind: 'approval', by: 'mallory', callId: '3-0', decision: 'approve' });
    await drain(t.world, t.worker);
    const { events } = await logOf(t.world, t.run);
    expect(events.filter((e) => e.type === 'approval_decided')).toMatchObject([{ decision: 'reject', decidedBy: 'bob' }]);
    expect(t.effects).toEqual([]);
    // Decided: the call awaits nothing now.
    await expect(requestApproval(t.worker.deps, t.run, { callId: '3-0', decision: 'approve' }, 'alice')).rejects.toThrow('call 3-0 (issue_refund) awaits no approval; run r is completed');
  });

  it('validates an edit against the pinned schema (400 with paths), then re-hashes and runs exactly the edited arguments', async () => {
    const t = await awaiting();
    await expect(requestApproval(t.worker.deps, t.run, { callId: '3-0', decision: 'edit', args: { orderId: 'o-1', amountCents: 'lots' } }, 'carol')).rejects.toMatchObject({
      code: 'validation_error',
      issues: [{ path: 'args.amountCents', message: expect.any(String) }],
    });
    await expect(requestApproval(t.worker.deps, t.run, { callId: '3-0', decision: 'edit' }, 'carol')).rejects.toMatchObject({ issues: [{ path: 'args' }] });
    expect(await t.storage.inbox.list(t.run)).toEqual([]);
    await requestApproval(t.worker.deps, t.run, { callId: '3-0', decision: 'edit', args: { orderId: 'o-1', amountCents: 2000 }, comment: 'partial refund' }, 'carol');
    await drain(t.world, t.worker);
    const { events, state } = await logOf(t.world, t.run);
    expect(events.find((e) => e.type === 'approval_decided')).toMatchObject({
      decision: 'edit',
      argsHash: hashJson({ orderId: 'o-1', amountCents: 2000 }),
      args: { kind: 'inline', value: { orderId: 'o-1', amountCents: 2000 } },
    });
    expect(t.effects).toEqual([{ orderId: 'o-1', amountCents: 2000 }]);
    // The conversation shows the call as it ran.
    const assistant = t.requests[0]!.messages.find((m) => m.role === 'assistant');
    expect(assistant).toMatchObject({ calls: [{ callId: '3-0', args: { orderId: 'o-1', amountCents: 2000 } }] });
    expect(state.calls['3-0']?.approval).toMatchObject({ status: 'approved', edited: true, decidedBy: 'carol' });
  });

  it('ignores an edit that reaches the worker with arguments that do not fit (the API was bypassed)', async () => {
    const t = await awaiting();
    await t.storage.inbox.put(t.run, { id: 'approval-3-0', kind: 'approval', by: 'x', callId: '3-0', decision: 'edit', args: { orderId: '', amountCents: 1 } });
    await t.storage.queue.enqueue(t.run, { dedupeId: 'wake' });
    await drain(t.world, t.worker);
    const { types } = await logOf(t.world, t.run);
    expect(types).not.toContain('approval_decided');
    expect((await headOf(t.world, t.run)).status).toBe('awaiting_approval');
  });

  it('re-checks the approval right before execution: arguments other than the approved ones never run', async () => {
    const t = await awaiting();
    // A buggy or forged writer records an edit whose hash is not the hash of its arguments.
    const { state } = await logOf(t.world, t.run);
    await t.storage.log.append(t.run, {
      v: 1,
      seq: state.lastSeq + 1,
      at: t.world.clock.now(),
      by: { epoch: 99, nonce: 'forged' },
      type: 'approval_decided',
      callId: '3-0',
      decision: 'edit',
      args: { kind: 'inline', value: { orderId: 'o-1', amountCents: 99_999 } },
      argsHash: hashJson({ orderId: 'o-1', amountCents: 1 }),
      decidedBy: 'mallory',
    });
    await t.storage.queue.enqueue(t.run, { dedupeId: 'wake' });
    // A fresh container: the forged writer held no lease, so a warm one's cache (which trusts that
    // only the next lease holder appends) would meet it only at its first append's conflict.
    await drain(t.world, spawnWorker(t.world));
    const after = await logOf(t.world, t.run);
    expect(t.effects).toEqual([]);
    expect(after.types).not.toContain('tool_started');
    expect(after.state.calls['3-0']?.result).toMatchObject({ ok: false, errorCode: 'approval_mismatch' });
  });

  it('expiry rejects: the sweeper wakes the run at expiresAt and the model sees why', async () => {
    const t = await awaiting(4500, { approvalTimeoutSeconds: 3600 });
    const head = await headOf(t.world, t.run);
    expect(head).toMatchObject({ status: 'awaiting_approval', wakeAt: t.world.clock.now() + 3_600_000 });
    expect((await later(t.world, t.worker, 3_599_000, 1)).woken).toBe(0);
    expect((await later(t.world, t.worker, 1_000, 2)).woken).toBe(1);
    const { events, state } = await logOf(t.world, t.run);
    expect(events.find((e) => e.type === 'approval_decided')).toMatchObject({ decision: 'expire', decidedBy: 'logbook:expiry' });
    expect(state.calls['3-0']?.result).toMatchObject({ ok: false, errorCode: 'approval_expired', source: 'timeout' });
    expect(t.effects).toEqual([]);
    await expect(requestApproval(t.worker.deps, t.run, { callId: '3-0', decision: 'approve' }, 'late')).rejects.toMatchObject({ code: 'approval_conflict' });
  });

  it('an approved escalate call that started and lost its result still escalates, and a rerun needs no second approval', async () => {
    const t = await awaiting();
    await requestApproval(t.worker.deps, t.run, { callId: '3-0', decision: 'approve' }, 'alice');
    const dying = spawnWorker(t.world, haltAt('after-tool'));
    await expect(drain(t.world, dying)).rejects.toThrow('worker halted');
    dying.kill();
    await t.world.clock.advance(120_000);
    await t.storage.queue.enqueue(t.run, { dedupeId: 'retry' });
    await drain(t.world, t.worker);
    const head = await headOf(t.world, t.run);
    expect(head.status).toBe('parked');
    expect(head.attention).toMatchObject([{ reason: 'unknown_outcome', callId: '3-0' }]);
    await requestResolution(t.worker.deps, t.run, { callId: '3-0', outcome: 'rerun' }, 'ops');
    await drain(t.world, t.worker);
    const { types, state } = await logOf(t.world, t.run);
    expect(types.filter((x) => x === 'approval_requested')).toHaveLength(1);
    expect(state.calls['3-0']).toMatchObject({ attempt: 2, result: { ok: true } });
    expect(state.outcome?.type).toBe('completed');
  });

  it('answers 404 for an unknown call and 409 for a call that awaits none or a stale argsHash', async () => {
    const t = await awaiting();
    await expect(requestApproval(t.worker.deps, t.run, { callId: '99-0', decision: 'approve' }, 'a')).rejects.toMatchObject({ code: 'call_not_found' });
    await expect(requestApproval(t.worker.deps, t.run, { callId: '3-1', decision: 'approve' }, 'a')).rejects.toMatchObject({ code: 'call_not_found' });
    await expect(requestApproval(t.worker.deps, t.run, { callId: '3-0', decision: 'approve', argsHash: 'f'.repeat(64) }, 'a')).rejects.toThrow(/asks about arguments .* not ffffffffffff/);
    const small = await awaiting(100);
    await expect(requestApproval(small.worker.deps, small.run, { callId: '3-0', decision: 'approve' }, 'a')).rejects.toMatchObject({ code: 'approval_conflict' });
  });

  it('a cancel while awaiting approval ends the run; the call never runs', async () => {
    const t = await awaiting();
    await requestCancel(t.worker.deps, t.run, 'ops');
    await drain(t.world, t.worker);
    const { state } = await logOf(t.world, t.run);
    expect(state.outcome).toMatchObject({ type: 'cancelled', unresolved: [] });
    expect(t.effects).toEqual([]);
  });

  it('fold refuses a log where a call started without its approval', async () => {
    const t = await awaiting();
    const { events } = await logOf(t.world, t.run);
    const forged = { v: 1, seq: 5, at: 0, by: { epoch: 1, nonce: 'x' }, type: 'tool_started', callId: '3-0', attempt: 1, notAfter: 1 };
    expect(() => foldLog([...events, forged])).toThrow(/started while its approval is pending/);
  });
});
