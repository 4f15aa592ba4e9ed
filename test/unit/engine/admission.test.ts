// Per-tenant admission: a tenant holds at most maxActiveRuns unfinished runs; a new start beyond
// it is refused before anything is written (429 + Retry-After through the API), a retried start
// of an existing run goes on, and a run's end frees its slot.
import { describe, expect, it } from 'vitest';
import { MemoryAdmission } from '../../../lib/adapters/memory/memory-admission.js';
import { createApiApp } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import { TooManyRunsError } from '../../../lib/core/errors.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { spawnWorker } from '../../../lib/testing/world.js';

function limited(max: number) {
  const t = scriptedWorld({ tools: [], script: [{ text: 'a' }, { text: 'b' }, { text: 'c' }] });
  const admission = new MemoryAdmission();
  const worker = spawnWorker(t.world, undefined, { config: { maxActiveRuns: max, admissionRetryAfterS: 7 } }, { admission });
  return { ...t, admission, worker };
}

describe('per-tenant admission', () => {
  it('refuses a new run beyond the limit, writing nothing, and admits it once a run has ended', async () => {
    const t = limited(2);
    const start = (runId: string, tenant = 'acme') => startRun(t.worker.deps, { tenant, runId, agent: 'agent', input: 'go' });
    await start('a');
    await start('b');
    const refused = await start('c').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TooManyRunsError);
    expect(refused).toMatchObject({ code: 'too_many_runs', retryable: true, limit: 2, retryAfterSeconds: 7 });
    expect(await t.storage.heads.getHead({ tenant: 'acme', runId: 'c' })).toBeUndefined();
    expect(await t.storage.log.readOne({ tenant: 'acme', runId: 'c' }, 1)).toBeUndefined();
    expect(t.storage.stepQueue.messages.map((m) => m.tick.runId)).toEqual(['a', 'b']);
    // Another tenant has its own slots.
    await start('c', 'other');
    // A retried start of a run that exists is not a new run: it goes on even at the limit.
    expect(await start('a')).toMatchObject({ runId: 'a', created: false });
    expect(await t.admission.holders('acme')).toEqual(['a', 'b']);

    // Run a ends: its slot is free, and c is admitted.
    t.storage.stepQueue.messages.splice(0);
    const done = await driveRun(t.world, { tenant: 'acme', runId: 'a' }, { worker: () => t.worker });
    expect(done.head.status).toBe('completed');
    expect(await t.admission.holders('acme')).toEqual(['b']);
    expect(await start('c')).toMatchObject({ runId: 'c', created: true });
    // A retried start of the finished run does not take a slot back.
    expect(await start('a')).toMatchObject({ created: false, status: 'completed' });
    expect(await t.admission.holders('acme')).toEqual(['b', 'c']);
  });

  it('the API answers a refused start with 429, its code and Retry-After', async () => {
    const t = limited(1);
    const app = createApiApp({ service: engineRunService(t.worker.deps), caller: () => ({ tenant: 'acme', principal: 'p' }) });
    const post = (runId: string) =>
      app.request('/runs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ agent: 'agent', input: 'go', runId }) });
    expect((await post('one')).status).toBe(201);
    const res = await post('two');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('too_many_runs');
  });

  it('a slot whose taker died before it could give it back (no run was ever created) is freed by a refused start a minute later; a working run keeps its own', async () => {
    const t = limited(2);
    const start = (runId: string) => startRun(t.worker.deps, { tenant: 'acme', runId, agent: 'agent', input: 'go' });
    await start('a');
    // A start admitted and then killed before its append (a Lambda timeout): nothing gives this back.
    expect(await t.admission.admit({ tenant: 'acme', runId: 'ghost' }, 2)).toBe('taken');
    await expect(start('b')).rejects.toBeInstanceOf(TooManyRunsError);
    await t.world.clock.advance(30_000);
    await expect(start('b')).rejects.toBeInstanceOf(TooManyRunsError);
    // Seen runless on two looks a minute apart: it was no start in flight.
    await t.world.clock.advance(31_000);
    expect(await start('b')).toMatchObject({ created: true });
    expect(await t.admission.holders('acme')).toEqual(['a', 'b']);
    // Working runs are never reclaimed, however long they hold their slot.
    await t.world.clock.advance(600_000);
    await expect(start('c')).rejects.toBeInstanceOf(TooManyRunsError);
    await t.world.clock.advance(61_000);
    await expect(start('c')).rejects.toBeInstanceOf(TooManyRunsError);
    expect(await t.admission.holders('acme')).toEqual(['a', 'b']);
  });

  it('a finished run that still holds its slot (its release not done yet) is freed by the first refused start', async () => {
    const t = limited(1);
    const start = (runId: string) => startRun(t.worker.deps, { tenant: 'acme', runId, agent: 'agent', input: 'go' });
    await start('a');
    await driveRun(t.world, { tenant: 'acme', runId: 'a' }, { worker: () => t.worker });
    // As if the outcome's release had failed: the slot is held by a completed run.
    await t.admission.admit({ tenant: 'acme', runId: 'a' }, 1);
    expect(await start('b')).toMatchObject({ created: true });
    expect(await t.admission.holders('acme')).toEqual(['b']);
  });
});
