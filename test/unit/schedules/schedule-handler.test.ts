import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MemoryAdmission } from '../../../lib/adapters/memory/memory-admission.js';
import { defineAgents } from '../../../lib/authoring/define-agents.js';
import { defineWorkflow } from '../../../lib/authoring/define-workflow.js';
import { scheduleRunId } from '../../../lib/core/cron.js';
import { scheduleHandlerFor } from '../../../lib/lambda/schedule-handler.js';
import { METRIC } from '../../../lib/lambda/telemetry.js';
import type { Runtime } from '../../../lib/lambda/wiring.js';
import { agentsWorld, memoryStorage, spawnWorker } from '../../../lib/testing/world.js';
import { drain } from '../control/helpers.js';

const input = z.object({ region: z.string() });
const nightly = (overlap: 'skip' | 'queue') =>
  defineWorkflow({
    name: 'nightly',
    version: '1',
    input,
    schedule: { cron: 'cron(0 * * * ? *)', input: { region: 'eu' }, overlap, tenant: 'acme' },
    run: async (_ctx, i) => ({ region: i.region }),
  });

function setup(overlap: 'skip' | 'queue', maxActiveRuns = 0) {
  const agents = defineAgents({ agents: [], workflows: [nightly(overlap)] });
  const storage = memoryStorage();
  const world = agentsWorld(agents, storage);
  const admission = new MemoryAdmission();
  const worker = spawnWorker(world, undefined, { config: { maxActiveRuns } }, { admission });
  const metrics: string[] = [];
  const lines: string[] = [];
  const log = (message: string) => lines.push(message);
  const runtime = {
    engine: worker.deps,
    logger: { resetKeys() {}, appendKeys() {}, info: log, warn: log, error: log },
    metrics: { addMetric: (name: string) => metrics.push(name), hasStoredMetrics: () => false, publishStoredMetrics() {} },
  } as unknown as Runtime;
  const handler = scheduleHandlerFor(async () => runtime);
  const fire = (scheduledTime: string, extra: Record<string, unknown> = {}) => handler({ schedule: 'nightly', scheduledTime, ...extra });
  const runsOf = () => [...new Set(storage.stepQueue.messages.map((m) => m.tick.runId))];
  return { world, worker, admission, metrics, lines, fire, runsOf };
}

describe('the schedule handler', () => {
  it('a firing starts the run named by the schedule and the scheduled time; a duplicate delivery starts nothing more', async () => {
    const t = setup('skip');
    const first = await t.fire('2026-12-04T09:00:00Z');
    expect(first).toEqual({ outcome: 'started', runId: 'sched-nightly-20261204T0900Z' });
    expect(await t.fire('2026-12-04T09:00:00Z')).toEqual({ outcome: 'already-started', runId: 'sched-nightly-20261204T0900Z' });
    expect(await t.fire('2026-12-04T09:00:00.000Z')).toEqual({ outcome: 'already-started', runId: 'sched-nightly-20261204T0900Z' });
    expect(t.runsOf()).toEqual(['sched-nightly-20261204T0900Z']);
    expect(t.metrics.filter((m) => m === METRIC.RunsStarted)).toHaveLength(1);
    const started = await t.world.storage.log.readOne({ tenant: 'acme', runId: first.runId! }, 1);
    expect(started).toBeDefined();
  });

  it("overlap 'skip': the next firing starts nothing while the earlier run is unfinished, and starts once it has finished", async () => {
    const t = setup('skip');
    await t.fire('2026-12-04T09:00:00Z');
    const skipped = await t.fire('2026-12-04T10:00:00Z');
    expect(skipped).toEqual({ outcome: 'skipped', runId: 'sched-nightly-20261204T1000Z', behind: 'sched-nightly-20261204T0900Z' });
    expect(await t.world.storage.log.readOne({ tenant: 'acme', runId: 'sched-nightly-20261204T1000Z' }, 1)).toBeUndefined();
    expect(t.metrics).toContain(METRIC.ScheduleFiringsSkipped);
    // A skipped firing left no run: the one after still sees the 09:00 run behind it.
    expect(await t.fire('2026-12-04T11:00:00Z')).toMatchObject({ outcome: 'skipped', behind: 'sched-nightly-20261204T0900Z' });
    await drain(t.world, t.worker);
    expect((await t.world.storage.heads.getHead({ tenant: 'acme', runId: 'sched-nightly-20261204T0900Z' }))?.status).toBe('completed');
    expect(await t.fire('2026-12-04T12:00:00Z')).toEqual({ outcome: 'started', runId: 'sched-nightly-20261204T1200Z' });
  });

  it("overlap 'queue': the next firing starts its run while the earlier one is unfinished", async () => {
    const t = setup('queue');
    await t.fire('2026-12-04T09:00:00Z');
    expect(await t.fire('2026-12-04T10:00:00Z')).toEqual({ outcome: 'started', runId: 'sched-nightly-20261204T1000Z' });
    expect(t.runsOf()).toEqual(['sched-nightly-20261204T0900Z', 'sched-nightly-20261204T1000Z']);
  });

  it("overlap 'queue' goes through the admission gate: at the tenant's limit the firing throws (retried) and writes nothing, then starts once a slot is free", async () => {
    const t = setup('queue', 1);
    await t.fire('2026-12-04T09:00:00Z');
    await expect(t.fire('2026-12-04T10:00:00Z')).rejects.toMatchObject({ code: 'too_many_runs', retryable: true });
    expect(await t.world.storage.log.readOne({ tenant: 'acme', runId: 'sched-nightly-20261204T1000Z' }, 1)).toBeUndefined();
    await drain(t.world, t.worker);
    expect(await t.fire('2026-12-04T10:00:00Z')).toEqual({ outcome: 'started', runId: 'sched-nightly-20261204T1000Z' });
    expect(await t.admission.holders('acme')).toEqual(['sched-nightly-20261204T1000Z']);
  });

  it('drops what can never start a run: an unknown schedule, a malformed event; the event may name the tenant', async () => {
    const t = setup('skip');
    expect(await t.fire('2026-12-04T09:00:00Z', { schedule: 'weekly' })).toEqual({ dropped: 'schedule' });
    expect(await t.fire('yesterday')).toEqual({ dropped: 'event' });
    expect(await t.fire('2026-12-04T09:00:00Z', { extra: 1 })).toEqual({ dropped: 'event' });
    expect(t.runsOf()).toEqual([]);
    expect(await t.fire('2026-12-04T09:00:00Z', { tenant: 'local' })).toEqual({
      outcome: 'started',
      runId: scheduleRunId('nightly', Date.parse('2026-12-04T09:00:00Z')),
    });
    expect(await t.world.storage.heads.getHead({ tenant: 'local', runId: 'sched-nightly-20261204T0900Z' })).toBeDefined();
  });
});
