// The crash harness over the parent-child handshake (agentTool) on the emulators: the planner and
// its researcher child crashed at every write of both runs, and frozen past
// the lease, with DynamoDB (the parent listing on its sparse byParent index) and S3 through the
// real adapters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoStore } from '../../lib/adapters/aws/dynamo-store.js';
import { S3BlobStore } from '../../lib/adapters/aws/s3-blob-store.js';
import type { ManualClock } from '../../lib/adapters/memory/manual-clock.js';
import { formatHarnessReport, runCrashHarness, type HarnessScenario } from '../../lib/testing/crash-harness.js';
import { effectLog } from '../../lib/testing/side-effects.js';
import { agentsWorld, type World } from '../../lib/testing/world.js';
import type { JsonValue } from '../../lib/core/json.js';
import { RecordingPublisher } from '../../lib/testing/write-points.js';
import { createTestStack, endpointsFor, type TestStack } from '../setup/emulator-context.js';
import { emulatorStorage } from '../setup/emulator-world.js';
import { familyAgents } from '../unit/children/family-agents.js';

const target = endpointsFor('dynamodb-local') ? 'dynamodb-local' : 'dynalite';
type FamilyWorld = World & { effects: ReturnType<typeof effectLog<JsonValue>> };

describe.runIf(endpointsFor(target))(`crash harness over child runs on ${target}`, () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await createTestStack(target, 'child-harness');
  });
  afterAll(async () => {
    await stack?.dispose();
  });

  it('holds at every write of parent and child: one child, the answer delivered, the same final answer', async () => {
    let worlds = 0;
    const blobs = new S3BlobStore({ s3: stack.clients.s3, bucket: stack.resources.bucket });
    const scenario: HarnessScenario<FamilyWorld> = {
      name: `planner calls researcher on ${target}`,
      world: () => {
        const time: { clock?: ManualClock } = {};
        const store = new DynamoStore({ doc: stack.clients.doc, tableName: stack.resources.tableName, now: () => time.clock?.now() ?? Date.now() });
        const effects = effectLog<JsonValue>();
        const w = { ...agentsWorld(familyAgents(effects), { ...emulatorStorage(store, blobs, `c${++worlds}`), publisher: new RecordingPublisher() }), effects };
        time.clock = w.clock;
        return w;
      },
      request: { tenant: 't', runId: 'plan-1', agent: 'planner', input: 'plan a mug shop' },
      sideEffects: (w) => w.effects.all(),
      resolver: () => () => 'retry',
    };
    const report = await runCrashHarness(scenario, { doubleCrashStride: 0 });
    console.info(formatHarnessReport(report));
    expect(report.baseline.status).toBe('completed');
    expect(report.points.filter((p) => p.kind === 'crash')).toHaveLength(report.baseline.checkpoints);
    expect(report.failed, formatHarnessReport(report)).toBe(0);
  }, 300_000);
});
