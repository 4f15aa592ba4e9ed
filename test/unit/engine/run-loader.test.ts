import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { runStep, type StepResult } from '../../../lib/engine/step-runner.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { spawnWorker, type WorkerProcess } from '../../../lib/testing/world.js';
import { logOf } from './helpers.js';

/**
 * The warm cache skips the tail read only when the claim grants the epoch right after the one
 * this container last wrote under: nobody else held the lease in between. These tests would fail
 * if the skip trusted the cache whenever it had one.
 */
describe('the warm cache and the tail read', () => {
  const lookup = defineTool({ name: 'lookup', version: '1', description: 'look', input: z.object({ q: z.string() }), policy: 'rerun', execute: async ({ q }) => `found ${q}` });
  const script = [1, 2, 3, 4].map((i) => ({ calls: [{ name: 'lookup', args: { q: `q${i}` } }] }));

  async function setup() {
    const t = scriptedWorld({ tools: [lookup], script: [...script, { text: 'done' }] });
    const reads: string[] = [];
    const read = t.world.storage.log.read.bind(t.world.storage.log);
    t.world.storage.log.read = async (run, options) => {
      reads.push(run.runId);
      return read(run, options);
    };
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    // One turn per step: after a turn, less time is left than a turn needs.
    const step = (w: WorkerProcess): Promise<StepResult> =>
      runStep(w.deps, t.run, { owner: w.name, deadlineAt: t.world.clock.now() + 300_000, minTurnMs: 300_001 });
    return { t, reads, step };
  }

  it('the same container stepping again reads nothing: its own release is the last thing that happened', async () => {
    const { t, reads, step } = await setup();
    const a = spawnWorker(t.world);
    await step(a); // cold: reads the log
    const cold = reads.length;
    expect(cold).toBeGreaterThan(0);
    for (let i = 0; i < 3; i++) expect((await step(a)).appended).toBeGreaterThan(0);
    expect(reads.length).toBe(cold);
  });

  it('after another worker stepped in between, the warm container reads the tail and sees its events', async () => {
    const { t, reads, step } = await setup();
    const a = spawnWorker(t.world);
    const b = spawnWorker(t.world);
    await step(a);
    await step(a); // a's cache: written under its own epoch
    const before = (await logOf(t.world, t.run)).state.lastSeq;
    expect((await step(b)).appended).toBeGreaterThan(0); // b claims, appends, releases
    const readsBefore = reads.length;
    const again = await step(a); // a claims two epochs later: its cache is stale
    expect(reads.length).toBeGreaterThan(readsBefore);
    expect(again.outcome).not.toBe('fenced');
    expect(again.appended).toBeGreaterThan(0);
    const { state } = await logOf(t.world, t.run);
    expect(state.lastSeq).toBeGreaterThan(before);
    // Every lookup ran once, in order: nothing was decided twice from a stale state.
    expect(Object.values(state.calls).map((c) => c.name)).toEqual(['lookup', 'lookup', 'lookup', 'lookup'].slice(0, Object.keys(state.calls).length));
  });
});
