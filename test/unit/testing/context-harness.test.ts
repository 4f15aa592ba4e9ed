import { describe, expect, it } from 'vitest';
import { formatHarnessReport, runCrashHarness, type HarnessScenario } from '../../../lib/testing/crash-harness.js';
import { contextWorld } from '../engine/context-world.js';

/**
 * Six turns with a running summary every two older turns (turns 1-2, then 1-4): the final answer
 * is a digest of the last prompt (context-world.ts), so a point whose resumed run built another
 * prompt (a summary lost, asked twice with another result, turns cut elsewhere) answers differently.
 */
const scenario: HarnessScenario = {
  name: 'context policy with summaries',
  world: () => contextWorld({ keepTurns: 1, olderToolResults: 'summary', summarize: { maxOutputTokens: 200, everyTurns: 2 } }, 6).world,
  request: { tenant: 't', runId: 'ctx-harness', agent: 'agent', input: 'read the pages' },
  sideEffects: () => [],
  // Two crashes in a row inside model calls park the run as model_stalled: the person says retry.
  resolver: () => (attention) => (attention.callId === undefined ? 'retry' : undefined),
};

describe('crash harness with a summarizing context policy', () => {
  it('holds every invariant at every crash point, around the summary calls included', async () => {
    const report = await runCrashHarness(scenario, { doubleCrashStride: 9 });
    console.info(formatHarnessReport(report, 5));
    expect(report.baseline.status).toBe('completed');
    expect(report.baseline.answer).toMatch(/^answer [0-9a-f]{16}$/);
    // Two summary calls, each a step: six turns, two summaries.
    expect(report.baseline.steps).toBe(8);
    const labels = report.points.filter((p) => p.kind === 'crash').map((p) => p.at[0]!.label);
    expect(labels.filter((l) => l.startsWith('before-summary:'))).toHaveLength(2);
    expect(labels.filter((l) => l.startsWith('after-summary:'))).toHaveLength(2);
    // The summary's own appends are crash points too (its reservation, then its answer).
    expect(labels.filter((l) => /^(before|after)-write:log\.append/.test(l)).length).toBeGreaterThan(20);
    // Frozen workers inside a summary call: their lease lapses and another takes over.
    const paused = report.points.filter((p) => p.kind === 'pause').map((p) => p.at[0]!.label);
    expect(paused.filter((l) => /^(before|after)-summary:/.test(l))).toHaveLength(4);
    expect(report.failed, formatHarnessReport(report)).toBe(0);
  }, 300_000);
});
