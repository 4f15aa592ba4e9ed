// A short kill storm in CI (the full one is `npm run chaos`): runs on the real local stack while
// worker processes are SIGKILLed at random points and duplicated/stale ticks are injected. Every
// run must complete with the uninterrupted answer, no side effect twice, no budget reset,
// contiguous logs and heads equal to their logs; the demo's own checks say so.
import { describe, expect, it } from 'vitest';
import { runDemo } from '../../examples/support-agent/demo/demo.js';
import { endpointsFor } from '../setup/emulator-context.js';

const endpoints = endpointsFor('dynamodb-local') ?? endpointsFor('dynalite');

describe.skipIf(!endpoints)('npm run chaos (short)', () => {
  it('every run ends well under worker kills and injected duplicate ticks', async () => {
    const lines: string[] = [];
    const report = await runDemo({ runs: 3, chaos: true, injectTicks: true, seed: 23, maxKills: 20, endpoints, timeoutMs: 150_000, log: (l) => lines.push(l) });
    const failed = report.checks.filter((c) => !c.ok);
    expect(failed, lines.join('\n')).toEqual([]);
    expect(report).toMatchObject({ runs: 3, completed: 3, failed: 0, duplicateSideEffects: 0, ok: true });
    expect(report.workerKills).toBeGreaterThanOrEqual(5);
    expect(report.injectedTicks).toBeGreaterThan(0);
    expect(report.checks.map((c) => c.name)).toContain('head equals the fold of the log');
  }, 200_000);
});
