import { describe, expect, it } from 'vitest';
import { resolutionFor, runDemo } from '../../examples/support-agent/demo/demo.js';
import { endpointsFor } from '../setup/emulator-context.js';

const endpoints = endpointsFor('dynamodb-local') ?? endpointsFor('dynalite');
/** A healthy run of this demo takes ~30 s here; the deadline only matters when something is stuck. */
const DEMO_DEADLINE_MS = 240_000;

describe.skipIf(!endpoints)('logbook demo --chaos', () => {
  it('finishes every run with no side effect twice and no budget reset while the worker is killed', async () => {
    // Stamped lines, and the demo's own deadline well inside the test's: a stuck run then ends in
    // a report that names it (where it stopped, what it waits for) instead of a bare test timeout.
    const lines: string[] = [];
    const t0 = Date.now();
    const stamp = (l: string) => lines.push(`${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s ${l}`);
    const report = await runDemo({ runs: 3, chaos: true, seed: 11, maxKills: 3, endpoints, timeoutMs: DEMO_DEADLINE_MS, log: stamp });
    const failed = report.checks.filter((c) => !c.ok);
    expect(failed, lines.join('\n')).toEqual([]);
    expect(report).toMatchObject({ runs: 3, completed: 3, failed: 0, duplicateSideEffects: 0, ok: true });
    expect(report.workerKills).toBeGreaterThanOrEqual(1);
    expect(report.workerKills).toBeLessThanOrEqual(3);
    // Every run wrote one ticket, one email and one refund.
    expect(report.sideEffects).toBe(9);
  }, DEMO_DEADLINE_MS + 60_000);
});

describe('the demo resolver', () => {
  const effect = (callId: string, applied = true) => ({
    service: 'payments' as const,
    op: 'refund',
    key: `local:r-1:${callId}`,
    runId: 'r-1',
    callId,
    applied,
    readOnly: false,
    detail: { orderId: 'o_1', amountCents: 1299, refundId: 'r-abc' },
  });

  it('answers succeeded with what landed, rerun only after the deadline when nothing did', () => {
    const now = Date.parse('2026-11-01T00:00:10Z');
    expect(resolutionFor('r-1', { callId: '13-0' }, [effect('13-0')], now)).toEqual({
      callId: '13-0',
      outcome: 'succeeded',
      result: { refundId: 'r-abc' },
    });
    expect(resolutionFor('r-1', { callId: '13-0', rerunNotBefore: '2026-11-01T00:00:20Z' }, [effect('9-0')], now)).toBeUndefined();
    expect(resolutionFor('r-1', { callId: '13-0', rerunNotBefore: '2026-11-01T00:00:05Z' }, [effect('13-0', false)], now)).toEqual({
      callId: '13-0',
      outcome: 'rerun',
    });
  });
});
