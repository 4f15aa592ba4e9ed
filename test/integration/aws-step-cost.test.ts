// What one step costs in DynamoDB on the emulators, at several run lengths: requests and items
// read per step, cold (a new container per step: snapshot + tail) and warm (one container keeps
// the run cached; recycled every 100 steps). Ticks travel through SQS FIFO on fauxqs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DynamoStore } from '../../lib/adapters/aws/dynamo-store.js';
import { S3BlobStore } from '../../lib/adapters/aws/s3-blob-store.js';
import { SqsStepQueue, SqsTickReceiver } from '../../lib/adapters/aws/sqs-step-queue.js';
import { runStep } from '../../lib/engine/step-runner.js';
import { startRun } from '../../lib/engine/start-run.js';
import { defineTool } from '../../lib/authoring/define-tool.js';
import { scriptedWorld } from '../../lib/testing/scripted-world.js';
import { spawnWorker, type World } from '../../lib/testing/world.js';
import { createTestStack, endpointsFor, type DynamoTarget, type TestStack } from '../setup/emulator-context.js';
import { emulatorStorage } from '../setup/emulator-world.js';
import { diff, emptyCounters, instrument, snapshot, type Counters } from '../../bench/instrument.js';

const echo = defineTool({ name: 'echo', version: '1', description: 'e', input: z.object({ n: z.number() }), policy: 'rerun', execute: async ({ n }) => n });
const STEPS = 500;
const AT = [1, 20, 100, 250, 500];
// The official emulator when java is present, dynalite otherwise (or as LOGBOOK_STEP_COST_TARGET says).
const target: DynamoTarget =
  process.env.LOGBOOK_STEP_COST_TARGET === 'dynalite' || !endpointsFor('dynamodb-local') ? 'dynalite' : 'dynamodb-local';

interface StepCost {
  requests: number;
  itemsRead: number;
  ms: number;
  /** From the SDK middleware: what DynamoDB reported for this step. */
  counted: Counters;
}

describe.runIf(endpointsFor(target))(`DynamoDB cost of a step on ${target}`, () => {
  let stack: TestStack;
  const counters = emptyCounters();
  beforeAll(async () => {
    stack = await createTestStack(target, 'step-cost');
    instrument(stack.clients, counters);
  });
  afterAll(async () => {
    await stack?.dispose();
  });

  /** Run `STEPS` one-tool turns, one per step, and record what each step cost. */
  async function measure(mode: 'cold' | 'warm', steps = STEPS, runId = `cost-${mode}`): Promise<StepCost[]> {
    const t = scriptedWorld({
      tools: [echo],
      script: [(req) => ({ calls: [{ name: 'echo', args: { n: req.messages.length } }] })],
      budgets: { maxSteps: 1000, maxInputTokens: 50_000_000, maxCostUsd: 500 },
    });
    const blobs = new S3BlobStore({ s3: stack.clients.s3, bucket: stack.resources.bucket });
    const queueOptions = { sqs: stack.clients.sqs, queueUrl: stack.resources.queueUrl };
    const queue = new SqsStepQueue(queueOptions);
    const receiver = new SqsTickReceiver(queueOptions);
    // A container: its own DynamoStore (as a Lambda cold start builds one) and its own engine caches.
    const container = () => {
      const store = new DynamoStore({ doc: stack.clients.doc, tableName: stack.resources.tableName, now: () => t.world.clock.now() });
      const world: World = { ...t.world, storage: emulatorStorage(store, blobs, mode) };
      return { store, worker: spawnWorker(world, undefined, { snapshotEvery: 50 }, { queue }) };
    };
    let current = container();
    await startRun(current.worker.deps, { tenant: 't', runId, agent: 'agent', input: 'go' });
    const costs: StepCost[] = [];
    for (let i = 0; i < steps; i++) {
      const [message] = await receiver.receive({ waitSeconds: 1 });
      if (!message?.tick) throw new Error(`no tick at step ${i + 1}`);
      if (message.tick.runId !== runId) {
        // The other test's run left its next tick behind: not ours to measure.
        await receiver.delete(message.receiptHandle);
        i--;
        continue;
      }
      if (mode === 'cold' || i % 100 === 0) current = container();
      const before = { ...current.store.stats };
      const counted = snapshot(counters);
      const started = performance.now();
      await runStep(current.worker.deps, message.tick, {
        owner: current.worker.name,
        deadlineAt: t.world.clock.now() + 300_000,
        minTurnMs: 300_001, // one turn per invocation, as in a busy Lambda
      });
      costs.push({
        requests: current.store.stats.requests - before.requests,
        itemsRead: current.store.stats.itemsRead - before.itemsRead,
        ms: performance.now() - started,
        counted: diff(counters, counted),
      });
      await receiver.delete(message.receiptHandle);
    }
    return costs;
  }

  function report(mode: string, costs: StepCost[]): void {
    const at = AT.map((n) => `step ${n}: ${costs[n - 1]?.requests} req / ${costs[n - 1]?.itemsRead} items`).join(', ');
    const mean = costs.reduce((s, c) => s + c.ms, 0) / costs.length;
    const max = (k: 'requests' | 'itemsRead') => Math.max(...costs.map((c) => c[k]));
    console.info(
      `${target} ${mode}: ${at}; max ${max('requests')} req / ${max('itemsRead')} items; ${mean.toFixed(1)} ms per step (mean of ${costs.length})`,
    );
  }

  it(`cold steps read no more items at step ${STEPS} than around step 20`, async () => {
    const costs = await measure('cold');
    report('cold', costs);
    const window = (from: number, to: number) => costs.slice(from - 1, to);
    const early = Math.max(...window(15, 25).map((c) => c.itemsRead));
    const late = Math.max(...window(STEPS - 4, STEPS).map((c) => c.itemsRead));
    expect(costs[STEPS - 1]!.itemsRead).toBeLessThanOrEqual(Math.max(...window(1, 50).map((c) => c.itemsRead)));
    expect(late).toBeLessThanOrEqual(Math.max(early, 60));
    // Bounded by the snapshot interval, not by the run's length.
    expect(Math.max(...costs.map((c) => c.itemsRead))).toBeLessThan(250);
    expect(Math.max(...window(400, STEPS).map((c) => c.requests))).toBeLessThanOrEqual(Math.max(...window(1, 100).map((c) => c.requests)));
    // One read per cold step, the tail Query: the events' TTL horizon comes from the state the
    // snapshot holds, not from a GetItem of the run's first event.
    for (const c of window(60, STEPS)) expect(c.counted.dynamo.reads).toBe(1);
  }, 300_000);

  it(`warm steps read only what they did not write themselves`, async () => {
    const costs = await measure('warm');
    report('warm', costs);
    expect(costs[STEPS - 1]!.itemsRead).toBeLessThanOrEqual(costs[19]!.itemsRead);
    expect(Math.max(...costs.filter((_, i) => i % 100 !== 0).map((c) => c.itemsRead))).toBeLessThan(10);
    expect(costs[STEPS - 1]!.requests).toBeLessThanOrEqual(costs[19]!.requests);
  }, 300_000);

  // Two levers, counted: the GSIs project keys only, so a step of a running run (whose index keys
  // do not change) writes no index; and a step whose claimed head shows no new inbox version sends
  // no inbox query, so its only read is the tail Query.
  it('a warm step writes no GSI copy and reads nothing: its own release was the last thing that happened', async () => {
    const costs = await measure('warm', 30, 'cost-levers');
    const steady = costs.slice(1, 29);
    for (const c of steady) {
      // The claim grants the epoch right after this container's own: no tail read is needed.
      expect(c.counted.dynamo.reads).toBe(0);
      if (c.counted.gsiReported) expect(c.counted.dynamo.gsiWru).toBe(0);
    }
    // claim, 3 event puts (model_response, tool_started, tool_result carrying the next model
    // call's reservation), head projection and lease release in one update.
    // A snapshot step adds its pointer update.
    for (const c of steady) expect(c.requests).toBeLessThanOrEqual(5 + (c.counted.s3.puts > 0 ? 1 : 0));
  }, 120_000);
});
