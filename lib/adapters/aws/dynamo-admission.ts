import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Admission } from '../../ports/admission.js';
import type { RunRef } from '../../core/run-ref.js';
import { ConditionFailed } from './aws-errors.js';
import type { DynamoContext } from './dynamo-context.js';
import { ADMISSION_SK, PK, SK, admissionPk } from './dynamo-keys.js';

/**
 * The admission set of a tenant: one item (ADMISSION#<tenant>, SLOTS) holding a string set of the
 * run ids that hold a slot. Admit is one conditional UpdateItem (ADD the id when the set is
 * smaller than the limit or holds the id already); release is one UpdateItem (DELETE the id).
 * Limits stay far below the 400 KB item size (config caps them at 1,000 ids of <= 80 bytes).
 */
export class DynamoAdmission implements Admission {
  constructor(private readonly ctx: DynamoContext) {}

  async admit(run: RunRef, max: number): Promise<boolean> {
    try {
      await this.ctx.send('admit', () =>
        this.ctx.doc.send(
          new UpdateCommand({
            TableName: this.ctx.table,
            Key: { [PK]: admissionPk(run.tenant), [SK]: ADMISSION_SK },
            UpdateExpression: 'ADD #runs :id',
            ConditionExpression: 'attribute_not_exists(#runs) OR size(#runs) < :max OR contains(#runs, :runId)',
            ExpressionAttributeNames: { '#runs': 'runs' },
            ExpressionAttributeValues: { ':id': new Set([run.runId]), ':max': max, ':runId': run.runId },
          }),
        ),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionFailed) return false;
      throw error;
    }
  }

  async release(run: RunRef): Promise<void> {
    try {
      await this.ctx.send('releaseSlot', () =>
        this.ctx.doc.send(
          new UpdateCommand({
            TableName: this.ctx.table,
            Key: { [PK]: admissionPk(run.tenant), [SK]: ADMISSION_SK },
            UpdateExpression: 'DELETE #runs :id',
            // No item: nothing to free (and no empty item is created for a tenant without limits).
            ConditionExpression: 'attribute_exists(#pk)',
            ExpressionAttributeNames: { '#runs': 'runs', '#pk': PK },
            ExpressionAttributeValues: { ':id': new Set([run.runId]) },
          }),
        ),
      );
    } catch (error) {
      if (!(error instanceof ConditionFailed)) throw error;
    }
  }

  async holders(tenant: string): Promise<string[]> {
    const out = await this.ctx.send('admissionHolders', () =>
      this.ctx.doc.send(new GetCommand({ TableName: this.ctx.table, Key: { [PK]: admissionPk(tenant), [SK]: ADMISSION_SK }, ConsistentRead: true })),
    );
    const runs = out.Item?.runs as Set<string> | undefined;
    return [...(runs ?? [])].sort();
  }
}
