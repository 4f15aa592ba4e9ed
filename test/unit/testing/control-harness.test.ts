import { describe, expect, it } from 'vitest';
import { runCrashHarness } from 'logbook/testing';
import { guardedScenario as scenario } from '../../../examples/support-agent/guarded-world.js';

describe('crash-injection harness over control: a signal wait, an edited approval, a follow-up message', () => {
  it('holds every invariant at every crash point, including every new append and inbox point', async () => {
    const report = await runCrashHarness(scenario, { doubleCrashStride: 9 });
    const failed = report.points.filter((p) => !p.held);
    console.info(
      `control harness: ${report.points.length} points (${report.baseline.checkpoints} single, ` +
        `${report.points.filter((p) => p.kind === 'double-crash').length} double, ${report.points.filter((p) => p.kind === 'pause').length} pause): ` +
        `${report.held} held, ${report.failed} failed`,
    );
    if (failed.length > 0) console.error(JSON.stringify(failed.slice(0, 5), null, 2));
    expect(report.baseline.status).toBe('completed');
    expect(report.baseline.answer).toContain('When does the money arrive?');
    expect(report.points.filter((p) => p.kind === 'crash')).toHaveLength(report.baseline.checkpoints);
    expect(failed).toEqual([]);
  }, 120_000);
});
