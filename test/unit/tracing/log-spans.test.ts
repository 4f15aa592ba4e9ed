import { describe, expect, it } from 'vitest';
import { formatHarnessReport, runCrashHarness } from 'logbook/testing';
import { supportScenario } from '../../../examples/support-agent/support-world.js';
import type { SupportWorld } from '../../../examples/support-agent/support-world.js';
import { collectTracer } from './collect-tracer.js';
import { logOf, traceFailures } from './trace-invariants.js';

const run = { tenant: supportScenario.request.tenant, runId: supportScenario.request.runId ?? 'harness-run' };

describe('spans projected from the log, across crashes', () => {
  it('every crash point, pair of crashes and frozen worker leaves one trace, one span per model call and tool attempt, no orphan', async () => {
    const worlds: { world: SupportWorld; tracer: ReturnType<typeof collectTracer> }[] = [];
    const report = await runCrashHarness(
      {
        ...supportScenario,
        world: () => {
          const tracer = collectTracer();
          const world = { ...supportScenario.world(), tracer };
          worlds.push({ world, tracer });
          return world;
        },
      },
      { doubleCrashStride: 9 },
    );
    expect(report.failed, formatHarnessReport(report)).toBe(0);
    expect(worlds.length).toBeGreaterThan(40);
    let resent = 0;
    for (const [i, { world, tracer }] of worlds.entries()) {
      const log = await logOf(world, run);
      if (!log.some((e) => e.type === 'run_completed')) continue; // a world the harness set up but did not finish (none expected)
      expect(traceFailures(tracer.spans, log, run), `world ${i}`).toEqual([]);
      resent += tracer.spans.length - new Set(tracer.spans.map((s) => s.spanId)).size;
    }
    // Crashes between a step's spans going out and its head moving re-send them (same ids).
    expect(resent).toBeGreaterThan(0);
  }, 240_000);
});
