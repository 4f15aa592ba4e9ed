import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { StreamChunkConflictError } from '../../core/errors.js';
import { type RunRef } from '../../core/run-ref.js';
import type { RunStream, StreamChunk, StreamCursor } from '../../ports/run-stream.js';
import { ConditionFailed } from './aws-errors.js';
import { DynamoContext, type DynamoStoreOptions } from './dynamo-context.js';
import type { Item } from './dynamo-head-item.js';
import { LAST_STREAM_SK, PK, SK, TTL, isExpired, pk, streamSk, ttlSeconds } from './dynamo-keys.js';

/**
 * Streamed text on the run's own table, in the run's own partition (sk STR#<callSeq>#<index>):
 * - no second table to provision, grant and configure: the worker already writes this table and
 *   the API already reads it (a separate table would add a resource, two grants and an env var
 *   to every deployment for items that live an hour);
 * - the table's TTL attribute already expires items, and a chunk costs the same write unit here
 *   as anywhere (small items: 1 WCU);
 * - no reader of the run's partition sees them: the event log reads EVT#, the inbox INBOX#, the
 *   head its own key, and the GSIs hold heads only (a chunk carries none of their keys).
 * A chunk is written once, conditionally, so (run, callSeq, index) holds exactly one writer's text.
 */
export class DynamoRunStream implements RunStream {
  private readonly ctx: DynamoContext;

  constructor(options: DynamoStoreOptions) {
    this.ctx = new DynamoContext(options);
  }

  get stats() {
    return this.ctx.stats;
  }

  async publish(run: RunRef, chunk: StreamChunk, options: { expiresAt: number }): Promise<void> {
    const item: Item = {
      [PK]: pk(run),
      [SK]: streamSk(chunk.callSeq, chunk.index),
      callSeq: chunk.callSeq,
      index: chunk.index,
      text: chunk.text,
      at: chunk.at,
      writerEpoch: chunk.writer.epoch,
      writerNonce: chunk.writer.nonce,
      [TTL]: ttlSeconds(options.expiresAt),
    };
    try {
      await this.ctx.send('publishChunk', () =>
        this.ctx.doc.send(
          new PutCommand({ TableName: this.ctx.table, Item: item, ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': PK } }),
        ),
      );
    } catch (error) {
      if (!(error instanceof ConditionFailed)) throw error;
      // Taken. Our own earlier attempt (a retried request whose reply was lost) is success.
      const out = await this.ctx.send('readChunk', () =>
        this.ctx.doc.send(new GetCommand({ TableName: this.ctx.table, Key: { [PK]: pk(run), [SK]: item[SK] }, ConsistentRead: true })),
      );
      if (out.Item?.writerNonce === chunk.writer.nonce && out.Item.writerEpoch === chunk.writer.epoch) return;
      throw new StreamChunkConflictError(run, chunk.callSeq, chunk.index);
    }
  }

  async read(run: RunRef, options: { after?: StreamCursor; limit?: number }): Promise<StreamChunk[]> {
    const chunks: StreamChunk[] = [];
    // The first key after `after` (BETWEEN is inclusive): the next index of the same call.
    const from = options.after ? streamSk(options.after.callSeq, Math.max(0, options.after.index + 1)) : streamSk(0, 0);
    let startKey: Record<string, unknown> | undefined;
    do {
      const want = options.limit === undefined ? undefined : options.limit - chunks.length;
      const page = await this.ctx.send('readChunks', () =>
        this.ctx.doc.send(
          new QueryCommand({
            TableName: this.ctx.table,
            KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
            ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
            ExpressionAttributeValues: { ':pk': pk(run), ':from': from, ':to': LAST_STREAM_SK },
            ConsistentRead: true,
            ExclusiveStartKey: startKey,
            ...(want === undefined ? {} : { Limit: want }),
          }),
        ),
      );
      this.ctx.countRead(page.ScannedCount ?? page.Items?.length);
      for (const item of page.Items ?? []) {
        if (isExpired(item, this.ctx.now())) continue;
        chunks.push(decode(item));
        if (options.limit !== undefined && chunks.length >= options.limit) return chunks;
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return chunks;
  }
}

function decode(item: Item): StreamChunk {
  return {
    callSeq: item.callSeq as number,
    index: item.index as number,
    text: item.text as string,
    at: item.at as number,
    writer: { epoch: item.writerEpoch as number, nonce: item.writerNonce as string },
  };
}
