import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { AppendConflictError } from '../../core/errors.js';
import type { RunEvent } from '../../core/events.js';
import type { AppendOptions, EventLog, ReadPage } from '../../ports/event-log.js';
import { runName, type RunRef } from '../../core/run-ref.js';
import { ConditionFailed } from './aws-errors.js';
import type { DynamoContext } from './dynamo-context.js';
import type { Item } from './dynamo-head-item.js';
import { LAST_EVENT_SK, MAX_SEQ, PK, SK, TTL, eventSk, isExpired, pk, ttlSeconds } from './dynamo-keys.js';

/**
 * The append-only log: one item per event at EVT#<seq>, written with attribute_not_exists, so
 * (run, seq) is unique and a stale writer's append is refused. The event is stored as its JSON
 * text in `data` (byte-exact round trip); `seq` and `type` sit beside it for people reading the table.
 *
 * Every event's TTL is the run's retention horizon, run_started.expiresAt. It is learned from
 * run_started when appended or read; a cold writer that starts mid-run reads EVT#1's TTL once.
 */
export class DynamoEventLog implements EventLog {
  private readonly horizons = new Map<string, number>();

  constructor(private readonly ctx: DynamoContext) {}

  async append(run: RunRef, event: RunEvent, options?: AppendOptions): Promise<void> {
    const horizonMs = await this.horizon(run, event, options?.horizon);
    const item: Item = {
      [PK]: pk(run),
      [SK]: eventSk(event.seq),
      seq: event.seq,
      type: event.type,
      data: JSON.stringify(event),
      [TTL]: ttlSeconds(horizonMs),
    };
    try {
      await this.ctx.send('append', () =>
        this.ctx.doc.send(
          new PutCommand({
            TableName: this.ctx.table,
            Item: item,
            ConditionExpression: 'attribute_not_exists(#pk)',
            ExpressionAttributeNames: { '#pk': PK },
          }),
        ),
      );
    } catch (error) {
      if (!(error instanceof ConditionFailed)) throw error;
      // Someone holds this seq. If it is our own earlier attempt (a retried request), that is success.
      const stored = (await this.readOne(run, event.seq)) as Partial<RunEvent> | undefined;
      if (stored?.by?.nonce === event.by.nonce && stored.by.epoch === event.by.epoch) return;
      throw new AppendConflictError(run, event.seq, { cause: error });
    }
  }

  async read(run: RunRef, options: { afterSeq: number; limit?: number }): Promise<ReadPage> {
    const events: unknown[] = [];
    const from = Math.max(0, Math.floor(options.afterSeq)) + 1;
    if (from > MAX_SEQ) return { events };
    const limit = options.limit;
    let startKey: Record<string, unknown> | undefined;
    let lastSeq = 0;
    do {
      // With a limit, ask for one item more than still wanted: it tells whether the page is cut short.
      const want = limit === undefined ? undefined : limit - events.length + 1;
      const page = await this.ctx.send('read', () =>
        this.ctx.doc.send(
          new QueryCommand({
            TableName: this.ctx.table,
            KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
            ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
            ExpressionAttributeValues: { ':pk': pk(run), ':from': eventSk(from), ':to': LAST_EVENT_SK },
            ConsistentRead: true,
            ExclusiveStartKey: startKey,
            ...(want === undefined ? {} : { Limit: want }),
          }),
        ),
      );
      this.ctx.countRead(page.ScannedCount ?? page.Items?.length);
      for (const item of page.Items ?? []) {
        if (isExpired(item, this.ctx.now())) continue;
        if (limit !== undefined && events.length === limit) return { events, nextAfterSeq: lastSeq };
        events.push(this.decode(run, item));
        lastSeq = item.seq as number;
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return { events };
  }

  async readOne(run: RunRef, seq: number): Promise<unknown | undefined> {
    const out = await this.ctx.send('readOne', () =>
      this.ctx.doc.send(new GetCommand({ TableName: this.ctx.table, Key: { [PK]: pk(run), [SK]: eventSk(seq) }, ConsistentRead: true })),
    );
    if (!out.Item) return undefined;
    this.ctx.countRead(1);
    if (isExpired(out.Item, this.ctx.now())) return undefined;
    return this.decode(run, out.Item);
  }

  /** Raw record for parseEvent; text that is not JSON comes back as a record parseEvent rejects. */
  private decode(run: RunRef, item: Item): unknown {
    if (item.seq === 1 && typeof item[TTL] === 'number') this.remember(run, item[TTL] * 1000);
    try {
      return JSON.parse(item.data as string) as unknown;
    } catch {
      return { seq: item.seq, unparsable: String(item.data).slice(0, 200) };
    }
  }

  private async horizon(run: RunRef, event: RunEvent, hint: number | undefined): Promise<number> {
    if (event.type === 'run_started') {
      this.remember(run, event.expiresAt);
      return event.expiresAt;
    }
    const known = this.horizons.get(runName(run));
    if (known !== undefined) return known;
    // A container that loaded the run from a snapshot knows the horizon from its state: without
    // the hint its first append would read the run's first event for it (a GetItem per cold step).
    if (hint !== undefined) {
      this.remember(run, hint);
      return hint;
    }
    const out = await this.ctx.send('readHorizon', () =>
      this.ctx.doc.send(
        new GetCommand({
          TableName: this.ctx.table,
          Key: { [PK]: pk(run), [SK]: eventSk(1) },
          ProjectionExpression: '#ttl',
          ExpressionAttributeNames: { '#ttl': TTL },
        }),
      ),
    );
    this.ctx.countRead(out.Item ? 1 : 0);
    const ttl = out.Item?.[TTL];
    const horizon = typeof ttl === 'number' ? ttl * 1000 : this.ctx.now() + this.ctx.fallbackRetentionMs;
    this.remember(run, horizon);
    return horizon;
  }

  private remember(run: RunRef, horizonMs: number): void {
    const key = runName(run);
    this.horizons.delete(key);
    if (this.horizons.size >= 1_000) {
      const oldest = this.horizons.keys().next().value;
      if (oldest !== undefined) this.horizons.delete(oldest);
    }
    this.horizons.set(key, horizonMs);
  }
}
