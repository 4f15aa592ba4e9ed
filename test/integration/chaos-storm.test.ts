// A short kill storm in CI (the full one is `npm run chaos`): runs on the real local stack while
// worker processes are SIGKILLed at random points and duplicated/stale ticks are injected. Every
// run must complete with the uninterrupted answer, no side effect twice, no budget reset,
// contiguous logs and heads equal to their logs; the demo's own checks say so. Beside them a run
// whose lookup kills its worker every time (poison) must end parked, never completed, before the
// DLQ, and a run whose lookup fails every time must complete with the model's answer to it.
import { describe, expect, it } from 'vitest';
import { runDemo } from '../../examples/support-agent/demo/demo.js';
import { MAX_CRASHED_TOOL_ATTEMPTS } from '../../lib/core/limits.js';
import { endpointsFor } from '../setup/emulator-context.js';

const endpoints = endpointsFor('dynamodb-local') ?? endpointsFor('dynalite');
const STORM_DEADLINE_MS = 540_000;

describe.skipIf(!endpoints)('npm run chaos (short)', () => {
  it('every run ends well under worker kills and injected duplicate ticks', async () => {
    // Each line carries its time since the start: on a loaded CI machine the crash back-offs and
    // worker restarts stretch, and a failure must show where the time went. The deadline is
    // generous because it only matters when something is stuck; a healthy storm here takes ~3 min.
    const lines: string[] = [];
    const t0 = Date.now();
    const stamp = (l: string) => lines.push(`${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s ${l}`);
    const report = await runDemo({ runs: 3, chaos: true, injectTicks: true, faults: true, seed: 23, maxKills: 20, endpoints, timeoutMs: STORM_DEADLINE_MS, log: stamp });
    const failed = report.checks.filter((c) => !c.ok);
    expect(failed, lines.join('\n')).toEqual([]);
    expect(report).toMatchObject({ runs: 3, completed: 3, failed: 0, duplicateSideEffects: 0, ok: true });
    expect(report.workerKills).toBeGreaterThanOrEqual(5);
    expect(report.injectedTicks).toBeGreaterThan(0);
    expect(report.checks.map((c) => c.name)).toEqual(expect.arrayContaining(['head equals the fold of the log', 'a poison run ends parked or failed before the DLQ', 'a failing read ends in its error result']));
    expect(report.faults?.poison).toMatchObject({ status: 'parked', reason: expect.stringContaining('tool_attempts_exhausted') });
    // Rerun once by the resolver, then left parked: two crash budgets of lookup starts.
    expect(report.faults?.poison.lookupStarts).toBeGreaterThanOrEqual(2 * MAX_CRASHED_TOOL_ATTEMPTS);
    expect(report.faults?.failing).toMatchObject({ status: 'completed', reason: expect.stringContaining('orders_unavailable') });
    expect(report.deadLettered[`demo-23-poison`] ?? 0).toBe(0);
  }, STORM_DEADLINE_MS + 60_000);
});
