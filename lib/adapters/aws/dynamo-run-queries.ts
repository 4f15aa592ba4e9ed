import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { RUN_STATUSES, type ListRunsOptions, type RunHead, type RunStatus } from '../../ports/run-heads.js';
import type { DynamoContext } from './dynamo-context.js';
import { A, itemToHead, sweepAttributes, type Item } from './dynamo-head-item.js';
import { ValidationError } from '../../core/errors.js';
import { decodeListCursor, encodeListCursor } from '../list-cursor.js';
import { errorName } from './aws-errors.js';
import { HEAD_SK, PK, SK, isExpired, parentPk, pk, statusPk, sweepPk, tenantPk, tenantSk } from './dynamo-keys.js';
import { readHeadItem, repairSweep } from './dynamo-sweep.js';
import { TABLE } from './table-definition.js';

/**
 * Runs of a tenant, newest first, optionally in one status (GSIs byTenant / byTenantStatus). The
 * cursor names only a position (see list-cursor.ts): the start key is rebuilt here from the
 * caller's tenant and status, so no client-made key ever reaches DynamoDB.
 */
export async function listRuns(ctx: DynamoContext, tenant: string, options: ListRunsOptions): Promise<{ runs: RunHead[]; cursor?: string }> {
  // Children of one parent: its own sparse index (a status filter then applies to the heads read).
  const index = options.parent !== undefined ? TABLE.gsi.byParent : options.status === undefined ? TABLE.gsi.byTenant : TABLE.gsi.byTenantStatus;
  const partition =
    options.parent !== undefined ? parentPk(tenant, options.parent) : options.status === undefined ? tenantPk(tenant) : statusPk(tenant, options.status);
  const runs: RunHead[] = [];
  const position = options.cursor === undefined ? undefined : decodeListCursor(options.cursor, options.status, options.parent);
  let startKey: Record<string, unknown> | undefined = position && {
    [PK]: pk({ tenant, runId: position.runId }),
    [SK]: HEAD_SK,
    [index.partitionKey]: partition,
    [index.sortKey]: tenantSk(position.createdAt, position.runId),
  };
  do {
    // One more than still wanted: if it comes back, there is a next page (and a cursor).
    const want = options.limit - runs.length + 1;
    const page = await ctx
      .send('listRuns', () =>
        ctx.doc.send(
          new QueryCommand({
            TableName: ctx.table,
            IndexName: index.name,
            KeyConditionExpression: '#p = :p',
            ExpressionAttributeNames: { '#p': index.partitionKey },
            ExpressionAttributeValues: { ':p': partition },
            ExclusiveStartKey: startKey,
            Limit: want,
          }),
        ),
      )
      .catch((error: unknown) => {
        // Only the cursor is the caller's: a key DynamoDB refuses is a bad cursor, not a 500.
        if (position && errorName(error) === 'ValidationException')
          throw new ValidationError('invalid cursor', [{ path: 'cursor', message: 'not a cursor this API issued' }]);
        throw error;
      });
    ctx.countRead(page.ScannedCount ?? page.Items?.length);
    const entries = page.Items ?? [];
    for (const item of await fullHeads(ctx, entries)) {
      // The index lags the table: a head gone, expired or (for a status listing) moved on is skipped.
      if (!item || isExpired(item, ctx.now())) continue;
      if (options.status !== undefined && item.status !== options.status) continue;
      const last = runs.at(-1);
      if (runs.length === options.limit && last) return { runs, cursor: encodeListCursor(last, options.status, options.parent) };
      runs.push(itemToHead(item));
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return { runs };
}

/**
 * Runs of a tenant per status: a `Select: COUNT` query on each status partition of byTenantStatus,
 * followed page by page to the end (DynamoDB stops a page at 1 MB scanned), so a count is exact,
 * never "100+". Why not a counter item per tenant and status kept with each status change: the
 * head is written with single-item conditional UpdateItems on purpose (no transactions, so every
 * emulator runs them), and a counter would need a transaction on every status change (2x the write
 * units of that change, on the step path) plus one hot item per tenant every worker writes to.
 * A COUNT query costs only its reader: the index is KEYS_ONLY, each entry about 150 bytes, so an
 * eventually consistent query reads ~50 entries per read unit ($0.125 per million units: counting
 * 100,000 runs costs ~2,000 units, $0.00025, in ~15 requests of 1 MB). It is as current as the index,
 * which trails head writes by a moment, exactly like a listing by status.
 */
export async function countRuns(
  ctx: DynamoContext,
  tenant: string,
  /** Entries per request (default: DynamoDB's 1 MB page); a test sets it small to cross pages. */
  pageItems?: number,
): Promise<Record<RunStatus, number>> {
  const index = TABLE.gsi.byTenantStatus;
  const counted = await Promise.all(
    RUN_STATUSES.map(async (status) => {
      let count = 0;
      let startKey: Record<string, unknown> | undefined;
      do {
        const page = await ctx.send('countRuns', () =>
          ctx.doc.send(
            new QueryCommand({
              TableName: ctx.table,
              IndexName: index.name,
              KeyConditionExpression: '#p = :p',
              ExpressionAttributeNames: { '#p': index.partitionKey },
              ExpressionAttributeValues: { ':p': statusPk(tenant, status) },
              Select: 'COUNT',
              ExclusiveStartKey: startKey,
              ...(pageItems !== undefined ? { Limit: pageItems } : {}),
            }),
          ),
        );
        ctx.countRead(page.ScannedCount ?? page.Count);
        count += page.Count ?? 0;
        startKey = page.LastEvaluatedKey;
      } while (startKey);
      return [status, count] as const;
    }),
  );
  return Object.fromEntries(counted) as Record<RunStatus, number>;
}

/**
 * Heads of one sweep shard that are due at `now`. The index may hold entries that are early or no
 * longer needed (see dynamo-sweep.ts): each candidate is checked with the exact sweepEntry rule,
 * and stale entries are repaired on the way.
 */
export async function listDue(ctx: DynamoContext, shard: number, now: number, limit: number): Promise<RunHead[]> {
  const due: { head: RunHead; wakeAt: number }[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await ctx.send('listDue', () =>
      ctx.doc.send(
        new QueryCommand({
          TableName: ctx.table,
          IndexName: TABLE.gsi.sweep.name,
          KeyConditionExpression: '#p = :p AND #w <= :now',
          ExpressionAttributeNames: { '#p': A.sweepPk, '#w': A.sweepAt },
          ExpressionAttributeValues: { ':p': sweepPk(shard), ':now': now },
          ExclusiveStartKey: startKey,
        }),
      ),
    );
    ctx.countRead(page.ScannedCount ?? page.Items?.length);
    for (const item of await fullHeads(ctx, page.Items ?? [])) {
      if (!item || isExpired(item, ctx.now())) continue;
      const head = itemToHead(item);
      const exact = sweepAttributes(head);
      await repairSweep(ctx, item, 'sweep');
      if (exact && exact.wakeAt <= now) due.push({ head, wakeAt: exact.wakeAt });
    }
    startKey = due.length >= limit ? undefined : page.LastEvaluatedKey;
  } while (startKey);
  due.sort((a, b) => a.wakeAt - b.wakeAt);
  return due.slice(0, limit).map((d) => d.head);
}

/**
 * The indexes project keys only (TABLE.gsiProjection): read each listed head with a consistent
 * GetItem, in parallel (GetItem needs no grant beyond the one every role has).
 */
function fullHeads(ctx: DynamoContext, entries: Item[]): Promise<(Item | undefined)[]> {
  return Promise.all(entries.map((entry) => readHeadItem(ctx, entry)));
}
