import { describe, expect, it } from 'vitest';
import { formatHarnessReport, runCrashHarness, type HarnessScenario } from 'logbook/testing';
import type { World } from '../../../lib/testing/world.js';
import { familyWorld } from './family-agents.js';

type FamilyWorld = World & ReturnType<typeof familyWorld>;

const scenario: HarnessScenario<FamilyWorld> = {
  name: 'planner calls researcher',
  world: () => familyWorld(),
  request: { tenant: 't', runId: 'plan-1', agent: 'planner', input: 'plan a mug shop' },
  sideEffects: (w) => w.effects.all(),
  // Two crashes around one model call park the run as model_stalled (the runaway guard): retry.
  resolver: () => () => 'retry',
};

describe('crash harness over the parent-child handshake', () => {
  it('holds at every write of parent and child: one child, the parent gets its answer, the same final answer', async () => {
    const report = await runCrashHarness(scenario, { doubleCrashStride: 11 });
    console.info(formatHarnessReport(report));
    expect(report.baseline).toMatchObject({ status: 'completed', answer: 'plan: findings: {"topic":"mugs","fact":"mugs hold coffee"}' });
    const labels = report.points.filter((p) => p.kind === 'crash').map((p) => p.at[0]?.label ?? '');
    // Every write of the handshake is a crash point, on both sides of it.
    for (const write of [
      'before-append:tool_started', // the parent's child wait (and its reservation)
      'after-append:tool_started',
      'before-write:log.append', // the child's run_started among them
      'after-write:heads.createHead', // the child's head
      'after-write:queue.enqueue', // the child's first tick
      'before-write:inbox.put', // the child's answer into the parent's inbox
      'after-write:inbox.put',
      'after-write:heads.markNotified',
      'before-append:tool_result', // the parent ingests the answer
    ]) {
      expect(labels.some((l) => l.startsWith(write)), write).toBe(true);
    }
    expect(report.failed, formatHarnessReport(report)).toBe(0);
  }, 120_000);

  it('holds with two children of one turn answering into the same parent inbox', async () => {
    const report = await runCrashHarness({ ...scenario, name: 'planner calls two researchers', world: () => familyWorld({ twoCalls: true }) }, { doubleCrashStride: 0 });
    console.info(formatHarnessReport(report));
    expect(report.baseline.status).toBe('completed');
    expect(report.failed, formatHarnessReport(report)).toBe(0);
  }, 120_000);
});
