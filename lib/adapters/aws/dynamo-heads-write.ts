import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoContext } from './dynamo-context.js';
import { A, type Item } from './dynamo-head-item.js';
import { HEAD_SK, PK, SK, pk } from './dynamo-keys.js';
import type { RunRef } from '../../core/run-ref.js';

/**
 * A small builder for one conditional UpdateItem on a head: attribute names and values get
 * placeholders, and every write bumps `rev` (see dynamo-sweep.ts).
 */
export class HeadUpdate {
  private readonly sets: string[] = [];
  private readonly removes: string[] = [];
  private readonly adds: string[] = [];
  private readonly names: Record<string, string> = { '#pk': PK, '#rev': A.rev };
  private readonly values: Record<string, unknown> = { ':one': 1 };
  private readonly conditions: string[] = ['attribute_exists(#pk)'];
  private n = 0;

  name(attribute: string): string {
    const placeholder = `#${attribute.replace(/[^A-Za-z0-9_]/g, '_')}`;
    this.names[placeholder] = attribute;
    return placeholder;
  }

  value(value: unknown): string {
    const placeholder = `:v${this.n++}`;
    this.values[placeholder] = value;
    return placeholder;
  }

  /** A named value placeholder used in a raw condition or expression. */
  bind(placeholder: string, value: unknown): this {
    this.values[placeholder] = value;
    return this;
  }

  set(attribute: string, value: unknown): this {
    this.sets.push(`${this.name(attribute)} = ${this.value(value)}`);
    return this;
  }

  /** SET from other attributes (their pre-update values), e.g. ('leaseEpoch', 'epoch + :one'). */
  setExpression(attribute: string, expression: string): this {
    // Bare attribute names in the expression get placeholders; :values, #names and functions
    // (a name followed by its parenthesis, e.g. if_not_exists) stay as written.
    const rhs = expression.replace(/(?<![:#\w])[A-Za-z_]\w*(?![\w(])/g, (word) => this.name(word));
    this.sets.push(`${this.name(attribute)} = ${rhs}`);
    return this;
  }

  setOrRemove(attribute: string, value: unknown): this {
    return value === undefined ? this.remove(attribute) : this.set(attribute, value);
  }

  remove(attribute: string): this {
    this.removes.push(this.name(attribute));
    return this;
  }

  add(attribute: string, amount: number): this {
    this.adds.push(`${this.name(attribute)} ${this.value(amount)}`);
    return this;
  }

  condition(expression: string): this {
    this.conditions.push(`(${expression})`);
    return this;
  }

  command(ctx: DynamoContext, run: RunRef, returnNew: boolean): UpdateCommand {
    const parts = [`ADD #rev :one${this.adds.map((a) => `, ${a}`).join('')}`];
    if (this.sets.length) parts.unshift(`SET ${this.sets.join(', ')}`);
    if (this.removes.length) parts.push(`REMOVE ${this.removes.join(', ')}`);
    return new UpdateCommand({
      TableName: ctx.table,
      Key: { [PK]: pk(run), [SK]: HEAD_SK },
      UpdateExpression: parts.join(' '),
      ConditionExpression: this.conditions.join(' AND '),
      ExpressionAttributeNames: this.names,
      ExpressionAttributeValues: this.values,
      ...(returnNew ? { ReturnValues: 'ALL_NEW' as const } : {}),
    });
  }

  /** Sends it; resolves to the new item when asked for. Throws ConditionFailed on a failed condition. */
  async send(ctx: DynamoContext, run: RunRef, what: string, returnNew = false): Promise<Item | undefined> {
    const out = await ctx.send(what, () => ctx.doc.send(this.command(ctx, run, returnNew)));
    return out.Attributes;
  }
}

/** Strongly consistent read of the head item (undefined when absent). */
export async function getHeadItem(ctx: DynamoContext, run: RunRef): Promise<Item | undefined> {
  const out = await ctx.send('getHead', () =>
    ctx.doc.send(new GetCommand({ TableName: ctx.table, Key: { [PK]: pk(run), [SK]: HEAD_SK }, ConsistentRead: true })),
  );
  ctx.countRead(out.Item ? 1 : 0);
  return out.Item;
}
