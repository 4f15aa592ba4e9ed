// Scale on the whole local stack (`npm run bench -- --scale 100` is the same code): 100 runs
// started at once through the HTTP API and worked by the local runner's worker processes, with the
// real worker handler, on the suite's emulators. Counts only: every run completed, none refused,
// no worker error, and a turn latency for every turn of every run. Time is printed, never asserted.
import { describe, expect, it } from 'vitest';
import { runScale } from '../../bench/scale.js';
import { endpointsFor } from '../setup/emulator-context.js';

const endpoints = endpointsFor('dynamodb-local') ?? endpointsFor('dynalite');
const RUNS = 100;
const TURNS = 3;

describe.skipIf(!endpoints)('scale: 100 concurrent runs on the local stack', () => {
  it('completes every run with no refusal and no worker error', async () => {
    const report = await runScale({ runs: RUNS, turns: TURNS, dynamo: 'auto', endpoints, waitMs: 600_000 });
    expect(report).toMatchObject({ ok: true, runs: RUNS, completed: RUNS, notFinished: 0, refused: 0, workerErrors: 0 });
    // Each run's turns after its first have a gap to the one before: every run's log was read.
    expect(report.turnGaps).toBe(RUNS * (TURNS - 1));
    expect(report.p95TurnMs).toBeGreaterThan(0);
  }, 900_000);
});
