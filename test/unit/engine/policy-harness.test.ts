// The side-effect policies through the crash harness, on memory: every point holds the harness's
// invariants, every point's log takes only the steps its policy allows, and across the points
// each branch of the policy is met (policy-harness.ts). The same on the emulators:
// test/integration/aws-policy-table.test.ts.
import { describe, expect, it } from 'vitest';
import { formatHarnessReport, runCrashHarness } from '../../../lib/testing/crash-harness.js';
import { BRANCHES_MET, pointChecker, policyScenario } from './policy-harness.js';

const CASES = (['rerun', 'idempotency_key', 'verify', 'escalate'] as const).flatMap((policy) => [
  [policy, false],
  [policy, true],
] as const);

describe('side-effect policies through the crash harness (memory)', () => {
  it.each(CASES)('%s (approval: %s): every point holds and takes only its policy\'s steps; every branch is met', async (policy, approval) => {
    const scenario = policyScenario(policy, { approval });
    const check = pointChecker(policy, scenario);
    const report = await runCrashHarness(scenario, { doubleCrashStride: 8, onPoint: check.onPoint });
    await check.settled();
    console.info(`${formatHarnessReport(report, 3)}; branches met: ${[...check.branches].sort().join(', ')}`);
    expect(report.baseline.status).toBe('completed');
    expect(report.failed, formatHarnessReport(report)).toBe(0);
    expect(check.problems).toEqual([]);
    expect([...check.branches]).toEqual(expect.arrayContaining(BRANCHES_MET[policy]));
  });
});
