import { describe, expect, it } from 'vitest';
import { runDemo } from '../../lib/local/demo.js';
import { endpointsFor } from '../setup/emulator-context.js';

const endpoints = endpointsFor('dynamodb-local') ?? endpointsFor('dynalite');

describe.skipIf(!endpoints)('logbook demo --chaos', () => {
  it('finishes every run with no side effect twice and no budget reset while the worker is killed', async () => {
    const lines: string[] = [];
    const report = await runDemo({ runs: 3, chaos: true, seed: 11, maxKills: 3, endpoints, log: (l) => lines.push(l) });
    const failed = report.checks.filter((c) => !c.ok);
    expect(failed, lines.join('\n')).toEqual([]);
    expect(report).toMatchObject({ runs: 3, completed: 3, failed: 0, duplicateSideEffects: 0, ok: true });
    expect(report.workerKills).toBeLessThanOrEqual(3);
    // Every run wrote one ticket, one email and one refund.
    expect(report.sideEffects).toBe(9);
  }, 240_000);
});
