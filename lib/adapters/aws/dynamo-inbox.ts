import { DeleteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { CorruptLogError, RunNotFoundError } from '../../core/errors.js';
import { inboxItemSchema, type InboxItem } from '../../core/inbox.js';
import type { Inbox } from '../../ports/inbox.js';
import { sweepShard } from '../../ports/sweep-index.js';
import { runName, type RunRef } from '../../core/run-ref.js';
import { ConditionFailed } from './aws-errors.js';
import type { DynamoContext } from './dynamo-context.js';
import { A } from './dynamo-head-item.js';
import { HeadUpdate } from './dynamo-heads-write.js';
import { INBOX_PREFIX, PK, SK, TTL, inboxSk, isExpired, pk, sweepPk, ttlSeconds } from './dynamo-keys.js';

/**
 * Inbox items at INBOX#<id>. A put writes the item (attribute_not_exists), then adds 1 to the
 * head's inboxVersion. The bump is made on every put, a repeated one included: if a first put
 * stored the item and died before its bump, the caller's retry must still bump, or a lease holder
 * could release without seeing the item. A spare bump only costs one more ingest pass.
 */
export class DynamoInbox implements Inbox {
  constructor(private readonly ctx: DynamoContext) {}

  async put(run: RunRef, item: InboxItem): Promise<boolean> {
    let created = false;
    try {
      await this.ctx.send('inboxPut', () =>
        this.ctx.doc.send(
          new PutCommand({
            TableName: this.ctx.table,
            Item: {
              [PK]: pk(run),
              [SK]: inboxSk(item.id),
              kind: item.kind,
              data: JSON.stringify(item),
              [TTL]: ttlSeconds(this.ctx.now() + this.ctx.fallbackRetentionMs),
            },
            ConditionExpression: 'attribute_not_exists(#pk)',
            ExpressionAttributeNames: { '#pk': PK },
          }),
        ),
      );
      created = true;
    } catch (error) {
      if (!(error instanceof ConditionFailed)) throw error;
    }
    // After the bump, items are pending whatever the rest of the head says, so the exact sweep
    // entry is (shard, updatedAt): set it in the same request.
    const update = new HeadUpdate()
      .add('inboxVersion', 1)
      .set(A.sweepPk, sweepPk(sweepShard(run.runId)))
      .setExpression(A.sweepAt, 'updatedAt');
    try {
      await update.send(this.ctx, run, 'inboxBump');
    } catch (error) {
      if (!(error instanceof ConditionFailed)) throw error;
      // Best effort: an orphan item of a run that does not exist is harmless and expires by TTL
      // (and a caller allowed only PutItem/UpdateItem must still get RunNotFoundError).
      if (created) await this.delete(run, item.id).catch(() => undefined);
      throw new RunNotFoundError(run);
    }
    return created;
  }

  async list(run: RunRef): Promise<InboxItem[]> {
    const items: InboxItem[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.ctx.send('inboxList', () =>
        this.ctx.doc.send(
          new QueryCommand({
            TableName: this.ctx.table,
            KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
            ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
            ExpressionAttributeValues: { ':pk': pk(run), ':prefix': INBOX_PREFIX },
            ConsistentRead: true,
            ExclusiveStartKey: startKey,
          }),
        ),
      );
      this.ctx.countRead(page.ScannedCount ?? page.Items?.length);
      for (const raw of page.Items ?? []) {
        if (isExpired(raw, this.ctx.now())) continue;
        items.push(parseInboxItem(run, raw));
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return items;
  }

  async delete(run: RunRef, id: string): Promise<void> {
    await this.ctx.send('inboxDelete', () => this.ctx.doc.send(new DeleteCommand({ TableName: this.ctx.table, Key: { [PK]: pk(run), [SK]: inboxSk(id) } })));
  }
}

function parseInboxItem(run: RunRef, raw: Record<string, unknown>): InboxItem {
  let value: unknown;
  try {
    value = JSON.parse(String(raw.data));
  } catch {
    value = undefined;
  }
  const parsed = inboxItemSchema.safeParse(value);
  if (!parsed.success) throw new CorruptLogError(`inbox item ${String(raw[SK])} of ${runName(run)} is invalid`);
  return parsed.data;
}
