// The local stack fires schedules: its timer computes the due firings from the pure cron and hands
// each to the deployed schedule handler, on the emulators. The test drives the timer with times it
// chooses (scheduleEveryMs 0: no timer of the machine's clock fires anything).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '../../dev/local/stack.js';
import { nextFiring, parseCron, scheduleRunId } from '../../lib/core/cron.js';
import { scheduleHandlerFor } from '../../lib/lambda/schedule-handler.js';
import { NIGHTLY_CRON } from '../fixtures/apps/scheduled-agents/agents.js';
import { endpointsFor, uniquePrefix } from '../setup/emulator-context.js';

const endpoints = endpointsFor('dynalite') ?? endpointsFor('dynamodb-local');
let stack: LocalStack | undefined;

beforeAll(async () => {
  if (!endpoints) return;
  stack = await startLocalStack({
    agentsModule: resolve('test/fixtures/apps/scheduled-agents/agents.ts'),
    port: 0,
    endpoints,
    prefix: uniquePrefix('sched-stack'),
    workDir: mkdtempSync(join(tmpdir(), 'logbook-sched-stack-')),
    concurrency: 1,
    sweepEveryMs: 0,
    scheduleEveryMs: 0,
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe.runIf(endpoints)('schedules on the local stack', () => {
  it('names each schedule with its next firing for the banner', () => {
    const lines = stack!.schedules.describe(Date.parse('2026-12-04T12:00:00Z'));
    expect(lines).toContain('nightly-report cron(0 2 * * ? *) Europe/Paris (overlap skip), next 2026-12-05T01:00:00.000Z');
    expect(lines).toContain('digest cron(30 8 ? * MON-FRI *) UTC (overlap queue), next 2026-12-07T08:30:00.000Z');
  });

  it('fires a due schedule once: its run starts under the local tenant with the firing id, and a second tick to the same time fires nothing', async () => {
    const s = stack!;
    const at = nextFiring(parseCron(NIGHTLY_CRON), 'Europe/Paris', Date.now())!;
    const fired = (await s.fireSchedules(at)).filter((f) => f.schedule === 'nightly-report');
    const runId = scheduleRunId('nightly-report', at);
    expect(fired).toEqual([{ schedule: 'nightly-report', scheduledTime: new Date(at).toISOString(), result: { outcome: 'started', runId } }]);
    expect(await s.fireSchedules(at)).toEqual([]);
    const head = await s.runtime.engine.heads.getHead({ tenant: 'local', runId });
    expect(head).toBeDefined();
    // The same firing delivered again (a retried delivery) starts nothing more.
    const handler = scheduleHandlerFor(async () => s.runtime);
    expect(await handler({ schedule: 'nightly-report', scheduledTime: new Date(at).toISOString(), tenant: 'local' })).toEqual({
      outcome: 'already-started',
      runId,
    });
  });
});
