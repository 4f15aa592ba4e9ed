// The crash-injection harness over control (a signal wait, an edited approval, a follow-up) on the
// emulators: the support-guarded run crashed at every checkpoint (every new append and inbox point
// among them), at every 20th pair, and frozen past its lease; resumed by fresh workers that talk
// to DynamoDB and S3 through the real adapters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoStore } from '../../lib/adapters/aws/dynamo-store.js';
import { S3BlobStore } from '../../lib/adapters/aws/s3-blob-store.js';
import type { ManualClock } from '../../lib/adapters/memory/manual-clock.js';
import { runCrashHarness, type HarnessScenario } from '../../lib/testing/crash-harness.js';
import { guardedScenario, guardedWorld } from '../../examples/support-agent/guarded-world.js';
import type { SideEffect } from '../../examples/support-agent/ledger.js';
import type { SupportWorld } from '../../examples/support-agent/support-world.js';
import { createTestStack, endpointsFor, type DynamoTarget, type TestStack } from '../setup/emulator-context.js';
import { emulatorStorage } from '../setup/emulator-world.js';

const targets: DynamoTarget[] = ['dynamodb-local', 'dynalite'];

describe.each(targets)('control harness on %s', (target) => {
  let stack: TestStack;
  beforeAll(async () => {
    if (endpointsFor(target)) stack = await createTestStack(target, `${target === 'dynalite' ? 'dl' : 'ddb'}-ctl-harness`);
  });
  afterAll(async () => {
    await stack?.dispose();
  });

  it.runIf(endpointsFor(target))('holds every invariant at every crash point of a signal wait, an approval and a follow-up', async () => {
    let worlds = 0;
    const blobs = new S3BlobStore({ s3: stack.clients.s3, bucket: stack.resources.bucket });
    const scenario: HarnessScenario<SupportWorld, SideEffect> = {
      ...guardedScenario,
      name: `support-guarded on ${target} + fauxqs S3`,
      world: () => {
        const time: { clock?: ManualClock } = {};
        const store = new DynamoStore({ doc: stack.clients.doc, tableName: stack.resources.tableName, now: () => time.clock?.now() ?? Date.now() });
        const w = guardedWorld(emulatorStorage(store, blobs, `g${++worlds}`));
        time.clock = w.clock;
        return w;
      },
    };
    const report = await runCrashHarness(scenario, { doubleCrashStride: 20 });
    const failed = report.points.filter((p) => !p.held);
    console.info(`control harness on ${target}: ${report.points.length} points (${report.baseline.checkpoints} single), ${report.held} held, ${report.failed} failed`);
    if (failed.length > 0) console.error(JSON.stringify(failed.slice(0, 5), null, 2));
    expect(report.baseline.status).toBe('completed');
    expect(report.points.filter((p) => p.kind === 'crash')).toHaveLength(report.baseline.checkpoints);
    expect(failed).toEqual([]);
  }, 300_000);
});
