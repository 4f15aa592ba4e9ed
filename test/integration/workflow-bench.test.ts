// The workflow bench's measurements (`npm run bench -- --workflow` is the same code) at a small
// size on the suite's emulators: counts only, never times. A rerun step writes one DynamoDB item,
// every other policy two (op_started + op_result); the items read per step stay flat from the first
// to the last tenth of a 1,000-step run worked by a new container every 100 steps (the snapshot
// carries the workflow's state: the tail is all a cold invocation reads); a ctx.map of child
// workflows completes through the queue.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decileReads, fanout, sequential, writesPerStep } from '../../bench/workflow.js';
import { emptyCounters, instrument } from '../../bench/instrument.js';
import type { BenchEnv } from '../../bench/modes.js';
import { createTestStack, endpointsFor, type DynamoTarget, type TestStack } from '../setup/emulator-context.js';

const target: DynamoTarget = endpointsFor('dynamodb-local') ? 'dynamodb-local' : 'dynalite';

describe.runIf(endpointsFor(target))(`workflow bench on ${target}`, () => {
  let stack: TestStack;
  let env: BenchEnv;
  beforeAll(async () => {
    stack = await createTestStack(target, 'wf-bench');
    const counters = emptyCounters();
    instrument(stack.clients, counters);
    const { tableName, bucket, queueUrl } = stack.resources;
    env = { clients: stack.clients, counters, tableName, bucket, queueUrl, floorQueueUrl: queueUrl, snapshotEvery: 50 };
  });
  afterAll(async () => {
    await stack?.dispose();
  });

  it('writes one DynamoDB item per rerun step and two per idempotency_key, verify and escalate step', async () => {
    const tag = `w${Date.now()}`;
    expect(await writesPerStep(env, 'rerun', 60, tag)).toBe(1);
    expect(await writesPerStep(env, 'idempotency_key', 60, tag)).toBe(2);
    expect(await writesPerStep(env, 'verify', 60, tag)).toBe(2);
    expect(await writesPerStep(env, 'escalate', 60, tag)).toBe(2);
  }, 300_000);

  it('reads as many items per step in the last tenth of a 1,000-step run as in the first', async () => {
    const r = await sequential(env, { steps: 1000, slice: 100, policy: 'rerun', tag: `d${Date.now()}` });
    expect(r.outcome).toBe('ended');
    // Exactly 100 live steps per invocation (the bench's clock ends each one), then the one that completes.
    expect(r.invocations.filter((i) => i.steps > 0).map((i) => i.steps)).toEqual(new Array(10).fill(100));
    // A cold invocation reads the snapshot (S3) and at most the log's tail past it, never the whole log.
    for (const inv of r.invocations) expect(inv.itemsRead).toBeLessThanOrEqual(env.snapshotEvery);
    const deciles = decileReads(r);
    expect(deciles[9]!).toBeLessThanOrEqual(1.1 * deciles[0]!);
    expect(r.counters.s3.gets).toBeGreaterThanOrEqual(r.invocations.length - 1);
  }, 300_000);

  it('completes a ctx.map of 50 child workflows through the queue', async () => {
    const f = await fanout(env, { fanout: 50, pollers: 4, tag: `f${Date.now()}` });
    expect(f.completed).toBe(true);
    // The parent's ticks and each child's: at least one per child run.
    expect(f.ticks).toBeGreaterThanOrEqual(50);
    expect(f.maxQueueDepth).toBeGreaterThan(0);
  }, 300_000);
});
