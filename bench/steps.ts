/**
 * What one step costs, counted (not timed): DynamoDB requests and items read per step at several
 * run lengths, cold (a new container per step: snapshot + tail) and warm (one container keeps the
 * run cached), on the local emulators with the real adapters. Time per step is printed for
 * orientation only; these machines are noisy.
 *
 *   npm run bench                 # 500 steps, DynamoDB Local when java is present
 *   npm run bench -- --steps 200 --dynamo dynalite
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { createLocalAwsClients } from '../lib/adapters/aws/aws-clients.js';
import { DynamoStore } from '../lib/adapters/aws/dynamo-store.js';
import { S3BlobStore } from '../lib/adapters/aws/s3-blob-store.js';
import { SqsStepQueue, SqsTickReceiver } from '../lib/adapters/aws/sqs-step-queue.js';
import { CryptoIds } from '../lib/adapters/system/crypto-ids.js';
import { SystemClock } from '../lib/adapters/system/system-clock.js';
import { AgentRegistry, defineAgent } from '../lib/engine/agents.js';
import { createEngine } from '../lib/engine/engine.js';
import { startRun } from '../lib/engine/start-run.js';
import { runStep } from '../lib/engine/step-runner.js';
import { defineTool } from '../lib/engine/tools.js';
import { startEmulators } from '../dev/local/emulators.js';
import { createResources, resourceNames } from '../dev/local/resources.js';
import { ScriptedModel, StaticModelResolver } from '../lib/models/scripted-model.js';

const { values } = parseArgs({
  options: { steps: { type: 'string', default: '500' }, dynamo: { type: 'string', default: 'auto' } },
});
const STEPS = Number(values.steps);
const AT = [1, 20, 100, 250, 500, 1000].filter((n) => n <= STEPS);

const echo = defineTool({ name: 'echo', version: '1', description: 'echo', input: z.object({ n: z.number() }), policy: 'rerun', execute: async ({ n }) => n });
const agent = defineAgent({
  name: 'bench',
  version: '1',
  model: { id: 'scripted:bench', maxOutputTokens: 256, price: { inputPerMTokUsd: 0, outputPerMTokUsd: 0 } },
  system: { version: '1', text: 'bench' },
  tools: [echo],
  budgets: { maxSteps: 1000, maxInputTokens: 50_000_000, maxCostUsd: 500 },
});
const registry = new AgentRegistry().register(agent);
const models = new StaticModelResolver({ 'scripted:bench': new ScriptedModel([(req) => ({ calls: [{ name: 'echo', args: { n: req.messages.length } }] })]) });

const emulators = await startEmulators({ dynamo: values.dynamo as 'auto' | 'dynalite' | 'dynamodb-local' });
const clients = createLocalAwsClients(emulators.endpoints);
try {
  const resources = await createResources(emulators.endpoints, resourceNames(`bench-${Date.now()}`));
  const queueOptions = { sqs: clients.sqs, queueUrl: resources.queueUrl };
  const receiver = new SqsTickReceiver(queueOptions);
  const blobs = new S3BlobStore({ s3: clients.s3, bucket: resources.bucket });
  const container = () => {
    const store = new DynamoStore({ doc: clients.doc, tableName: resources.tableName });
    const engine = createEngine(
      { log: store, heads: store, inbox: store, blobs, queue: new SqsStepQueue(queueOptions), models, registry, clock: new SystemClock(), ids: new CryptoIds() },
      { snapshotEvery: 50 },
    );
    return { store, engine };
  };
  console.log(`${STEPS} one-turn steps per mode on ${emulators.dynamo}; snapshots every 50 events\n`);
  console.log('mode  step   requests  items read  ms');
  for (const mode of ['cold', 'warm'] as const) {
    let c = container();
    const runId = `bench-${mode}`;
    await startRun(c.engine, { tenant: 'bench', runId, agent: 'bench', input: 'go' });
    let total = 0;
    for (let i = 1; i <= STEPS; i++) {
      if (mode === 'cold') c = container();
      const [msg] = await receiver.receive({ waitSeconds: 1 });
      if (!msg?.tick) throw new Error(`no tick at step ${i}`);
      const before = { ...c.store.stats };
      const t0 = performance.now();
      // One turn per invocation, as a Lambda whose remaining time allows no second turn.
      await runStep(c.engine, msg.tick, { owner: `w${i}`, deadlineAt: Date.now() + 300_000, minTurnMs: 300_001 });
      const ms = performance.now() - t0;
      await receiver.delete(msg.receiptHandle);
      total += ms;
      if (AT.includes(i)) {
        const req = c.store.stats.requests - before.requests;
        const items = c.store.stats.itemsRead - before.itemsRead;
        console.log(`${mode.padEnd(5)} ${String(i).padStart(4)}   ${String(req).padStart(8)}  ${String(items).padStart(10)}  ${ms.toFixed(1)}`);
      }
      if (i % 100 === 0) process.stderr.write(`  ${mode}: ${i}/${STEPS} steps\n`);
    }
    console.log(`${mode.padEnd(5)} mean ${(total / STEPS).toFixed(1)} ms per step\n`);
  }
} finally {
  clients.destroy();
  await emulators.stop();
}
