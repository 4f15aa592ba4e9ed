// The side-effect policies on the emulators: the policy table (test/unit/engine/policy-table.ts)
// with every case on DynamoDB (DynamoDB Local and dynalite) and S3 (fauxqs) through the real
// adapters, and each policy's one-tool agent through the crash harness there, every point's log
// checked against its policy and every branch required to be met (policy-harness.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoStore } from '../../lib/adapters/aws/dynamo-store.js';
import { S3BlobStore } from '../../lib/adapters/aws/s3-blob-store.js';
import type { ManualClock } from '../../lib/adapters/memory/manual-clock.js';
import { formatHarnessReport, runCrashHarness } from '../../lib/testing/crash-harness.js';
import { createTestStack, endpointsFor, type DynamoTarget, type TestStack } from '../setup/emulator-context.js';
import { emulatorStorage } from '../setup/emulator-world.js';
import { POLICY_CASES, runPolicyCase, mismatches } from '../unit/engine/policy-table.js';
import { BRANCHES_MET, pointChecker, policyScenario } from '../unit/engine/policy-harness.js';

const targets: DynamoTarget[] = ['dynamodb-local', 'dynalite'];

describe.each(targets)('side-effect policies on %s + fauxqs S3', (target) => {
  let stack: TestStack;
  let namespaces = 0;
  beforeAll(async () => {
    if (endpointsFor(target)) stack = await createTestStack(target, `${target === 'dynalite' ? 'dl' : 'ddb'}-policy`);
  });
  afterAll(async () => {
    await stack?.dispose();
  });
  /** Storage of its own for one world: a namespace on the shared table and bucket, reads filtered by the world's clock. */
  const storageFor = (clock: ManualClock) => {
    const store = new DynamoStore({ doc: stack.clients.doc, tableName: stack.resources.tableName, now: () => clock.now() });
    const blobs = new S3BlobStore({ s3: stack.clients.s3, bucket: stack.resources.bucket });
    return emulatorStorage(store, blobs, `p${++namespaces}`);
  };

  it.runIf(endpointsFor(target)).each(POLICY_CASES.map((c) => [c.name, c] as const))('table: %s', async (_name, c) => {
    const observed = await runPolicyCase(c, storageFor);
    expect(mismatches(c, observed), JSON.stringify(observed)).toEqual([]);
  });

  it.runIf(endpointsFor(target)).each(['rerun', 'idempotency_key', 'verify', 'escalate'] as const)(
    'crash harness: a %s tool holds at every point, takes only its policy\'s steps and meets every branch',
    async (policy) => {
      const scenario = policyScenario(policy, { label: target, storage: (_n, clock) => storageFor(clock) });
      const check = pointChecker(policy, scenario);
      const report = await runCrashHarness(scenario, { doubleCrashStride: 0, onPoint: check.onPoint });
      await check.settled();
      console.info(`${formatHarnessReport(report, 3)}; branches met: ${[...check.branches].sort().join(', ')}`);
      expect(report.baseline.status).toBe('completed');
      expect(report.failed, formatHarnessReport(report)).toBe(0);
      expect(check.problems).toEqual([]);
      expect([...check.branches]).toEqual(expect.arrayContaining(BRANCHES_MET[policy]));
    },
    300_000,
  );
});
