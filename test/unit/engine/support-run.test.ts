import { describe, expect, it } from 'vitest';
import { foldLog } from '../../../lib/core/fold.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { supportWorld, ledgerResolver } from '../../../examples/support-agent/support-world.js';
import { spawnWorker } from '../../../lib/testing/world.js';
import { duplicateEffects } from '../../../examples/support-agent/ledger.js';
import { MAX_CRASHED_TOOL_ATTEMPTS } from '../../../lib/core/limits.js';
import { runStep } from '../../../lib/engine/step-runner.js';
import { haltAt } from './helpers.js';

describe('support agent on memory adapters', () => {
  it('runs to completion with write-before-act ordering and parallel calls', async () => {
    const world = supportWorld();
    const worker = spawnWorker(world);
    const started = await startRun(worker.deps, { tenant: 't1', runId: 'r1', agent: 'support', input: 'Customer c_77 got a damaged order.' });
    expect(started).toEqual({ runId: 'r1', created: true, status: 'running' });
    const result = await driveRun(world, { tenant: 't1', runId: 'r1' }, { worker: () => worker, resolver: ledgerResolver(world) });
    expect(result.head.status).toBe('completed');
    const page = await world.storage.log.read({ tenant: 't1', runId: 'r1' }, { afterSeq: 0 });
    const types = page.events.map((e) => (e as { type: string }).type);
    // The tool_result that resolves the turn's last call carries the next model call's reservation.
    expect(types.slice(0, 6)).toEqual(['run_started', 'model_started', 'model_response', 'tool_started', 'tool_result', 'model_response']);
    expect(page.events[4]).toMatchObject({ type: 'tool_result', reservation: { step: 2 } });
    // Both parallel calls get their started marker before either result.
    const i = types.indexOf('tool_started', 5);
    expect(types.slice(i, i + 4)).toEqual(['tool_started', 'tool_started', 'tool_result', 'tool_result']);
    expect(types.at(-1)).toBe('run_completed');
    const state = foldLog(page.events);
    expect(state.usage.steps).toBe(4);
    expect(state.outcome?.type).toBe('completed');
    expect(duplicateEffects(world.ledger.all())).toEqual([]);
    expect(world.ledger.all().filter((e) => e.service === 'payments')).toHaveLength(1);
    // callIds are <seq of model_response>-<index>; the provider's reused ids are kept beside them.
    const callIds = Object.keys(state.calls);
    expect(callIds).toContain('3-0');
    expect(Object.values(state.calls).map((c) => c.providerId)).toContain('call_0');
  });

  it('returns the existing run for the same id and refuses a different request', async () => {
    const world = supportWorld();
    const worker = spawnWorker(world);
    await startRun(worker.deps, { tenant: 't1', runId: 'same', agent: 'support', input: 'a' });
    const again = await startRun(worker.deps, { tenant: 't1', runId: 'same', agent: 'support', input: 'a' });
    expect(again.created).toBe(false);
    await expect(startRun(worker.deps, { tenant: 't1', runId: 'same', agent: 'support', input: 'b' })).rejects.toMatchObject({ code: 'run_conflict' });
  });

  // The one differing answer of the seed-42 storm: the lookup's worker was killed inside the call
  // often enough to exhaust it; the read got an error result, the model refunded o_unknown. Kills
  // are the infrastructure's fault: the run must park instead and end with the real answer.
  it('a lookup killed with its worker in every start parks for a person and ends with the uninterrupted answer', async () => {
    const world = supportWorld();
    const worker = spawnWorker(world);
    const input = 'Customer c_77 got a damaged order.';
    await startRun(worker.deps, { tenant: 't1', runId: 'calm', agent: 'support', input });
    const calm = await driveRun(world, { tenant: 't1', runId: 'calm' }, { worker: () => worker, resolver: ledgerResolver(world) });
    const run = { tenant: 't1', runId: 'stormy' };
    await startRun(worker.deps, { ...run, agent: 'support', input });
    let tick = world.storage.queue.take()!.tick;
    while (tick.runId !== 'stormy') tick = world.storage.queue.take()!.tick;
    for (let i = 0; i < MAX_CRASHED_TOOL_ATTEMPTS; i++) {
      const dying = spawnWorker(world, haltAt('before-tool:search_orders'));
      await runStep(dying.deps, tick, { owner: `dying-${i}`, deadlineAt: world.clock.now() + 300_000 }).catch(() => undefined);
      dying.kill();
      await world.clock.advance(61_000);
      tick = run;
    }
    await world.storage.queue.enqueue(run, { dedupeId: 'after-kills' });
    const parked = await driveRun(world, run, { worker: () => worker });
    expect(parked.head.status).toBe('parked');
    expect(parked.head.attention).toMatchObject([{ reason: 'tool_attempts_exhausted' }]);
    // The ledger resolver sees that nothing was written and answers rerun, as the demo's does.
    const stormy = await driveRun(world, run, { worker: () => worker, resolver: ledgerResolver(world) });
    expect(stormy.head.status).toBe('completed');
    const answer = async (id: string) => {
      const outcome = foldLog((await world.storage.log.read({ tenant: 't1', runId: id }, { afterSeq: 0 })).events).outcome;
      return outcome?.type === 'completed' ? outcome.answer : outcome;
    };
    expect(await answer('calm')).toMatchObject({ kind: 'inline', value: expect.stringMatching(/^Refunded order o_[0-9a-f]{4} /) });
    expect(await answer('stormy')).toEqual(await answer('calm'));
    expect(calm.head.status).toBe('completed');
  });
});
