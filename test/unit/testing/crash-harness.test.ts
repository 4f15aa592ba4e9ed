import { describe, expect, it } from 'vitest';
import { formatHarnessReport, runCrashHarness } from 'logbook/testing';
import { supportScenario as scenario } from '../../../examples/support-agent/support-world.js';

describe('crash-injection harness over the support agent', () => {
  it('holds every invariant at every crash point, pair of crashes and pause point', async () => {
    const report = await runCrashHarness(scenario, { doubleCrashStride: 5 });
    console.info(formatHarnessReport(report, 5));
    expect(report.baseline.status).toBe('completed');
    expect(report.baseline.checkpoints).toBeGreaterThan(40);
    expect(report.points.filter((p) => p.kind === 'crash')).toHaveLength(report.baseline.checkpoints);
    expect(report.points.filter((p) => p.kind === 'double-crash').length).toBeGreaterThan(20);
    expect(report.points.filter((p) => p.kind === 'pause').length).toBeGreaterThanOrEqual(8);
    // Some points must actually exercise the human resolver (escalate) and the verify path.
    expect(report.points.some((p) => p.resolutions > 0)).toBe(true);
    expect(report.failed, formatHarnessReport(report)).toBe(0);
  }, 120_000);
});
