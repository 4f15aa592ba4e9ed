import { SWEEP_QUEUED_MS } from '../../../lib/ports/sweep-index.js';
import { describe, expect, it } from 'vitest';
import { foldLog } from '../../../lib/core/fold.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import { deliverToParent, childRunId } from '../../../lib/engine/child-runs.js';
import { requestApproval } from '../../../lib/engine/control-requests.js';
import { requestCancel } from '../../../lib/engine/requests.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { spawnWorker, type World } from '../../../lib/testing/world.js';
import { WorkerHalt } from '../../../lib/engine/checkpoints.js';
import { haltAt, logOf } from '../engine/helpers.js';
import { drain, headOf, later } from '../control/helpers.js';
import { familyWorld } from './family-agents.js';

const parent = { tenant: 't', runId: 'plan-1' };
const caller = { tenant: 't', principal: 'tester' };
const child = { tenant: 't', runId: childRunId('plan-1', '3-0') };

async function started(world: World, options: { worker?: ReturnType<typeof spawnWorker> } = {}) {
  const worker = options.worker ?? spawnWorker(world);
  await startRun(worker.deps, { ...parent, agent: 'planner', input: 'plan a mug shop' });
  return worker;
}

async function runStarts(world: World, runId: string) {
  return (await world.storage.log.read({ tenant: 't', runId }, { afterSeq: 0 })).events.filter((e) => (e as { type: string }).type === 'run_started').length;
}

describe('child runs (agentTool)', () => {
  it("starts a child linked to its parent; the child's answer is the call's result and the parent completes with it", async () => {
    const world = familyWorld();
    const worker = await started(world);
    await drain(world, worker);
    const p = await logOf(world, parent);
    const c = await logOf(world, child);
    expect(child.runId).toBe('plan-1-c3-0');
    expect(p.events.find((e) => e.type === 'tool_started')).toMatchObject({ callId: '3-0', wait: { kind: 'child', runId: child.runId } });
    expect(c.events[0]).toMatchObject({ type: 'run_started', agent: { name: 'researcher', version: '1' }, parent: { runId: 'plan-1', callId: '3-0' }, input: { value: { task: 'mugs' } } });
    expect(c.state.outcome).toMatchObject({ type: 'completed', answer: { value: 'findings: {"topic":"mugs","fact":"mugs hold coffee"}' } });
    expect(p.events.find((e) => e.type === 'tool_result')).toMatchObject({
      callId: '3-0',
      ok: true,
      source: 'child',
      inboxId: 'child-3-0',
      output: { kind: 'inline', value: 'findings: {"topic":"mugs","fact":"mugs hold coffee"}' },
    });
    expect(p.state.outcome).toMatchObject({ type: 'completed', answer: { value: 'plan: findings: {"topic":"mugs","fact":"mugs hold coffee"}' } });
    expect(await headOf(world, child)).toMatchObject({ parent: { runId: 'plan-1', callId: '3-0' }, status: 'completed' });
  });

  it('the parent waits holding no Lambda: while the child works, the parent is waiting with no lease and no tick', async () => {
    const world = familyWorld({ childApproval: true });
    const worker = await started(world);
    await drain(world, worker);
    const head = await headOf(world, parent);
    expect(head.status).toBe('waiting');
    expect(head.lease).toBeUndefined();
    expect(head.waits).toEqual([expect.objectContaining({ kind: 'child', callId: '3-0', childRunId: child.runId })]);
    expect(world.storage.queue.take()).toBeUndefined();
  });

  it('a crash between tool_started and the create is repaired by the resume with the same create: one child, same answer', async () => {
    const world = familyWorld();
    // The parent's worker dies right after its tool_started (before the child exists).
    const dying = spawnWorker(world, haltAt('after-append:tool_started'));
    await started(world, { worker: dying });
    await expect(drain(world, dying)).rejects.toThrow(/after-append:tool_started/);
    expect(await world.storage.heads.getHead(child)).toBeUndefined();
    dying.kill();
    await world.clock.advance(61_000); // the dead worker's lease lapses; SQS redelivers the tick
    const fresh = spawnWorker(world);
    await world.storage.queue.enqueue(parent, { dedupeId: 'redeliver' });
    await drain(world, fresh);
    expect(await runStarts(world, child.runId)).toBe(1);
    expect((await logOf(world, parent)).state.outcome?.type).toBe('completed');
    expect((await world.storage.heads.listRuns('t', { parent: 'plan-1', limit: 10 })).runs.map((r) => r.runId)).toEqual([child.runId]);
  });

  it('a crash after the create never makes a second child, and the parent does not re-issue it once the child exists', async () => {
    const world = familyWorld();
    await started(world);
    // The parent's worker dies right after the child's head landed (inside the create, before its tick).
    const dying = spawnWorker(world, haltAtWrite('after-write', 'heads.createHead'));
    await expect(drain(world, dying)).rejects.toThrow(/heads.createHead/);
    expect(await world.storage.heads.getHead(child)).toBeDefined();
    dying.kill();
    await world.clock.advance(61_000);
    const fresh = spawnWorker(world);
    await world.storage.queue.enqueue(parent, { dedupeId: 'redeliver' });
    await drain(world, fresh);
    // The child's first tick was lost with the process: the sweeper wakes its running head once
    // the hold on a tick recorded as queued ends.
    await later(world, fresh, SWEEP_QUEUED_MS + 1_000, 3);
    const c = await logOf(world, child);
    expect(c.types.filter((t) => t === 'run_started')).toHaveLength(1);
    expect(c.state.outcome?.type).toBe('completed');
    expect((await logOf(world, parent)).state.outcome?.type).toBe('completed');
  });

  it("delivers the child's answer once: a repeated delivery (a crash after the put) is ignored by the parent", async () => {
    const world = familyWorld();
    const worker = await started(world);
    await drain(world, worker);
    const c = await logOf(world, child);
    const before = (await logOf(world, parent)).events.length;
    await deliverToParent(worker.deps, child, c.state);
    // FIFO dedupe swallows the repeated wake-up; the pending inbox item puts the parent in the sweep.
    await later(world, worker, 1_000, 7);
    const p = await logOf(world, parent);
    expect(p.events.length).toBe(before);
    expect(p.events.filter((e) => e.type === 'tool_result')).toHaveLength(1);
    expect(await world.storage.inbox.list(parent)).toEqual([]);
  });

  it("a child that fails gives the parent an error tool result with the child's code", async () => {
    // One model call: the child looks up, then cannot afford the model call that would answer.
    const world = familyWorld({ childSteps: 1 });
    const worker = await started(world);
    await drain(world, worker);
    const c = await logOf(world, child);
    expect(c.state.outcome).toMatchObject({ type: 'failed', code: 'budget_exceeded:steps' });
    const result = (await logOf(world, parent)).events.find((e) => e.type === 'tool_result');
    expect(result).toMatchObject({ ok: false, source: 'child', output: { value: { error: 'budget_exceeded:steps', childRunId: child.runId } } });
    expect((await logOf(world, parent)).state.outcome?.type).toBe('completed');
  });

  it("caps the child's budgets by what the parent has left, reserves them on the parent, and reconciles with the child's real spend", async () => {
    const world = familyWorld({ childApproval: true, parentBudgets: { maxCostUsd: 0.2, maxOutputTokens: 1_500 } });
    const worker = await started(world);
    // Stop while the child works: the reservation is on the parent.
    const run = await startAndStopAtChild(world, worker);
    const p = run.parent;
    const reservedStart = p.events.find((e) => e.type === 'tool_started') as unknown as { wait: { reserved: { inputTokens: number; outputTokens: number; costUsd: number } } };
    const ownUse = p.events.filter((e) => e.type === 'model_response').map((e) => e as unknown as { usage: { inputTokens: number; outputTokens: number }; costUsd: number });
    const own = { inputTokens: ownUse.reduce((a, e) => a + e.usage.inputTokens, 0), outputTokens: ownUse.reduce((a, e) => a + e.usage.outputTokens, 0), costUsd: ownUse.reduce((a, e) => a + e.costUsd, 0) };
    // agentTool asks for $0.5 and 2000 output tokens; the parent has less left: the child gets what is left.
    expect(reservedStart.wait.reserved.costUsd).toBeCloseTo(0.2 - own.costUsd, 12);
    expect(reservedStart.wait.reserved.outputTokens).toBe(1_500 - own.outputTokens);
    expect(reservedStart.wait.reserved.inputTokens).toBe(20_000);
    const childStarted = run.child.events[0] as unknown as { budgets: Record<string, number> };
    expect(childStarted.budgets).toMatchObject({ maxCostUsd: reservedStart.wait.reserved.costUsd, maxOutputTokens: 1_500 - own.outputTokens, maxInputTokens: 20_000 });
    // While the child runs, the parent counts the whole reservation as spent.
    expect(p.state.usage.costUsd).toBeCloseTo(0.2, 12);
    expect(p.state.usage.outputTokens).toBe(1_500);
    // The child answers: the parent's spend becomes its own plus what the child really spent.
    await requestApproval(worker.deps, child, { callId: '3-0', decision: 'approve' }, 'person');
    await drain(world, worker);
    const after = await logOf(world, parent);
    const c = await logOf(world, child);
    const ownAfter = after.events.filter((e) => e.type === 'model_response').map((e) => e as unknown as { usage: { inputTokens: number; outputTokens: number }; costUsd: number });
    expect(after.state.usage.inputTokens).toBe(ownAfter.reduce((a, e) => a + e.usage.inputTokens, 0) + c.state.usage.inputTokens);
    expect(after.state.usage.costUsd).toBeCloseTo(ownAfter.reduce((a, e) => a + e.costUsd, 0) + c.state.usage.costUsd, 12);
    expect(after.state.outcome?.type).toBe('completed');
  });

  it('never refunds more than was reserved: a child claiming to have spent more raises nothing above the reservation', async () => {
    const world = familyWorld({ childApproval: true });
    const worker = await started(world);
    await drain(world, worker);
    const p = await logOf(world, parent);
    const reserved = (p.state.calls['3-0']?.wait as { reserved: { inputTokens: number; outputTokens: number; costUsd: number } }).reserved;
    const usageAtStart = p.state.usage;
    // A (buggy or forged) answer claiming ten times the reservation.
    await worker.deps.inbox.put(parent, {
      id: 'child-3-0',
      kind: 'complete_call',
      by: `run:${child.runId}`,
      callId: '3-0',
      via: 'child',
      childRunId: child.runId,
      usage: { inputTokens: reserved.inputTokens * 10, outputTokens: reserved.outputTokens * 10, costUsd: reserved.costUsd * 10 },
      ok: true,
      output: 'done',
    });
    await world.storage.queue.enqueue(parent, { dedupeId: 'forged' });
    await drain(world, worker);
    const state = foldLog((await world.storage.log.read(parent, { afterSeq: 0 })).events);
    const result = Object.values(state.calls).find((c) => c.callId === '3-0');
    expect(result?.result?.source).toBe('child');
    // Everything the parent spent beyond its start is its own final model call: the child part stayed at the reservation.
    const last = (await logOf(world, parent)).events.filter((e) => e.type === 'model_response').at(-1) as unknown as { usage: { inputTokens: number } };
    expect(state.usage.inputTokens).toBe(usageAtStart.inputTokens + last.usage.inputTokens);
  });

  it("a completion from another run (a child id the call does not wait for) is ignored", async () => {
    const world = familyWorld({ childApproval: true });
    const worker = await started(world);
    await drain(world, worker);
    await worker.deps.inbox.put(parent, { id: 'child-3-0', kind: 'complete_call', by: 'run:other', callId: '3-0', via: 'child', childRunId: 'other', ok: true, output: 'forged' });
    await world.storage.queue.enqueue(parent, { dedupeId: 'forged' });
    await drain(world, worker);
    expect((await logOf(world, parent)).types).not.toContain('tool_result');
  });

  it('cancelling the parent cancels its children', async () => {
    const world = familyWorld({ childApproval: true });
    const worker = await started(world);
    await drain(world, worker);
    expect((await headOf(world, child)).status).toBe('awaiting_approval');
    await requestCancel(worker.deps, parent, 'operator');
    await drain(world, worker);
    expect((await logOf(world, parent)).state.outcome?.type).toBe('cancelled');
    const c = await logOf(world, child);
    expect(c.events.find((e) => e.type === 'cancel_requested')).toMatchObject({ requestedBy: 'run:plan-1', inboxId: 'parent-cancel' });
    expect(c.state.outcome?.type).toBe('cancelled');
    expect((await headOf(world, child)).status).toBe('cancelled');
  });

  it('a child parked for a person shows on the parent: GET /runs/{id} lists the child and its status on the open call', async () => {
    const world = familyWorld({ childApproval: true });
    const worker = await started(world);
    await drain(world, worker);
    const service = engineRunService(worker.deps);
    const view = await service.get(caller, 'plan-1');
    expect(view.children).toEqual([{ runId: child.runId, callId: '3-0', status: 'awaiting_approval', summary: expect.stringContaining('lookup') }]);
    expect(view.waiting).toEqual([expect.objectContaining({ kind: 'child', callId: '3-0', childRunId: child.runId, childStatus: 'awaiting_approval' })]);
    const childView = await service.get(caller, child.runId);
    expect(childView.parent).toEqual({ runId: 'plan-1', callId: '3-0' });
    expect((await service.list(caller, { parent: 'plan-1', limit: 20 })).runs.map((r) => r.runId)).toEqual([child.runId]);
    // Another tenant sees neither the parent nor its children.
    await expect(service.get({ tenant: 'u', principal: 'x' }, 'plan-1')).rejects.toMatchObject({ code: 'run_not_found' });
    expect((await service.list({ tenant: 'u', principal: 'x' }, { parent: 'plan-1', limit: 20 })).runs).toEqual([]);
  });

  it("a child that never answers (parked for a person) times out on the parent's side, and is cancelled", async () => {
    const world = familyWorld({ noChildModel: true, childBudgets: { deadlineSeconds: 600 } });
    const worker = await started(world);
    await drain(world, worker);
    expect((await headOf(world, child)).status).toBe('parked');
    await later(world, worker, 602_000, 1);
    await drain(world, worker);
    const p = await logOf(world, parent);
    expect(p.events.find((e) => e.type === 'tool_result')).toMatchObject({ ok: false, source: 'timeout', errorCode: 'child_timeout' });
    expect(p.state.outcome?.type).toBe('completed');
    expect((await logOf(world, child)).state.outcome?.type).toBe('cancelled');
  });
});

/** Halts the process at the first `phase` of a write with this label (a crash on either side of it). */
function haltAtWrite(phase: 'before-write' | 'after-write', label: string) {
  let fired = false;
  return {
    at() {
      if (fired) throw new WorkerHalt('after crash');
    },
    write(p: string, l: string) {
      if (fired) throw new WorkerHalt('after crash');
      if (p === phase && l === label) {
        fired = true;
        throw new WorkerHalt(`${p}:${l}`);
      }
    },
  };
}

/** Start the family with the child parked on its approval: both logs at that point. */
async function startAndStopAtChild(world: World & { effects?: unknown }, worker: ReturnType<typeof spawnWorker>) {
  void world;
  await drain(world, worker);
  return { parent: await logOf(world, parent), child: await logOf(world, child) };
}

describe('a large child answer', () => {
  it("reaches the parent as a blob under the parent's own prefix, which the parent's model is shown", async () => {
    const world = familyWorld({ bigAnswer: 40_000, childBudgets: { maxOutputTokens: 20_000 }, parentBudgets: { maxOutputTokens: 50_000 } });
    const worker = await started(world);
    await drain(world, worker);
    const p = await logOf(world, parent);
    const result = p.events.find((e) => e.type === 'tool_result') as unknown as { source: string; output: { kind: string; key: string; size: number } };
    expect(result.source).toBe('child');
    expect(result.output).toMatchObject({ kind: 'blob', key: expect.stringMatching(/^blobs\/t\/plan-1\//) });
    expect(result.output.size).toBeGreaterThan(40_000);
    expect(p.state.outcome?.type).toBe('completed');
    expect((p.state.outcome as { answer: { kind: string; summary?: string; value?: string } }).answer).toMatchObject({ kind: 'blob' });
    // The inbox item that carried it was small: the body was offloaded before the put.
    expect(await world.storage.inbox.list(parent)).toEqual([]);
  });
});

describe('the child agent is pinned', () => {
  it('a deploy that changes the child agent version parks the pinned parent for the missing version, and starts no child', async () => {
    const { agentTool, defineAgent, defineAgents, ScriptedModel } = await import('logbook');
    const world = familyWorld();
    // The run is created (pinning research → researcher@1), then the deploy replaces researcher@1 with @2.
    await startRun(spawnWorker(world).deps, { ...parent, agent: 'planner', input: 'plan a mug shop' });
    const v1 = world.registry.agent('researcher', '1');
    const planner = world.registry.agent('planner', '1');
    if (!v1 || !planner) throw new Error('agents missing');
    const v2 = defineAgent({ ...v1, version: '2' });
    const redeployed = defineAgents({
      agents: [defineAgent({ ...planner, tools: [agentTool(v2, { name: 'research', version: '1', description: 'Ask the researcher agent about a topic.', budgets: { maxInputTokens: 20_000, maxOutputTokens: 2_000, maxCostUsd: 0.5 } })] })],
      models: { 'scripted:planner': () => new ScriptedModel([{ text: 'Asking.', calls: [{ name: 'research', args: { task: 'mugs' } }] }]), 'scripted:researcher': () => new ScriptedModel([{ text: 'x' }]) },
    });
    const after: World = { ...world, registry: redeployed.registry };
    const worker = spawnWorker(after);
    await drain(after, worker);
    const head = await headOf(after, parent);
    expect(head.status).toBe('parked');
    expect(head.attention[0]).toMatchObject({ reason: 'missing_tool_version' });
    expect(await world.storage.heads.getHead(child)).toBeUndefined();
  });
});

describe('two child calls in one turn', () => {
  it('each gets its own child and its own reservation from what is left; both answers reach the parent', async () => {
    const world = familyWorld({ twoCalls: true });
    const worker = await started(world);
    await drain(world, worker);
    const p = await logOf(world, parent);
    const starts = p.events.filter((e) => e.type === 'tool_started') as unknown as { callId: string; wait: { runId: string } }[];
    expect(starts.map((s) => s.wait.runId)).toEqual([childRunId('plan-1', '3-0'), childRunId('plan-1', '3-1')]);
    const results = p.events.filter((e) => e.type === 'tool_result');
    expect(results.map((r) => [r.callId, r.source, r.inboxId])).toEqual(
      expect.arrayContaining([
        ['3-0', 'child', 'child-3-0'],
        ['3-1', 'child', 'child-3-1'],
      ]),
    );
    expect(p.state.outcome?.type).toBe('completed');
    expect((await world.storage.heads.listRuns('t', { parent: 'plan-1', limit: 10 })).runs).toHaveLength(2);
  });
});

describe('childRunId', () => {
  it('is readable for short parents, a short hash for long ones (nested children), valid and deterministic', async () => {
    const { RUN_ID_PATTERN } = await import('../../../lib/core/run-ref.js');
    expect(childRunId('order-7', '7-0')).toBe('order-7-c7-0');
    const long = 'p'.repeat(80);
    expect(childRunId(long, '12345-6')).toMatch(/^c-[0-9a-f]{40}$/);
    expect(childRunId(long, '12345-6')).toBe(childRunId(long, '12345-6'));
    expect(childRunId(long, '12345-6')).not.toBe(childRunId(long, '12345-7'));
    let id = 'root';
    for (let depth = 0; depth < 30; depth++) {
      id = childRunId(id, `${depth + 3}-0`);
      expect(id).toMatch(RUN_ID_PATTERN);
    }
  });
});
