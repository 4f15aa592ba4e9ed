import type { RunEvent } from '../../core/events.js';
import type { InboxItem } from '../../core/inbox.js';
import type { AppendOptions, EventLog, ReadPage } from '../../ports/event-log.js';
import type { Inbox } from '../../ports/inbox.js';
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
import type { Admission } from '../../ports/admission.js';
import type { RunRef } from '../../core/run-ref.js';
import { DynamoAdmission } from './dynamo-admission.js';
import { DynamoContext, type DynamoStats, type DynamoStoreOptions } from './dynamo-context.js';
import { DynamoEventLog } from './dynamo-event-log.js';
import { DynamoInbox } from './dynamo-inbox.js';
import { DynamoRunHeads } from './dynamo-run-heads.js';

export type { DynamoStats, DynamoStoreOptions } from './dynamo-context.js';

/**
 * EventLog + RunHeads + Inbox on one DynamoDB table, the AWS counterpart of MemoryStore (same
 * semantics, same `stats` shape). One instance per cold start: it keeps each run's retention
 * horizon so that appends can stamp the TTL without reading it again.
 */
export class DynamoStore implements EventLog, RunHeads, Inbox, Admission {
  private readonly ctx: DynamoContext;
  private readonly log: DynamoEventLog;
  private readonly heads: DynamoRunHeads;
  private readonly inbox: DynamoInbox;
  private readonly admission: DynamoAdmission;

  constructor(options: DynamoStoreOptions) {
    this.ctx = new DynamoContext(options);
    this.log = new DynamoEventLog(this.ctx);
    this.heads = new DynamoRunHeads(this.ctx);
    this.inbox = new DynamoInbox(this.ctx);
    this.admission = new DynamoAdmission(this.ctx);
  }

  /** Requests sent (retries included) and items read, for tests and metrics. */
  get stats(): DynamoStats {
    return this.ctx.stats;
  }

  get tableName(): string {
    return this.ctx.table;
  }

  // ---- EventLog ----
  append(run: RunRef, event: RunEvent, options?: AppendOptions): Promise<void> {
    return this.log.append(run, event, options);
  }
  read(run: RunRef, options: { afterSeq: number; limit?: number }): Promise<ReadPage> {
    return this.log.read(run, options);
  }
  readOne(run: RunRef, seq: number): Promise<unknown | undefined> {
    return this.log.readOne(run, seq);
  }

  // ---- RunHeads ----
  createHead(head: RunHead): Promise<boolean> {
    return this.heads.createHead(head);
  }
  getHead(run: RunRef): Promise<RunHead | undefined> {
    return this.heads.getHead(run);
  }
  claimLease(run: RunRef, args: { owner: string; now: number; ttlMs: number }): Promise<LeaseGrant> {
    return this.heads.claimLease(run, args);
  }
  renewLease(run: RunRef, args: { owner: string; epoch: number; now: number; ttlMs: number }): Promise<number> {
    return this.heads.renewLease(run, args);
  }
  releaseLease(run: RunRef, args: { owner: string; epoch: number; inboxVersion: number }): Promise<boolean> {
    return this.heads.releaseLease(run, args);
  }
  resetAttempts(run: RunRef, args: { owner: string; epoch: number }): Promise<void> {
    return this.heads.resetAttempts(run, args);
  }
  markLoaded(run: RunRef, args: { owner: string; epoch: number; stalls: number }): Promise<void> {
    return this.heads.markLoaded(run, args);
  }
  projectAndRelease(run: RunRef, projection: HeadProjection, args: ReleaseArgs): Promise<boolean> {
    return this.heads.projectAndRelease(run, projection, args);
  }

  project(run: RunRef, projection: HeadProjection): Promise<boolean> {
    return this.heads.project(run, projection);
  }
  setPark(run: RunRef, park: HeadPark | null, status?: RunStatus): Promise<void> {
    return this.heads.setPark(run, park, status);
  }
  setSnapshot(run: RunRef, pointer: SnapshotPointer): Promise<boolean> {
    return this.heads.setSnapshot(run, pointer);
  }
  markNotified(run: RunRef, seq: number): Promise<void> {
    return this.heads.markNotified(run, seq);
  }
  listRuns(tenant: string, options: ListRunsOptions): Promise<{ runs: RunHead[]; cursor?: string }> {
    return this.heads.listRuns(tenant, options);
  }
  countRuns(tenant: string): Promise<Record<RunStatus, number>> {
    return this.heads.countRuns(tenant);
  }
  listDue(shard: number, now: number, limit: number): Promise<RunHead[]> {
    return this.heads.listDue(shard, now, limit);
  }
  markSwept(run: RunRef, mark: SweptMark, seen: { epoch: number }): Promise<boolean> {
    return this.heads.markSwept(run, mark, seen);
  }

  // ---- Inbox ----
  put(run: RunRef, item: InboxItem): Promise<boolean> {
    return this.inbox.put(run, item);
  }
  list(run: RunRef): Promise<InboxItem[]> {
    return this.inbox.list(run);
  }
  delete(run: RunRef, id: string): Promise<void> {
    return this.inbox.delete(run, id);
  }

  // ---- Admission ----
  admit(run: RunRef, max: number): Promise<boolean> {
    return this.admission.admit(run, max);
  }
  release(run: RunRef): Promise<void> {
    return this.admission.release(run);
  }
  holders(tenant: string): Promise<string[]> {
    return this.admission.holders(tenant);
  }
}
