// Poison versus chaos (limits.ts): a run whose worker dies in the same place every time parks as
// poisoned before its tick could reach the DLQ (at most MAX_RECEIVE_COUNT claims); a run whose
// workers are killed at varying places (a kill storm) is never taken for poison.
import { describe, expect, it } from 'vitest';
import { WorkerHalt } from '../../../lib/engine/checkpoints.js';
import { MAX_RECEIVE_COUNT } from '../../../lib/core/limits.js';
import { runStep, type StepResult } from '../../../lib/engine/step-runner.js';
import { startRun } from '../../../lib/engine/start-run.js';
import type { EventLog } from '../../../lib/ports/event-log.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { spawnWorker, type World } from '../../../lib/testing/world.js';
import { haltAt } from './helpers.js';

type Death = 'in-load' | 'after-load';

/** A log port whose reads kill the worker: a load that dies every time. */
function dyingLog(log: EventLog): EventLog {
  return new Proxy(log, {
    get(target, prop, receiver) {
      if (prop === 'read') return async () => Promise.reject(new WorkerHalt('load'));
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
}

async function claimAndDie(world: World, tick: { tenant: string; runId: string }, death: Death, i: number): Promise<StepResult | undefined> {
  const w =
    death === 'in-load'
      ? spawnWorker(world, undefined, {}, { log: dyingLog(world.storage.log) })
      : // The first thing a loaded worker does is append model_started: it dies just before.
        spawnWorker(world, haltAt('before-append'));
  let result: StepResult | undefined;
  try {
    result = await runStep(w.deps, tick, { owner: `w${i}`, deadlineAt: world.clock.now() + 300_000 });
  } catch (error) {
    if (!(error instanceof WorkerHalt)) throw error;
  }
  w.kill();
  await world.clock.advance(61_000); // the dead worker's lease lapses; its tick comes back
  return result;
}

async function firstPoisonedClaim(deaths: (i: number) => Death): Promise<{ claim: number; detail?: string }> {
  const t = scriptedWorld({ tools: [], script: [{ text: 'hi' }] });
  await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
  const tick = t.storage.queue.take()!.tick;
  for (let claim = 1; claim <= 12; claim++) {
    const result = await claimAndDie(t.world, tick, deaths(claim), claim);
    if (result?.outcome === 'poisoned') return { claim, detail: (await t.storage.heads.getHead(t.run))?.park?.detail };
  }
  return { claim: Infinity };
}

describe('poison versus chaos', () => {
  it('a run whose load kills its worker every time parks as poisoned by the 4th claim, before the DLQ', async () => {
    const { claim, detail } = await firstPoisonedClaim(() => 'in-load');
    expect(claim).toBe(4);
    expect(claim).toBeLessThanOrEqual(MAX_RECEIVE_COUNT);
    expect(detail).toMatch(/3 claims in a row died before the run was loaded/);
  });

  it('a run that dies after loading, before it appends anything, every time parks by the 5th claim, before the DLQ', async () => {
    const { claim, detail } = await firstPoisonedClaim(() => 'after-load');
    expect(claim).toBe(5);
    expect(claim).toBeLessThanOrEqual(MAX_RECEIVE_COUNT);
    expect(detail).toMatch(/3 claims in a row loaded the run and died before appending anything/);
  });

  it('a kill storm that strikes claims at varying places (in the load, after it) never parks the run as poisoned', async () => {
    // Eight claims without progress in a row: with one counter for both it would park at the 4th.
    const t = scriptedWorld({ tools: [], script: [{ text: 'hi' }] });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    const tick = t.storage.queue.take()!.tick;
    const storm: Death[] = ['in-load', 'in-load', 'after-load', 'in-load', 'in-load', 'after-load', 'in-load', 'after-load'];
    for (const [i, death] of storm.entries()) {
      const result = await claimAndDie(t.world, tick, death, i);
      expect(result?.outcome).not.toBe('poisoned');
    }
    const w = spawnWorker(t.world);
    await t.storage.queue.enqueue(t.run, { dedupeId: 'after-storm' });
    const done = await driveRun(t.world, t.run, { worker: () => w });
    expect(done.head.status).toBe('completed');
    expect(done.head.park).toBeUndefined();
    // Progress cleared both counters.
    expect(done.head.attempts).toBe(0);
    expect(done.head.stalls ?? 0).toBe(0);
  });
});

describe('poison limits against the dead-letter queue (limits.ts)', () => {
  it('both poison parks land on a delivery SQS still makes', async () => {
    const { MAX_CLAIM_ATTEMPTS, MAX_CLAIM_ATTEMPTS_LIMIT, MAX_STALLED_CLAIMS, MAX_CRASHED_TOOL_ATTEMPTS } = await import('../../../lib/core/limits.js');
    // A load that kills: parked by claim attempts + 1; the configurable limit included.
    expect(MAX_CLAIM_ATTEMPTS + 1).toBeLessThanOrEqual(MAX_RECEIVE_COUNT);
    expect(MAX_CLAIM_ATTEMPTS_LIMIT + 1).toBeLessThanOrEqual(MAX_RECEIVE_COUNT);
    // Dying after the load: the first claim is unmarked, MAX_STALLED_CLAIMS are marked, the next parks.
    expect(MAX_STALLED_CLAIMS + 2).toBeLessThanOrEqual(MAX_RECEIVE_COUNT);
    expect(MAX_CRASHED_TOOL_ATTEMPTS).toBeGreaterThan(3);
    expect(MAX_CRASHED_TOOL_ATTEMPTS + 1).toBeLessThanOrEqual(MAX_RECEIVE_COUNT);
  });
});
