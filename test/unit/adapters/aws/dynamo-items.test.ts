import { describe, expect, it } from 'vitest';
import { headToItem, itemToHead, sweepAttributes } from '../../../../lib/adapters/aws/dynamo-head-item.js';
import { HeadUpdate } from '../../../../lib/adapters/aws/dynamo-heads-write.js';
import { eventSk, isExpired, seqOfSk, tenantSk } from '../../../../lib/adapters/aws/dynamo-keys.js';
import { decodeListCursor, encodeListCursor } from '../../../../lib/adapters/list-cursor.js';
import { sweepFixFor } from '../../../../lib/adapters/aws/dynamo-sweep.js';
import { ValidationError } from '../../../../lib/core/errors.js';
import type { RunHead } from '../../../../lib/ports/run-heads.js';
import { SWEEP_STALL_MS } from '../../../../lib/ports/sweep-index.js';

const NOW = Date.UTC(2026, 10, 1);
const head = (overrides: Partial<RunHead> = {}): RunHead => ({
  tenant: 'acme',
  runId: 'r1',
  agent: { name: 'a', version: '1' },
  status: 'running',
  lastSeq: 3,
  createdAt: NOW,
  updatedAt: NOW,
  epoch: 2,
  attempts: 1,
  inboxVersion: 0,
  ingestedInboxVersion: 0,
  usage: { steps: 1, inputTokens: 1, outputTokens: 1, costUsd: 0.01 },
  attention: [],
  notifiedSeq: 0,
  expiresAt: NOW + 1_000,
  ...overrides,
});

describe('DynamoDB keys', () => {
  it('zero-pads seqs so that string order is seq order', () => {
    expect(eventSk(1)).toBe('EVT#0000000001');
    expect(eventSk(9_999_999_999)).toBe('EVT#9999999999');
    expect(seqOfSk(eventSk(1234))).toBe(1234);
    expect(eventSk(10) > eventSk(9)).toBe(true);
    expect(() => eventSk(-1)).toThrow(RangeError);
    expect(() => eventSk(1.5)).toThrow(RangeError);
  });

  it('orders tenant listings newest first, then by run id', () => {
    const keys = [tenantSk(NOW, 'b'), tenantSk(NOW + 1, 'z'), tenantSk(NOW, 'a')].sort();
    expect(keys).toEqual([tenantSk(NOW + 1, 'z'), tenantSk(NOW, 'a'), tenantSk(NOW, 'b')]);
  });

  it('treats an item as expired once its TTL second has passed', () => {
    expect(isExpired({ expiresAtSec: 100 }, 99_999)).toBe(false);
    expect(isExpired({ expiresAtSec: 100 }, 100_000)).toBe(true);
    expect(isExpired({}, Number.MAX_SAFE_INTEGER)).toBe(false);
  });

  it('round-trips cursors and refuses forged ones', () => {
    const cursor = encodeListCursor({ createdAt: NOW, runId: 'r-1' }, 'running');
    expect(decodeListCursor(cursor, 'running')).toEqual({ createdAt: NOW, runId: 'r-1' });
    const forged = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    for (const bad of [
      'bm90IGpzb24',
      '%%%',
      forged({ pk: 'RUN#a#b', sk: 'HEAD', tenantPk: 'TENANT#a', tenantSk: 'x' }),
      forged({ v: 1, s: null, c: NOW, r: 'a#b' }),
      forged({ v: 1, s: null, c: -1, r: 'r' }),
      forged({ v: 1, s: null, c: NOW, r: 'r', extra: 1 }),
      Buffer.from([0x7b, 0xff, 0x7d]).toString('base64url'),
    ]) {
      expect(() => decodeListCursor(bad, undefined), bad).toThrow(ValidationError);
    }
    // A cursor belongs to the listing it came from.
    expect(() => decodeListCursor(cursor, undefined)).toThrow(ValidationError);
    expect(() => decodeListCursor(cursor, 'completed')).toThrow(ValidationError);
  });
});

describe('head items', () => {
  it('round-trips every field, lease and run wakeAt included', () => {
    const full = head({
      lease: { owner: 'w', until: NOW + 5, epoch: 2 },
      budgets: { maxSteps: 1, maxInputTokens: 2, maxOutputTokens: 3, maxCostUsd: 4, deadlineAt: NOW + 6 },
      park: { reason: 'poisoned', detail: 'd', at: NOW },
      outcome: { status: 'parked', seq: 3, summary: 's' },
      snapshot: { seq: 2, key: 'k', sha256: 'e'.repeat(64), foldVersion: 1 },
      wakeAt: NOW + 7,
    });
    const item = headToItem(full);
    expect(item).toMatchObject({ leaseOwner: 'w', leaseUntil: NOW + 5, leaseEpoch: 2, runWakeAt: NOW + 7, rev: 0, expiresAtSec: Math.ceil((NOW + 1_000) / 1000) });
    expect(itemToHead(item)).toEqual(full);
    expect(itemToHead(headToItem(head()))).toEqual(head());
  });

  it('writes the sparse sweep attributes only when sweepEntry has an entry', () => {
    expect(headToItem(head())).toMatchObject({ sweepPk: expect.stringMatching(/^SWEEP#\d+$/), wakeAt: NOW + SWEEP_STALL_MS });
    const done = headToItem(head({ status: 'completed', outcome: { status: 'completed', seq: 3, summary: 'ok' }, notifiedSeq: 3 }));
    expect(done.sweepPk).toBeUndefined();
    expect(done.wakeAt).toBeUndefined();
  });
});

describe('sweep index repair', () => {
  const item = (h: RunHead, stored?: { wakeAt: number }) => {
    const i = headToItem(h);
    if (stored) {
      i.sweepPk = sweepAttributes(h)?.sweepPk ?? 'SWEEP#0';
      i.wakeAt = stored.wakeAt;
    } else {
      delete i.sweepPk;
      delete i.wakeAt;
    }
    return i;
  };

  it('repairs at once what would hide a due head: missing or later than exact', () => {
    const owed = head({ status: 'completed', outcome: { status: 'completed', seq: 3, summary: 'ok' } });
    expect(sweepFixFor(item(owed), 'write')).toEqual({ set: sweepAttributes(owed) });
    expect(sweepFixFor(item(owed, { wakeAt: NOW + 10 }), 'write')).toEqual({ set: sweepAttributes(owed) });
  });

  it('leaves an early entry to the sweeper, which sets it exact', () => {
    const running = head();
    expect(sweepFixFor(item(running, { wakeAt: NOW }), 'write')).toBeUndefined();
    expect(sweepFixFor(item(running, { wakeAt: NOW }), 'sweep')).toEqual({ set: sweepAttributes(running) });
    expect(sweepFixFor(item(running, { wakeAt: NOW + SWEEP_STALL_MS }), 'sweep')).toBeUndefined();
  });

  it('removes an entry that is no longer needed', () => {
    const done = head({ status: 'completed' });
    expect(sweepFixFor(item(done, { wakeAt: NOW }), 'write')).toEqual({ remove: true });
    expect(sweepFixFor(item(done), 'sweep')).toBeUndefined();
  });
});

describe('HeadUpdate', () => {
  it('builds one conditional UpdateItem with placeholders, bumping rev', () => {
    const cmd = new HeadUpdate()
      .set('status', 'running')
      .setExpression('leaseEpoch', 'epoch + :one')
      .remove('park')
      .add('inboxVersion', 1)
      .bind(':owner', 'w')
      .condition('#leaseOwner = :owner')
      .command({ table: 'tbl' } as never, { tenant: 'acme', runId: 'r1' }, true);
    expect(cmd.input).toMatchObject({
      TableName: 'tbl',
      Key: { pk: 'RUN#acme#r1', sk: 'HEAD' },
      UpdateExpression: 'SET #status = :v0, #leaseEpoch = #epoch + :one ADD #rev :one, #inboxVersion :v1 REMOVE #park',
      ConditionExpression: 'attribute_exists(#pk) AND (#leaseOwner = :owner)',
      ExpressionAttributeValues: { ':one': 1, ':v0': 'running', ':v1': 1, ':owner': 'w' },
      ReturnValues: 'ALL_NEW',
    });
  });
});
