// The crash-injection harness end to end on the emulators: the support agent's run crashed at
// every checkpoint and before and after every write of every handler, at every 10th pair of checkpoints, and frozen past its lease around tool and
// model calls; resumed by fresh workers that talk to DynamoDB and S3 through the real adapters.
// The invariants are the harness's own (lib/testing/crash-harness.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoStore } from '../../lib/adapters/aws/dynamo-store.js';
import { S3BlobStore } from '../../lib/adapters/aws/s3-blob-store.js';
import type { ManualClock } from '../../lib/adapters/memory/manual-clock.js';
import { runCrashHarness, type HarnessScenario } from '../../lib/testing/crash-harness.js';
import { supportScenario, supportWorld, type SupportWorld } from '../../examples/support-agent/support-world.js';
import type { SideEffect } from '../../examples/support-agent/ledger.js';
import { createTestStack, endpointsFor, type DynamoTarget, type TestStack } from '../setup/emulator-context.js';
import { emulatorStorage } from '../setup/emulator-world.js';
import { RecordingPublisher } from '../../lib/testing/write-points.js';

const targets: DynamoTarget[] = ['dynamodb-local', 'dynalite'];

describe.each(targets)('crash harness on %s', (target) => {
  let stack: TestStack;
  beforeAll(async () => {
    if (endpointsFor(target)) stack = await createTestStack(target, `${target === 'dynalite' ? 'dl' : 'ddb'}-harness`);
  });
  afterAll(async () => {
    await stack?.dispose();
  });

  it.runIf(endpointsFor(target))('holds every invariant at every crash point, at pairs of crashes and at pauses past the lease', async () => {
    let worlds = 0;
    const stores: DynamoStore[] = [];
    const blobs = new S3BlobStore({ s3: stack.clients.s3, bucket: stack.resources.bucket });
    const scenario: HarnessScenario<SupportWorld, SideEffect> = {
      ...supportScenario,
      name: `support agent on ${target} + fauxqs S3`,
      world: () => {
        // TTL filtering follows the world's manual clock, which exists once the world does.
        const time: { clock?: ManualClock } = {};
        const store = new DynamoStore({ doc: stack.clients.doc, tableName: stack.resources.tableName, now: () => time.clock?.now() ?? Date.now() });
        stores.push(store);
        // Outcome notices are recorded, so the harness checks every owed one was published.
        const w = supportWorld({ ...emulatorStorage(store, blobs, `w${++worlds}`), publisher: new RecordingPublisher() });
        time.clock = w.clock;
        return w;
      },
    };
    const started = performance.now();
    const report = await runCrashHarness(scenario, { doubleCrashStride: 10 });
    const seconds = (performance.now() - started) / 1000;
    const requests = stores.reduce((n, s) => n + s.stats.requests, 0);
    const failed = report.points.filter((p) => !p.held);
    console.info(
      `crash harness on ${target}: ${report.points.length} points (${report.baseline.checkpoints} single, ` +
        `${report.points.filter((p) => p.kind === 'double-crash').length} double, ${report.points.filter((p) => p.kind === 'pause').length} pause), ${report.held} held, ${report.failed} failed; ` +
        `${requests} DynamoDB requests in ${seconds.toFixed(1)} s`,
    );
    if (failed.length > 0) console.error(JSON.stringify(failed.slice(0, 5), null, 2));
    expect(report.baseline.status).toBe('completed');
    expect(report.points.filter((p) => p.kind === 'crash')).toHaveLength(report.baseline.checkpoints);
    expect(report.points.filter((p) => p.kind === 'double-crash').length).toBeGreaterThan(10);
    expect(report.points.filter((p) => p.kind === 'pause').length).toBeGreaterThanOrEqual(8);
    expect(report.points.some((p) => p.resolutions > 0)).toBe(true);
    expect(failed).toEqual([]);
  }, 300_000);
});
