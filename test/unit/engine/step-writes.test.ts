// The writes of one step, one turn per step: the claim, three appends (tool_started, the result
// carrying the next reservation, model_response), and one conditional update that projects the
// head and releases the lease. A step that owes an outcome notice projects, publishes, releases.
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { runStep } from '../../../lib/engine/step-runner.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { logOf } from './helpers.js';

const noop = defineTool({ name: 'noop', version: '1', description: 'noop', input: z.object({}), policy: 'rerun', execute: async () => 'ok' });

describe('the writes of a step', () => {
  it('one turn per step: claim, three appends, and projection + release in one write', async () => {
    const t = scriptedWorld({ tools: [noop], script: [{ calls: [{ name: 'noop', args: {} }] }, { calls: [{ name: 'noop', args: {} }] }, { calls: [{ name: 'noop', args: {} }] }, { text: 'done' }] });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    const heads = t.storage.heads;
    const spies = {
      claim: vi.spyOn(heads, 'claimLease'),
      project: vi.spyOn(heads, 'project'),
      release: vi.spyOn(heads, 'releaseLease'),
      merged: vi.spyOn(heads, 'projectAndRelease'),
      append: vi.spyOn(t.storage.log, 'append'),
    };
    const counts = () => Object.fromEntries(Object.entries(spies).map(([k, s]) => [k, s.mock.calls.length]));
    const reset = () => Object.values(spies).forEach((s) => s.mockClear());
    const step = async () => {
      reset();
      const tick = t.storage.queue.take();
      if (!tick) throw new Error('no tick');
      // Time for one turn only: the step ends at the next turn boundary.
      const result = await runStep(t.worker.deps, tick.tick, { owner: 'w', deadlineAt: t.world.clock.now() + 300_000, minTurnMs: 300_001 });
      return { result, writes: counts() };
    };
    // The first step: the first model call under its own model_started.
    expect((await step()).writes).toEqual({ claim: 1, project: 0, release: 0, merged: 1, append: 2 });
    // Steady state: tools, then the model under the reservation the last result carried.
    for (let i = 0; i < 2; i++) {
      const { result, writes } = await step();
      expect(result.outcome).toBe('continued');
      expect(writes).toEqual({ claim: 1, project: 0, release: 0, merged: 1, append: 3 });
    }
    // The last: tools, the answer, run_completed; a notice is owed, so project, publish, release.
    const last = await step();
    expect(last.result.outcome).toBe('ended');
    expect(last.writes).toEqual({ claim: 1, project: 1, release: 1, merged: 0, append: 4 });
    const { types, state } = await logOf(t.world, t.run);
    expect(types.filter((x) => x === 'model_started')).toHaveLength(1);
    expect(state.usage.steps).toBe(4);
    const head = await heads.getHead(t.run);
    expect(head).toMatchObject({ status: 'completed', lastSeq: state.lastSeq, attempts: 0 });
    expect(head?.lease).toBeUndefined();
  });

  it('maxTurns hands over after that many turns however much time is left', async () => {
    const turn = { calls: [{ name: 'noop', args: {} }] };
    const t = scriptedWorld({ tools: [noop], script: [turn, turn, turn, turn, { text: 'done' }] });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    const step = async () => {
      const tick = t.storage.queue.take();
      if (!tick) throw new Error('no tick');
      return runStep(t.worker.deps, tick.tick, { owner: 'w', deadlineAt: t.world.clock.now() + 300_000, minTurnMs: 1, maxTurns: 2 });
    };
    expect(await step()).toMatchObject({ outcome: 'continued', turns: 2 });
    expect(await step()).toMatchObject({ outcome: 'continued', turns: 2 });
    // The fifth turn answers, and the run ends with turns to spare.
    expect(await step()).toMatchObject({ outcome: 'ended', turns: 1 });
    expect((await logOf(t.world, t.run)).state.outcome).toMatchObject({ type: 'completed' });
  });
});
