import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ModelError } from '../../../lib/core/errors.js';
import { reservationOf } from '../../../lib/core/events.js';
import type { ModelRequest, ModelResponse } from '../../../lib/core/messages.js';
import { requestRunAction } from '../../../lib/engine/requests.js';
import { runStep } from '../../../lib/engine/step-runner.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { spawnWorker } from '../../../lib/testing/world.js';
import { haltAt, logOf } from './helpers.js';

const noop = defineTool({ name: 'noop', version: '1', description: 'noop', input: z.object({}), policy: 'rerun', execute: async () => 'ok' });
const loop = [{ calls: [{ name: 'noop', args: {} }] }];

async function runWith(budgets: Record<string, number>, maxOutputTokens = 512) {
  const t = scriptedWorld({ tools: [noop], script: loop, maxOutputTokens });
  await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go', budgets });
  const done = await driveRun(t.world, t.run, { worker: () => t.worker });
  return { t, done, ...(await logOf(t.world, t.run)) };
}

describe('budgets', () => {
  it('are mandatory: defaults are pinned in run_started', async () => {
    const t = scriptedWorld({ tools: [noop], script: [{ text: 'hi' }] });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    const { events } = await logOf(t.world, t.run);
    expect(events[0]).toMatchObject({ budgets: { maxSteps: 50, maxInputTokens: 2_000_000, maxOutputTokens: 200_000, maxCostUsd: 10 } });
  });

  it('steps: a run that keeps calling tools fails with budget_exceeded:steps', async () => {
    const { state, done } = await runWith({ maxSteps: 3 });
    expect(done.head.status).toBe('failed');
    expect(state.outcome).toMatchObject({ type: 'failed', code: 'budget_exceeded:steps' });
    expect(state.usage.steps).toBe(3);
  });

  it('output tokens: the request max is clamped to what is left, then the run fails', async () => {
    // A verbose model that always uses every output token it is allowed.
    const model = {
      async complete(req: ModelRequest): Promise<ModelResponse> {
        return { text: 'x', calls: [{ providerId: 'c', name: 'noop', args: {} }], usage: { inputTokens: 10, outputTokens: req.maxOutputTokens }, stopReason: 'tool_use' };
      },
    };
    const t = scriptedWorld({ tools: [noop], script: [], model });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go', budgets: { maxOutputTokens: 1_000 } });
    await driveRun(t.world, t.run, { worker: () => t.worker });
    const { state, events } = await logOf(t.world, t.run);
    // Reservations: the first model_started, then the ones carried by each turn's last tool_result.
    const starts = events.map((e) => reservationOf(e)).filter((r) => r !== undefined);
    expect(starts.map((s) => s.maxOutputTokens)).toEqual([512, 488]);
    expect(state.usage.outputTokens).toBe(1_000);
    expect(state.outcome).toMatchObject({ code: 'budget_exceeded:output_tokens' });
  });

  it('input tokens and cost: a call that would exceed the budget is not made', async () => {
    const a = await runWith({ maxInputTokens: 1_000 });
    expect(a.state.outcome).toMatchObject({ code: 'budget_exceeded:input_tokens' });
    const b = await runWith({ maxCostUsd: 0.002 });
    expect(b.state.outcome).toMatchObject({ code: 'budget_exceeded:cost' });
    expect(b.state.usage.costUsd).toBeLessThanOrEqual(0.002);
  });

  it('deadline: a run past its absolute deadline fails', async () => {
    const t = scriptedWorld({ tools: [noop], script: loop });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go', budgets: { deadlineSeconds: 60 } });
    await t.world.clock.advance(61_000);
    await driveRun(t.world, t.run, { worker: () => t.worker });
    const { state } = await logOf(t.world, t.run);
    expect(state.outcome).toMatchObject({ code: 'budget_exceeded:deadline' });
  });

  it('a crash between model call and response never refunds the reservation', async () => {
    const t = scriptedWorld({ tools: [noop], script: [{ text: 'answer' }] });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    const dying = spawnWorker(t.world, haltAt('after-model'));
    await expect(runStep(dying.deps, t.storage.queue.take()!.tick, { owner: 'w1', deadlineAt: t.world.clock.now() + 300_000 })).rejects.toThrow();
    dying.kill();
    const mid = await logOf(t.world, t.run);
    const reserved = (mid.events[1] as unknown as { reserved: { inputTokens: number; outputTokens: number } }).reserved;
    expect(mid.state.usage).toMatchObject({ steps: 1, inputTokens: reserved.inputTokens, outputTokens: reserved.outputTokens });
    const w = spawnWorker(t.world);
    await driveRun(t.world, t.run, { worker: () => w });
    const end = await logOf(t.world, t.run);
    expect(end.state.usage.steps).toBe(2);
    // The orphaned reservation stays spent on top of the second call's actual usage.
    expect(end.state.usage.outputTokens).toBeGreaterThanOrEqual(reserved.outputTokens);
  });

  it('a crash right after a tool_result that carries the reservation never refunds it', async () => {
    const t = scriptedWorld({ tools: [noop], script: [{ calls: [{ name: 'noop', args: {} }] }, { text: 'answer' }] });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    // seq 5 is the noop's result: it resolves the turn, so it carries the second model call's reservation.
    const dying = spawnWorker(t.world, haltAt('after-append:tool_result#5'));
    await expect(runStep(dying.deps, t.storage.queue.take()!.tick, { owner: 'w1', deadlineAt: t.world.clock.now() + 300_000 })).rejects.toThrow();
    dying.kill();
    const mid = await logOf(t.world, t.run);
    expect(mid.types).toEqual(['run_started', 'model_started', 'model_response', 'tool_started', 'tool_result']);
    const first = mid.events[2] as unknown as { usage: { inputTokens: number; outputTokens: number } };
    const carried = mid.events[4] as unknown as { reservation: { step: number; reserved: { inputTokens: number; outputTokens: number } } };
    expect(carried.reservation.step).toBe(2);
    // Charged at once, as a model_started would be: the model may have been called.
    expect(mid.state.usage).toMatchObject({
      steps: 2,
      inputTokens: first.usage.inputTokens + carried.reservation.reserved.inputTokens,
      outputTokens: first.usage.outputTokens + carried.reservation.reserved.outputTokens,
    });
    expect(mid.state.unansweredModelCalls).toBe(1);
    const w = spawnWorker(t.world);
    const done = await driveRun(t.world, t.run, { worker: () => w });
    expect(done.head.status).toBe('completed');
    const end = await logOf(t.world, t.run);
    // The resumed worker reserves again (step 3) with its own model_started; the orphan stays spent.
    expect(end.types.slice(5)).toEqual(['model_started', 'model_response', 'run_completed']);
    expect(end.events[5]).toMatchObject({ step: 3 });
    expect(end.state.usage.steps).toBe(3);
    expect(end.state.usage.outputTokens).toBeGreaterThanOrEqual(first.usage.outputTokens + carried.reservation.reserved.outputTokens);
    expect(done.head.usage).toEqual(end.state.usage);
  });

  it('two consecutive model calls without a response park the run; retry resumes it', async () => {
    let failures = 2;
    const model = {
      async complete(req: ModelRequest): Promise<ModelResponse> {
        if (failures-- > 0) throw new ModelError('model_unavailable', 'upstream 503 after retries', true);
        return { text: `ok after ${req.messages.length}`, calls: [], usage: { inputTokens: 10, outputTokens: 5 }, stopReason: 'end_turn' };
      },
    };
    const t = scriptedWorld({ tools: [noop], script: [], model });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    const parked = await driveRun(t.world, t.run, { worker: () => t.worker });
    expect(parked.head.status).toBe('parked');
    expect(parked.head.attention).toMatchObject([{ reason: 'model_stalled' }]);
    const mid = await logOf(t.world, t.run);
    expect(mid.types.filter((x) => x === 'model_failed')).toHaveLength(2);
    await requestRunAction(t.worker.deps, t.run, 'retry', 'ops');
    const done = await driveRun(t.world, t.run, { worker: () => t.worker });
    expect(done.head.status).toBe('completed');
    expect(done.head.usage.steps).toBe(3);
  });

  it('a non-retryable model error fails the run with its code', async () => {
    const model = { complete: async (): Promise<ModelResponse> => { throw new ModelError('model_context_length', 'prompt too long', false); } };
    const t = scriptedWorld({ tools: [noop], script: [], model });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    const done = await driveRun(t.world, t.run, { worker: () => t.worker });
    expect(done.head.status).toBe('failed');
    expect(done.head.outcome).toMatchObject({ code: 'model_context_length' });
  });
});
