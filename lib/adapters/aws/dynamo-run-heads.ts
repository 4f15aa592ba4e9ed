import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { LeaseHeldError, LeaseLostError, RunNotFoundError } from '../../core/errors.js';
import type {
  HeadPark,
  HeadProjection,
  LeaseGrant,
  ListRunsOptions,
  RunHead,
  RunHeads,
  ReleaseArgs,
  RunStatus,
  SnapshotPointer,
  SweptMark,
} from '../../ports/run-heads.js';
import { type RunRef } from '../../core/run-ref.js';
import { ConditionFailed } from './aws-errors.js';
import type { DynamoContext } from './dynamo-context.js';
import { A, headToItem, itemToHead, type Item } from './dynamo-head-item.js';
import { getHeadItem, HeadUpdate } from './dynamo-heads-write.js';
import { PK, TTL, isExpired, statusPk, ttlSeconds } from './dynamo-keys.js';
import { countRuns, listDue, listRuns } from './dynamo-run-queries.js';
import { repairSweep } from './dynamo-sweep.js';

const LEASE_IS_OURS = '#leaseOwner = :owner AND #leaseEpoch = :epoch';

/**
 * Heads: one item per run, written field by field with single-item conditional UpdateItems (no
 * transactions, so dynalite runs them too). A failed condition is diagnosed with one consistent
 * read (dynalite ignores ReturnValuesOnConditionCheckFailure, so nothing depends on it).
 */
export class DynamoRunHeads implements RunHeads {
  constructor(private readonly ctx: DynamoContext) {}

  async createHead(head: RunHead): Promise<boolean> {
    try {
      await this.ctx.send('createHead', () =>
        this.ctx.doc.send(
          new PutCommand({
            TableName: this.ctx.table,
            Item: headToItem(head),
            ConditionExpression: 'attribute_not_exists(#pk)',
            ExpressionAttributeNames: { '#pk': PK },
          }),
        ),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionFailed) return false;
      throw error;
    }
  }

  async getHead(run: RunRef): Promise<RunHead | undefined> {
    const item = await getHeadItem(this.ctx, run);
    return item && !isExpired(item, this.ctx.now()) ? itemToHead(item) : undefined;
  }

  async claimLease(run: RunRef, args: { owner: string; now: number; ttlMs: number }): Promise<LeaseGrant> {
    for (let round = 0; ; round++) {
      const update = new HeadUpdate()
        .set(A.leaseOwner, args.owner)
        .set(A.leaseUntil, args.now + args.ttlMs)
        .setExpression(A.claimedOver, 'if_not_exists(leaseUntil, :zero)')
        .setExpression(A.leaseEpoch, 'epoch + :one')
        .setExpression('epoch', 'epoch + :one')
        .setExpression('attempts', 'attempts + :one')
        // The tick that brought us here was received: the sweeper's hold for it ends.
        .remove('queuedAt')
        .bind(':owner', args.owner)
        .bind(':now', args.now)
        .bind(':zero', 0)
        .condition('attribute_not_exists(#leaseOwner) OR #leaseUntil <= :now OR #leaseOwner = :owner');
      try {
        const item = (await update.send(this.ctx, run, 'claimLease', true)) as Item;
        await repairSweep(this.ctx, item, 'write');
        const head = itemToHead(item);
        // A retried claim whose first attempt landed finds its own lease: not fromReleased (the safe side).
        return { epoch: head.epoch, until: args.now + args.ttlMs, attempts: head.attempts, head, fromReleased: item[A.claimedOver] === 0 };
      } catch (error) {
        if (!(error instanceof ConditionFailed)) throw error;
        const head = await this.requireHead(run);
        const lease = head.lease;
        // Held by a live other owner; otherwise it was freed in between: try again.
        if ((lease && lease.until > args.now && lease.owner !== args.owner) || round >= 2) {
          throw new LeaseHeldError(run, lease?.until ?? args.now);
        }
      }
    }
  }

  async renewLease(run: RunRef, args: { owner: string; epoch: number; now: number; ttlMs: number }): Promise<number> {
    const until = args.now + args.ttlMs;
    const update = this.ourLease(args.owner, args.epoch).set(A.leaseUntil, until);
    try {
      await update.send(this.ctx, run, 'renewLease');
      return until;
    } catch (error) {
      if (!(error instanceof ConditionFailed)) throw error;
      await this.requireHead(run);
      throw new LeaseLostError(run, args.epoch);
    }
  }

  async releaseLease(run: RunRef, args: { owner: string; epoch: number; inboxVersion: number }): Promise<boolean> {
    const update = this.releaseUpdate(args);
    try {
      const item = (await update.send(this.ctx, run, 'releaseLease', true)) as Item;
      await repairSweep(this.ctx, item, 'write');
      return true;
    } catch (error) {
      if (!(error instanceof ConditionFailed)) throw error;
      return (await this.refusedRelease(run, error, args)) === 'landed';
    }
  }

  /**
   * Why a release (alone or with a projection) was refused: the lease is still ours and something
   * else in the condition failed (`ours`, with the head, for the caller to decide), or an earlier
   * attempt of this same call landed and the reply was lost (`landed`: nobody claimed since, and
   * the head is exactly what our write leaves behind), or the lease is lost (thrown).
   */
  private async refusedRelease(
    run: RunRef,
    error: ConditionFailed,
    args: { owner: string; epoch: number; inboxVersion: number },
    alsoLanded: (head: RunHead) => boolean = () => true,
  ): Promise<'landed' | { ours: RunHead }> {
    const item = await getHeadItem(this.ctx, run);
    if (!item) throw new RunNotFoundError(run);
    const head = itemToHead(item);
    if (head.lease?.owner === args.owner && head.lease.epoch === args.epoch) return { ours: head };
    if (error.afterAmbiguousAttempt && !head.lease && head.epoch === args.epoch && head.ingestedInboxVersion === args.inboxVersion && alsoLanded(head)) {
      await repairSweep(this.ctx, item, 'write');
      return 'landed';
    }
    throw new LeaseLostError(run, args.epoch);
  }

  async resetAttempts(run: RunRef, args: { owner: string; epoch: number }): Promise<void> {
    try {
      await this.ourLease(args.owner, args.epoch).set('attempts', 0).remove('stalls').send(this.ctx, run, 'resetAttempts');
    } catch (error) {
      if (!(error instanceof ConditionFailed)) throw error;
      await this.requireHead(run);
      throw new LeaseLostError(run, args.epoch);
    }
  }

  async markLoaded(run: RunRef, args: { owner: string; epoch: number; stalls: number }): Promise<void> {
    try {
      await this.ourLease(args.owner, args.epoch).set('attempts', 0).set('stalls', args.stalls).send(this.ctx, run, 'markLoaded');
    } catch (error) {
      if (!(error instanceof ConditionFailed)) throw error;
      await this.requireHead(run);
      throw new LeaseLostError(run, args.epoch);
    }
  }

  async project(run: RunRef, projection: HeadProjection): Promise<boolean> {
    // updatedAt only moves forward: a first try sets it (if not older than the stored one); when
    // only that part of the condition fails, the second try leaves it alone.
    for (const setUpdatedAt of [true, false]) {
      const update = projectionUpdate(new HeadUpdate(), run, projection, setUpdatedAt);
      try {
        const item = (await update.send(this.ctx, run, 'project', true)) as Item;
        await repairSweep(this.ctx, item, 'write');
        return true;
      } catch (error) {
        if (!(error instanceof ConditionFailed)) throw error;
        const head = await this.requireHead(run);
        if (head.lastSeq > projection.lastSeq) return false;
      }
    }
    return false;
  }

  async projectAndRelease(run: RunRef, projection: HeadProjection, args: ReleaseArgs): Promise<boolean> {
    for (const setUpdatedAt of [true, false]) {
      const update = projectionUpdate(this.releaseUpdate(args), run, projection, setUpdatedAt);
      if (args.queuedAt !== undefined) update.set('queuedAt', args.queuedAt);
      try {
        const item = (await update.send(this.ctx, run, 'projectAndRelease', true)) as Item;
        await repairSweep(this.ctx, item, 'write');
        return true;
      } catch (error) {
        if (!(error instanceof ConditionFailed)) throw error;
        const refused = await this.refusedRelease(run, error, args, (head) => head.lastSeq >= projection.lastSeq);
        if (refused === 'landed') return true;
        const head = refused.ours;
        // New inbox items arrived: nothing was written; they are ingested before letting go.
        if (head.inboxVersion !== args.inboxVersion) return false;
        // A later projection is already there (it can only be a repair of the same log): release alone.
        if (head.lastSeq > projection.lastSeq) return this.releaseLease(run, args);
        // Otherwise only the updatedAt part failed: the second try leaves it alone.
      }
    }
    return this.releaseLease(run, args);
  }

  async setPark(run: RunRef, park: HeadPark | null, status?: RunStatus): Promise<void> {
    const update = park ? new HeadUpdate().set('park', park) : new HeadUpdate().remove('park').set('attempts', 0).remove('stalls');
    if (status) update.set('status', status).set(A.statusPk, statusPk(run.tenant, status));
    try {
      const item = (await update.send(this.ctx, run, 'setPark', true)) as Item;
      await repairSweep(this.ctx, item, 'write');
    } catch (error) {
      if (error instanceof ConditionFailed) throw new RunNotFoundError(run);
      throw error;
    }
  }

  async setSnapshot(run: RunRef, pointer: SnapshotPointer): Promise<boolean> {
    const update = new HeadUpdate().set('snapshot', pointer);
    const snap = update.name('snapshot');
    update.condition(`attribute_not_exists(${snap}) OR ${snap}.${update.name('seq')} < ${update.value(pointer.seq)}`);
    try {
      await update.send(this.ctx, run, 'setSnapshot');
      return true;
    } catch (error) {
      if (!(error instanceof ConditionFailed)) throw error;
      const head = await this.requireHead(run);
      const s = head.snapshot;
      // Our own earlier attempt landed and the reply was lost.
      return error.afterAmbiguousAttempt && s?.seq === pointer.seq && s.key === pointer.key && s.sha256 === pointer.sha256;
    }
  }

  async markNotified(run: RunRef, seq: number): Promise<void> {
    const update = new HeadUpdate().set('notifiedSeq', seq);
    update.condition(`${update.name('notifiedSeq')} < ${update.value(seq)}`);
    try {
      const item = (await update.send(this.ctx, run, 'markNotified', true)) as Item;
      await repairSweep(this.ctx, item, 'write');
    } catch (error) {
      if (!(error instanceof ConditionFailed)) throw error;
      await this.requireHead(run); // exists: already notified up to seq or beyond
    }
  }

  listRuns(tenant: string, options: ListRunsOptions): Promise<{ runs: RunHead[]; cursor?: string }> {
    return listRuns(this.ctx, tenant, options);
  }

  countRuns(tenant: string): Promise<Record<RunStatus, number>> {
    return countRuns(this.ctx, tenant);
  }

  listDue(shard: number, now: number, limit: number): Promise<RunHead[]> {
    return listDue(this.ctx, shard, now, limit);
  }

  async markSwept(run: RunRef, mark: SweptMark, seen: { epoch: number }): Promise<boolean> {
    const update = new HeadUpdate().set('swept', mark);
    update.condition(`${update.name('epoch')} = ${update.value(seen.epoch)} AND ${update.name('lastSeq')} = ${update.value(mark.seq)}`);
    try {
      const item = (await update.send(this.ctx, run, 'markSwept', true)) as Item;
      // The entry moves later (the hold): 'sweep' mode sets it exact (no head write got in between
      // unless rev moved, and then the next pass repairs it).
      await repairSweep(this.ctx, item, 'sweep');
      return true;
    } catch (error) {
      if (error instanceof ConditionFailed) return false;
      throw error;
    }
  }

  private async requireHead(run: RunRef): Promise<RunHead> {
    const item = await getHeadItem(this.ctx, run);
    if (!item) throw new RunNotFoundError(run);
    return itemToHead(item);
  }

  /** What a release writes: the lease goes, the inbox version is recorded, the failure streak ends. */
  private releaseUpdate(args: { owner: string; epoch: number; inboxVersion: number }): HeadUpdate {
    const update = this.ourLease(args.owner, args.epoch)
      .remove(A.leaseOwner)
      .remove(A.leaseUntil)
      .remove(A.leaseEpoch)
      .set('ingestedInboxVersion', args.inboxVersion)
      // A release is a normal end of a step: the failure streak is over.
      .set('attempts', 0)
      .remove('stalls')
      .condition('#inboxVersion = :inboxVersion')
      .bind(':inboxVersion', args.inboxVersion);
    update.name('inboxVersion');
    return update;
  }

  private ourLease(owner: string, epoch: number): HeadUpdate {
    const update = new HeadUpdate().condition(LEASE_IS_OURS).bind(':owner', owner).bind(':epoch', epoch);
    update.name(A.leaseOwner);
    update.name(A.leaseEpoch);
    return update;
  }
}

/** The fields a projection sets, monotonic on lastSeq (and on updatedAt when asked). */
function projectionUpdate(update: HeadUpdate, run: RunRef, projection: HeadProjection, setUpdatedAt: boolean): HeadUpdate {
  update
    .set('status', projection.status)
    .set(A.statusPk, statusPk(run.tenant, projection.status))
    .set('lastSeq', projection.lastSeq)
    .set('usage', projection.usage)
    .set('attention', projection.attention)
    .setOrRemove('waits', projection.waits?.length ? projection.waits : undefined)
    .set('expiresAt', projection.expiresAt)
    .set(TTL, ttlSeconds(projection.expiresAt))
    .setOrRemove('outcome', projection.outcome)
    .setOrRemove(A.runWakeAt, projection.wakeAt);
  update.condition(`${update.name('lastSeq')} <= ${update.value(projection.lastSeq)}`);
  if (setUpdatedAt) {
    update.set('updatedAt', projection.updatedAt);
    update.condition(`${update.name('updatedAt')} <= ${update.value(projection.updatedAt)}`);
  }
  return update;
}
