// What only the DynamoDB adapter has: item layout, TTL stamping and filtering, the sparse sweep
// index attributes and what keeping them costs. Runs on DynamoDB Local and on dynalite.
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalAwsClients } from '../../lib/adapters/aws/aws-clients.js';
import { DynamoContext } from '../../lib/adapters/aws/dynamo-context.js';
import { countRuns } from '../../lib/adapters/aws/dynamo-run-queries.js';
import { DynamoStore } from '../../lib/adapters/aws/dynamo-store.js';
import { ManualClock } from '../../lib/adapters/memory/manual-clock.js';
import { CorruptLogError } from '../../lib/core/errors.js';
import type { RunRef } from '../../lib/core/run-ref.js';
import { pk } from '../../lib/adapters/aws/dynamo-keys.js';
import { SWEEP_STALL_MS, sweepShard } from '../../lib/ports/sweep-index.js';
import { createTestStack, endpointsFor, type DynamoTarget, type TestStack } from '../setup/emulator-context.js';
import { DAY, newHead, newRun, runStarted, smallEvent, writer } from '../contract/fixtures.js';
import { projection } from '../contract/run-heads.contract.js';
import { NO_WAIT_RETRY } from '../contract/targets.js';

const targets: DynamoTarget[] = ['dynamodb-local', 'dynalite'];

describe.each(targets)('DynamoStore on %s', (target) => {
  let stack: TestStack;
  let clock: ManualClock;
  let store: DynamoStore;
  const raw = (run: RunRef, sk: string) =>
    stack.clients.doc.send(new GetCommand({ TableName: stack.resources.tableName, Key: { pk: pk(run), sk }, ConsistentRead: true })).then((o) => o.Item);
  const fresh = () => new DynamoStore({ doc: stack.clients.doc, tableName: stack.resources.tableName, now: () => clock.now(), retry: NO_WAIT_RETRY });

  beforeAll(async () => {
    if (!endpointsFor(target)) return;
    stack = await createTestStack(target, `${target === 'dynalite' ? 'dl' : 'ddb'}-layout`);
    clock = new ManualClock();
    store = fresh();
  });
  afterAll(async () => {
    await stack?.dispose();
  });

  it.runIf(endpointsFor(target))('counts runs per status across COUNT pages, to the end of each status partition', async () => {
    const tenant = newRun().tenant;
    for (let i = 0; i < 12; i++) await store.createHead(newHead({ tenant, runId: `cnt-${i}` }, clock.now() + i));
    for (let i = 0; i < 3; i++) await store.project({ tenant, runId: `cnt-${i}` }, projection(clock.now() + 100, { status: 'completed', lastSeq: 9 }));
    const ctx = new DynamoContext({ doc: stack.clients.doc, tableName: stack.resources.tableName, retry: NO_WAIT_RETRY });
    // 4 entries a page: one request per status, and two more for the 9 running (pages of 4, 4, 1).
    const counts = await countRuns(ctx, tenant, 4);
    expect(counts).toMatchObject({ running: 9, completed: 3, awaiting_approval: 0 });
    expect(ctx.stats.requests).toBe(7 + 2);
    expect(await store.countRuns(tenant)).toEqual(counts);
  });

  it.runIf(endpointsFor(target))('stores events at RUN#<tenant>#<runId> / EVT#<10 digits> with the run horizon as TTL', async () => {
    const run = newRun();
    const horizon = clock.now() + 120 * DAY + 1;
    await store.append(run, runStarted(run, writer(0), { at: clock.now(), expiresAt: horizon }));
    await store.append(run, smallEvent(2, writer(1)));
    const first = await raw(run, 'EVT#0000000001');
    expect(first).toMatchObject({ pk: `RUN#${run.tenant}#${run.runId}`, seq: 1, type: 'run_started', expiresAtSec: Math.ceil(horizon / 1000) });
    expect(JSON.parse(first?.data as string)).toMatchObject({ seq: 1, requestHash: 'hash-a' });
    expect((await raw(run, 'EVT#0000000002'))?.expiresAtSec).toBe(Math.ceil(horizon / 1000));
  });

  it.runIf(endpointsFor(target))('a cold writer mid-run reads the horizon from EVT#1 once, then never again', async () => {
    const run = newRun();
    const horizon = clock.now() + 100 * DAY;
    await store.append(run, runStarted(run, writer(0), { at: clock.now(), expiresAt: horizon }));
    const cold = fresh();
    await cold.append(run, smallEvent(2, writer(1)));
    expect(cold.stats).toEqual({ requests: 2, itemsRead: 1 });
    await cold.append(run, smallEvent(3, writer(1)));
    expect(cold.stats.requests).toBe(3);
    expect((await raw(run, 'EVT#0000000003'))?.expiresAtSec).toBe(Math.ceil(horizon / 1000));
  });

  it.runIf(endpointsFor(target))('treats items past their TTL as gone, since TTL deletion lags', async () => {
    const run = newRun();
    const now = clock.now();
    await store.createHead(newHead(run, now, { expiresAt: now + 1_000 }));
    await store.append(run, runStarted(run, writer(0), { at: now, expiresAt: now + 2_000 }));
    await store.append(run, smallEvent(2, writer(1)));
    const later = new DynamoStore({ doc: stack.clients.doc, tableName: stack.resources.tableName, now: () => now + 1_000 });
    expect(await later.getHead(run)).toBeUndefined();
    expect((await later.listRuns(run.tenant, { limit: 5 })).runs).toEqual([]);
    expect((await later.read(run, { afterSeq: 0 })).events).toHaveLength(2);
    const expired = new DynamoStore({ doc: stack.clients.doc, tableName: stack.resources.tableName, now: () => now + 2_000 });
    expect((await expired.read(run, { afterSeq: 0 })).events).toEqual([]);
    expect(await expired.readOne(run, 1)).toBeUndefined();
  });

  it.runIf(endpointsFor(target))('keeps the head GSI keys and the sparse sweep attributes on the item', async () => {
    const run = newRun();
    const now = clock.now();
    await store.createHead(newHead(run, now));
    let item = await raw(run, 'HEAD');
    expect(item).toMatchObject({
      tenantPk: `TENANT#${run.tenant}`,
      statusPk: `TENANT#${run.tenant}#running`,
      sweepPk: `SWEEP#${sweepShard(run.runId)}`,
      wakeAt: now + SWEEP_STALL_MS,
      expiresAtSec: Math.ceil((now + 90 * DAY) / 1000),
    });
    await store.project(run, projection(now + 5, { status: 'completed', lastSeq: 4, outcome: { status: 'completed', seq: 4, summary: 'done' } }));
    item = await raw(run, 'HEAD');
    expect(item).toMatchObject({ statusPk: `TENANT#${run.tenant}#completed`, wakeAt: now + 5 });
    await store.markNotified(run, 4);
    item = await raw(run, 'HEAD');
    expect(item?.sweepPk).toBeUndefined();
    expect(item?.wakeAt).toBeUndefined();
  });

  it.runIf(endpointsFor(target))('costs no index repair on an ordinary step: one request per claim, projection and release', async () => {
    const run = newRun();
    const now = clock.now();
    await store.createHead(newHead(run, now));
    const s = fresh();
    for (let step = 1; step <= 3; step++) {
      const at = now + step * 1_000;
      const before = s.stats.requests;
      const grant = await s.claimLease(run, { owner: `w${step}`, now: at, ttlMs: 60_000 });
      await s.project(run, projection(at + 500, { lastSeq: step + 1 }));
      await s.releaseLease(run, { owner: `w${step}`, epoch: grant.epoch, inboxVersion: 0 });
      expect(s.stats.requests - before).toBe(3);
    }
  });

  it.runIf(endpointsFor(target))('reports an inbox item it cannot read as a corrupt log', async () => {
    const run = newRun();
    await store.createHead(newHead(run, clock.now()));
    await stack.clients.doc.send(new PutCommand({ TableName: stack.resources.tableName, Item: { pk: pk(run), sk: 'INBOX#01X', data: '{"kind":"nope"}' } }));
    await expect(store.list(run)).rejects.toBeInstanceOf(CorruptLogError);
  });

  it.runIf(endpointsFor(target))('serves two containers on one table with independent stats', async () => {
    const run = newRun();
    const other = createLocalAwsClients(stack.endpoints);
    try {
      const a = fresh();
      const b = new DynamoStore({ doc: other.doc, tableName: stack.resources.tableName, now: () => clock.now() });
      await a.createHead(newHead(run, clock.now()));
      expect((await b.getHead(run))?.runId).toBe(run.runId);
      expect(a.stats).toEqual({ requests: 1, itemsRead: 0 });
      expect(b.stats).toEqual({ requests: 1, itemsRead: 1 });
    } finally {
      other.destroy();
    }
  });
});
