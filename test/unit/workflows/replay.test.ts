import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineWorkflow } from '../../../lib/authoring/define-workflow.js';
import { defineAgents } from '../../../lib/authoring/define-agents.js';
import { requestRunAction } from '../../../lib/engine/requests.js';
import { spawnWorker } from '../../../lib/testing/world.js';
import { drain, headOf, later } from '../control/helpers.js';
import { logOf } from '../engine/helpers.js';
import { startAndDrain, workflowWorld } from './world.js';

function versioned(second: string) {
  return defineWorkflow({
    name: 'evolving',
    version: '1',
    async run(ctx) {
      await ctx.step('first', () => 1, { policy: 'rerun' });
      await ctx.sleep(60);
      await ctx.step(second, () => 2, { policy: 'rerun' });
      return 'done';
    },
  });
}

describe('replay and determinism', () => {
  it('parks as workflow_nondeterministic, naming the operation, when the code changed under a waiting run; nothing runs', async () => {
    const t = workflowWorld({ workflows: [versioned('second')] });
    await startAndDrain(t, 'evolving', {});
    // A deploy changed the code of the same version: the step before the sleep is now another.
    let ran = 0;
    const changed = defineWorkflow({
      name: 'evolving',
      version: '1',
      async run(ctx) {
        await ctx.step('renamed', () => ran++, { policy: 'rerun' });
        return 'done';
      },
    });
    const world2 = { ...t.world, registry: defineAgents({ agents: [], workflows: [changed] }).registry };
    const worker2 = spawnWorker(world2);
    await later(world2, worker2, 60_000, 1);
    const head = await headOf(world2, t.run);
    expect(head.status).toBe('parked');
    expect(head.attention[0]).toMatchObject({ reason: 'workflow_nondeterministic' });
    expect(head.attention[0]!.detail).toContain('operation 1: the code asked for step "renamed" where the log holds step "first"');
    expect(head.attention[0]!.detail).toContain('evolving@1');
    expect(ran).toBe(0);
    // Raised once: another wake-up adds nothing.
    const before = (await logOf(world2, t.run)).types.length;
    await later(world2, worker2, 60_000, 2);
    expect((await logOf(world2, t.run)).types.length).toBe(before);
    // The right code deployed again, a person answers retry: the run goes on from its log.
    const world3 = { ...t.world, registry: defineAgents({ agents: [], workflows: [versioned('second')] }).registry };
    const worker3 = spawnWorker(world3);
    await requestRunAction(worker3.deps, t.run, 'retry', 'ops');
    await drain(world3, worker3);
    expect((await logOf(world3, t.run)).state.outcome).toMatchObject({ type: 'completed' });
  });

  it('the log holding an operation the code no longer asks for is non-determinism too', async () => {
    const t = workflowWorld({ workflows: [versioned('second')] });
    await startAndDrain(t, 'evolving', {});
    const shorter = defineWorkflow({
      name: 'evolving',
      version: '1',
      async run(ctx) {
        await ctx.step('first', () => 1, { policy: 'rerun' });
        return 'early';
      },
    });
    const world2 = { ...t.world, registry: defineAgents({ agents: [], workflows: [shorter] }).registry };
    await later(world2, spawnWorker(world2), 60_000, 1);
    const head = await headOf(world2, t.run);
    expect(head.attention[0]?.detail).toContain('operation 2: the log holds sleep, which the code did not ask for');
  });

  it('parks for a missing version instead of running other code', async () => {
    const t = workflowWorld({ workflows: [versioned('second')] });
    await startAndDrain(t, 'evolving', {});
    let v2Ran = 0;
    const v2 = defineWorkflow({ name: 'evolving', version: '2', run: async () => (v2Ran++, 'v2') });
    const world2 = { ...t.world, registry: defineAgents({ agents: [], workflows: [v2] }).registry };
    await later(world2, spawnWorker(world2), 60_000, 1);
    const head = await headOf(world2, t.run);
    expect(head.status).toBe('parked');
    expect(head.attention[0]).toMatchObject({ reason: 'missing_workflow_version' });
    expect(head.attention[0]!.detail).toContain('evolving@1');
    // The latest registered version is not run in its place, and the run does not end.
    expect(v2Ran).toBe(0);
    expect((await logOf(world2, t.run)).state.outcome).toBeUndefined();
  });

  it('now, random and uuid are recorded: a replay sees the same values', async () => {
    const seen: unknown[][] = [];
    const flow = defineWorkflow({
      name: 'values',
      version: '1',
      async run(ctx) {
        const values = [(await ctx.now()).toISOString(), await ctx.random(), await ctx.uuid()];
        await ctx.sleep(10);
        seen.push(values);
        return values;
      },
    });
    const t = workflowWorld({ workflows: [flow] });
    await startAndDrain(t, 'values', {});
    await later(t.world, t.worker, 10_000, 1);
    const { state, types } = await logOf(t.world, t.run);
    expect(types.filter((x) => x === 'op_result')).toHaveLength(4);
    expect(seen).toHaveLength(1);
    const [iso, random, uuid] = seen[0]!;
    expect(iso).toBe(new Date(t.world.clock.now() - 10_000).toISOString());
    expect(typeof random === 'number' && random >= 0 && random < 1).toBe(true);
    expect(uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(state.outcome).toMatchObject({ type: 'completed', output: { kind: 'inline', value: seen[0] } });
  });
});

describe('a workflow that goes wrong', () => {
  it('a throw outside a step fails the run with the error recorded, once', async () => {
    const flow = defineWorkflow({
      name: 'thrower',
      version: '1',
      async run(ctx) {
        await ctx.step('ok', () => 1, { policy: 'rerun' });
        throw new TypeError('no such field');
      },
    });
    const t = workflowWorld({ workflows: [flow] });
    const { state, results } = await startAndDrain(t, 'thrower', {});
    expect(state.outcome).toMatchObject({ type: 'failed', code: 'workflow_failed', message: 'thrower threw TypeError: no such field' });
    expect(results).toHaveLength(1);
  });

  it('an output its schema refuses fails the run as output_invalid', async () => {
    const flow = defineWorkflow({ name: 'bad-out', version: '1', output: z.object({ n: z.number() }), run: async () => ({ n: 'x' }) as never });
    const t = workflowWorld({ workflows: [flow] });
    const { state } = await startAndDrain(t, 'bad-out', {});
    expect(state.outcome).toMatchObject({ type: 'failed', code: 'output_invalid' });
  });

  it('a step result that is not JSON (a Date) fails the step without retries; the code sees why', async () => {
    const flow = defineWorkflow({
      name: 'dates',
      version: '1',
      async run(ctx) {
        return ctx.step('when', () => new Date(0), { policy: 'rerun' }).catch((e: Error) => e.message);
      },
    });
    const t = workflowWorld({ workflows: [flow] });
    const { state, types } = await startAndDrain(t, 'dates', {});
    expect(types).toEqual(['run_started', 'op_result', 'run_completed']);
    expect(state.outcome?.type === 'completed' && state.outcome.answer).toMatchObject({ value: expect.stringContaining('step_result_not_json') });
  });

  it('code that awaits something other than an operation fails clearly instead of hanging', async () => {
    const flow = defineWorkflow({
      name: 'hangs',
      version: '1',
      async run() {
        await new Promise(() => undefined);
        return 'never';
      },
    });
    const t = workflowWorld({ workflows: [flow] });
    const { state } = await startAndDrain(t, 'hangs', {});
    expect(state.outcome).toMatchObject({ type: 'failed', code: 'workflow_awaits_outside' });
  });

  it('the operation past maxSteps fails the run (budget_exceeded:steps), and no step starts after the deadline', async () => {
    const flow = defineWorkflow({
      name: 'many',
      version: '1',
      budgets: { maxSteps: 5 },
      async run(ctx) {
        for (let i = 0; i < 10; i++) await ctx.step(`s${i}`, () => i, { policy: 'rerun' });
        return 'all';
      },
    });
    const t = workflowWorld({ workflows: [flow] });
    const { state, types } = await startAndDrain(t, 'many', {});
    expect(types.filter((x) => x === 'op_result')).toHaveLength(5);
    expect(state.outcome).toMatchObject({ type: 'failed', code: 'budget_exceeded:steps' });
  });

  it('an operation inside a step is refused (it could not be replayed)', async () => {
    const flow = defineWorkflow({
      name: 'nested',
      version: '1',
      async run(ctx) {
        return ctx.step('outer', async () => {
          await ctx.step('inner', () => 1);
          return 'nested';
        }, { policy: 'rerun' }).catch((e: Error) => e.message);
      },
    });
    const t = workflowWorld({ workflows: [flow] });
    const { state } = await startAndDrain(t, 'nested', {});
    expect(state.outcome?.type === 'completed' && state.outcome.answer).toMatchObject({ value: expect.stringContaining('operations cannot nest in a step') });
  });
});
