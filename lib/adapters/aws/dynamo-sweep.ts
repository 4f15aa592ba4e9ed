import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionFailed, errorName } from './aws-errors.js';
import type { DynamoContext } from './dynamo-context.js';
import { A, itemToHead, storedSweep, sweepAttributes, type Item } from './dynamo-head-item.js';
import { PK, SK } from './dynamo-keys.js';

/**
 * Keeping the sparse sweep index (sweepPk, wakeAt) equal to sweepEntry(head).
 *
 * sweepEntry depends on many head fields while each head write touches only a few, so most writes
 * cannot compute it in the same request. The rule that keeps the sweeper correct is: the index
 * must never miss a head that is due, nor show it later than it is due. An entry that is early
 * only costs the sweeper a read, and listDue filters by the exact rule.
 *
 * - createHead writes the exact entry; an inbox put sets it exactly in the same request.
 * - Writes that get the new item back (claim, release, project, setPark, markNotified) repair it
 *   at once when it is missing, later than exact, or no longer needed ('write' mode). A running
 *   run's entry only gets later as it steps, so a step normally costs no repair.
 * - An entry that is merely early is set exact by the sweeper when it meets it ('sweep' mode).
 *
 * A repair is conditional on the head's `rev` (bumped by every head write, not by repairs); when
 * another write got in first, a 'write' repair reads the head again and re-checks.
 */
export type SweepRepairMode = 'write' | 'sweep';

export type SweepFix = { set: { sweepPk: string; wakeAt: number } } | { remove: true };

export function sweepFixFor(item: Item, mode: SweepRepairMode): SweepFix | undefined {
  const exact = sweepAttributes(itemToHead(item));
  const stored = storedSweep(item);
  if (!exact) return stored ? { remove: true } : undefined;
  if (!stored || stored.sweepPk !== exact.sweepPk) return { set: exact };
  if (stored.wakeAt > exact.wakeAt) return { set: exact };
  if (mode === 'sweep' && stored.wakeAt !== exact.wakeAt) return { set: exact };
  return undefined;
}

/**
 * Applies the fix, if any. When another write got in first (rev moved), a 'write' repair reads the
 * head again and re-checks, so a concurrent heartbeat cannot leave a due head out of the index.
 * A 'sweep' repair just gives up (the next sweep looks again), and so does one the caller's role
 * may not make (a sweeper granted read-only access still works, it just re-reads early entries).
 */
export async function repairSweep(ctx: DynamoContext, item: Item, mode: SweepRepairMode): Promise<boolean> {
  let current: Item | undefined = item;
  for (let round = 0; round < 5 && current; round++) {
    const fix = sweepFixFor(current, mode);
    if (!fix) return false;
    try {
      if (await applyFix(ctx, current, fix)) return true;
    } catch (error) {
      if (mode === 'sweep' && errorName(error) === 'AccessDeniedException') return false;
      throw error;
    }
    if (mode === 'sweep') return false;
    current = await readHeadItem(ctx, current);
  }
  return false;
}

async function applyFix(ctx: DynamoContext, item: Item, fix: SweepFix): Promise<boolean> {
  const names = { '#p': A.sweepPk, '#w': A.sweepAt, '#rev': A.rev };
  try {
    await ctx.send('repairSweep', () =>
      ctx.doc.send(
        new UpdateCommand({
          TableName: ctx.table,
          Key: { [PK]: item[PK], [SK]: item[SK] },
          UpdateExpression: 'set' in fix ? 'SET #p = :p, #w = :w' : 'REMOVE #p, #w',
          ConditionExpression: '#rev = :rev',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: 'set' in fix ? { ':p': fix.set.sweepPk, ':w': fix.set.wakeAt, ':rev': item[A.rev] } : { ':rev': item[A.rev] },
        }),
      ),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionFailed) return false;
    throw error;
  }
}

/** Consistent read of the head an item (or an index entry, which carries the table keys) names. */
export async function readHeadItem(ctx: DynamoContext, item: Item): Promise<Item | undefined> {
  const out = await ctx.send('getHead', () =>
    ctx.doc.send(new GetCommand({ TableName: ctx.table, Key: { [PK]: item[PK], [SK]: item[SK] }, ConsistentRead: true })),
  );
  ctx.countRead(out.Item ? 1 : 0);
  return out.Item;
}
