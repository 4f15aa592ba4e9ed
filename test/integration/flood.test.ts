// A flood on the whole local stack (`npm run bench -- --flood N` is the same code), short: 60 runs
// started at once by one tenant under a per-tenant limit, and one run of another tenant started
// while the flood is on. Counts only, never time: every run completes, the workers handle at most
// 1.5 ticks per turn made (no tick storm), the step queue never holds more than the limit's worth
// of ticks, and the other tenant's run completes during the flood.
import { describe, expect, it } from 'vitest';
import { runFlood } from '../../bench/flood.js';
import { endpointsFor } from '../setup/emulator-context.js';

const endpoints = endpointsFor('dynamodb-local') ?? endpointsFor('dynalite');
const RUNS = 60;
const LIMIT = 4;

describe.skipIf(!endpoints)('a flood of runs on the local stack', () => {
  it('completes every run without a tick storm, the queue bounded by the tenant limit, and the other tenant served', async () => {
    const report = await runFlood({ runs: RUNS, turns: 2, workers: 2, maxActiveRuns: LIMIT, dynamo: 'auto', endpoints, waitMs: 240_000, reportEveryMs: 10_000 });
    expect(report).toMatchObject({ runs: RUNS, completed: RUNS, otherCompleted: true });
    // The limit was met (starts were refused and retried), and it bounded the queue: each admitted
    // run has at most one tick queued or in flight, plus the other tenant's.
    expect(report.refusals).toBeGreaterThan(0);
    expect(report.queuePeak).toBeLessThanOrEqual(LIMIT + 1);
    expect(report.turns).toBe((RUNS + 1) * 2);
    expect(report.ticksPerTurn).toBeLessThanOrEqual(1.5);
  }, 300_000);
});
