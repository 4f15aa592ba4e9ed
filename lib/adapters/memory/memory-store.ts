import { AppendConflictError, ItemTooLargeError, LeaseHeldError, LeaseLostError, RunNotFoundError } from '../../core/errors.js';
import type { RunEvent } from '../../core/events.js';
import type { InboxItem } from '../../core/inbox.js';
import type { EventLog, ReadPage } from '../../ports/event-log.js';
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
import { RUN_STATUSES } from '../../ports/run-heads.js';
import { runName, type RunRef } from '../../core/run-ref.js';
import { sweepEntry } from '../../ports/sweep-index.js';
import { decodeListCursor, encodeListCursor, isAfter } from '../list-cursor.js';

interface RunRecord {
  events: Map<number, unknown>;
  head?: RunHead;
  inbox: Map<string, InboxItem>;
}

const MAX_ITEM_BYTES = 400 * 1024;

/** Deep copy through JSON, as a real store would: no caller ever shares an object with it. */
const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

export interface MemoryStoreStats {
  requests: number;
  itemsRead: number;
}

/**
 * In-memory EventLog + RunHeads + Inbox with the semantics of the DynamoDB adapter: conditional
 * append on (run, seq) with own-write recognition by nonce, leases with epochs, monotonic head
 * projection, inbox with a version counter, and the same sparse sweeper rule.
 */
export class MemoryStore implements EventLog, RunHeads, Inbox {
  private readonly runs = new Map<string, RunRecord>();
  readonly stats: MemoryStoreStats = { requests: 0, itemsRead: 0 };
  /** Page size for `read`, small enough that tests exercise pagination. */
  constructor(private readonly pageSize = 100) {}

  private record(run: RunRef): RunRecord {
    const key = runName(run);
    let rec = this.runs.get(key);
    if (!rec) {
      rec = { events: new Map(), inbox: new Map() };
      this.runs.set(key, rec);
    }
    return rec;
  }

  private requireHead(run: RunRef): RunHead {
    const head = this.runs.get(runName(run))?.head;
    if (!head) throw new RunNotFoundError(run);
    return head;
  }

  // ---- EventLog ----

  async append(run: RunRef, event: RunEvent): Promise<void> {
    this.stats.requests++;
    // DynamoDB's item limit, measured on the JSON form (close to the item's size).
    const size = new TextEncoder().encode(JSON.stringify(event)).byteLength;
    if (size > MAX_ITEM_BYTES) throw new ItemTooLargeError(`event ${event.seq} is ${size} bytes, above DynamoDB's 400 KB item limit`);
    const rec = this.record(run);
    const existing = rec.events.get(event.seq) as RunEvent | undefined;
    if (existing !== undefined) {
      if (existing.by?.nonce === event.by.nonce && existing.by?.epoch === event.by.epoch) return;
      throw new AppendConflictError(run, event.seq);
    }
    rec.events.set(event.seq, copy(event));
  }

  async read(run: RunRef, options: { afterSeq: number; limit?: number }): Promise<ReadPage> {
    const rec = this.runs.get(runName(run));
    if (!rec) {
      this.stats.requests++;
      return { events: [] };
    }
    const seqs = [...rec.events.keys()].filter((s) => s > options.afterSeq).sort((a, b) => a - b);
    const wanted = options.limit === undefined ? seqs : seqs.slice(0, options.limit);
    this.stats.requests += Math.max(1, Math.ceil(wanted.length / this.pageSize));
    this.stats.itemsRead += wanted.length;
    const events = wanted.map((s) => copy(rec.events.get(s)));
    const last = wanted[wanted.length - 1];
    const more = options.limit !== undefined && seqs.length > wanted.length && last !== undefined;
    return more ? { events, nextAfterSeq: last } : { events };
  }

  async readOne(run: RunRef, seq: number): Promise<unknown> {
    this.stats.requests++;
    const value = this.runs.get(runName(run))?.events.get(seq);
    if (value !== undefined) this.stats.itemsRead++;
    return value === undefined ? undefined : copy(value);
  }

  /** Test hook: overwrite a stored event to simulate corruption. */
  corrupt(run: RunRef, seq: number, raw: unknown): void {
    this.record(run).events.set(seq, raw);
  }

  // ---- RunHeads ----

  async createHead(head: RunHead): Promise<boolean> {
    this.stats.requests++;
    const rec = this.record(head);
    if (rec.head) return false;
    rec.head = copy(head);
    return true;
  }

  async getHead(run: RunRef): Promise<RunHead | undefined> {
    this.stats.requests++;
    const head = this.runs.get(runName(run))?.head;
    if (head) this.stats.itemsRead++;
    return head ? copy(head) : undefined;
  }

  async claimLease(run: RunRef, args: { owner: string; now: number; ttlMs: number }): Promise<LeaseGrant> {
    this.stats.requests++;
    const head = this.requireHead(run);
    const lease = head.lease;
    if (lease && lease.until > args.now && lease.owner !== args.owner) {
      throw new LeaseHeldError(run, lease.until);
    }
    const fromReleased = !lease;
    head.epoch += 1;
    head.attempts += 1;
    head.lease = { owner: args.owner, until: args.now + args.ttlMs, epoch: head.epoch };
    delete head.queuedAt;
    return { epoch: head.epoch, until: head.lease.until, attempts: head.attempts, head: copy(head), fromReleased };
  }

  async renewLease(run: RunRef, args: { owner: string; epoch: number; now: number; ttlMs: number }): Promise<number> {
    this.stats.requests++;
    const head = this.requireHead(run);
    const lease = head.lease;
    if (!lease || lease.owner !== args.owner || lease.epoch !== args.epoch) {
      throw new LeaseLostError(run, args.epoch);
    }
    lease.until = args.now + args.ttlMs;
    return lease.until;
  }

  async releaseLease(run: RunRef, args: { owner: string; epoch: number; inboxVersion: number }): Promise<boolean> {
    this.stats.requests++;
    const head = this.requireHead(run);
    const lease = head.lease;
    if (!lease || lease.owner !== args.owner || lease.epoch !== args.epoch) {
      throw new LeaseLostError(run, args.epoch);
    }
    if (head.inboxVersion !== args.inboxVersion) return false;
    applyRelease(head, args.inboxVersion);
    return true;
  }

  async resetAttempts(run: RunRef, args: { owner: string; epoch: number }): Promise<void> {
    this.stats.requests++;
    const head = this.requireHead(run);
    if (head.lease?.owner !== args.owner || head.lease.epoch !== args.epoch) {
      throw new LeaseLostError(run, args.epoch);
    }
    head.attempts = 0;
    delete head.stalls;
  }

  async markLoaded(run: RunRef, args: { owner: string; epoch: number; stalls: number }): Promise<void> {
    this.stats.requests++;
    const head = this.requireHead(run);
    if (head.lease?.owner !== args.owner || head.lease.epoch !== args.epoch) {
      throw new LeaseLostError(run, args.epoch);
    }
    head.attempts = 0;
    head.stalls = args.stalls;
  }

  async project(run: RunRef, projection: HeadProjection): Promise<boolean> {
    this.stats.requests++;
    const head = this.requireHead(run);
    return applyProjection(head, projection);
  }

  async projectAndRelease(run: RunRef, projection: HeadProjection, args: ReleaseArgs): Promise<boolean> {
    const head = this.requireHead(run);
    const lease = head.lease;
    if (!lease || lease.owner !== args.owner || lease.epoch !== args.epoch) {
      this.stats.requests++;
      throw new LeaseLostError(run, args.epoch);
    }
    if (head.inboxVersion !== args.inboxVersion) {
      this.stats.requests++;
      return false; // nothing written, as the one conditional update on DynamoDB
    }
    this.stats.requests++;
    applyProjection(head, projection);
    applyRelease(head, args.inboxVersion);
    if (args.queuedAt !== undefined) head.queuedAt = args.queuedAt;
    return true;
  }

  async setPark(run: RunRef, park: HeadPark | null, status?: RunStatus): Promise<void> {
    this.stats.requests++;
    const head = this.requireHead(run);
    if (park) head.park = copy(park);
    else {
      delete head.park;
      head.attempts = 0;
      delete head.stalls;
    }
    if (status) head.status = status;
  }

  async setSnapshot(run: RunRef, pointer: SnapshotPointer): Promise<boolean> {
    this.stats.requests++;
    const head = this.requireHead(run);
    if (head.snapshot && head.snapshot.seq >= pointer.seq) return false;
    head.snapshot = copy(pointer);
    return true;
  }

  async markNotified(run: RunRef, seq: number): Promise<void> {
    this.stats.requests++;
    const head = this.requireHead(run);
    head.notifiedSeq = Math.max(head.notifiedSeq, seq);
  }

  async listRuns(tenant: string, options: ListRunsOptions): Promise<{ runs: RunHead[]; cursor?: string }> {
    this.stats.requests++;
    const all = [...this.runs.values()]
      .map((r) => r.head)
      .filter((h): h is RunHead => h !== undefined && h.tenant === tenant)
      .filter((h) => options.status === undefined || h.status === options.status)
      .filter((h) => options.parent === undefined || h.parent?.runId === options.parent)
      .sort((a, b) => b.createdAt - a.createdAt || (a.runId < b.runId ? -1 : 1));
    // The same opaque cursor as the DynamoDB store: a position in the caller's list, validated.
    const position = options.cursor === undefined ? undefined : decodeListCursor(options.cursor, options.status, options.parent);
    const rest = position ? all.filter((h) => isAfter(h, position)) : all;
    const page = rest.slice(0, options.limit);
    const last = page.at(-1);
    return rest.length > options.limit && last ? { runs: copy(page), cursor: encodeListCursor(last, options.status, options.parent) } : { runs: copy(page) };
  }

  async countRuns(tenant: string): Promise<Record<RunStatus, number>> {
    this.stats.requests++;
    const counts = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;
    for (const { head } of this.runs.values()) if (head?.tenant === tenant) counts[head.status]++;
    return counts;
  }

  async listDue(shard: number, now: number, limit: number): Promise<RunHead[]> {
    this.stats.requests++;
    const due: { head: RunHead; wakeAt: number }[] = [];
    for (const rec of this.runs.values()) {
      if (!rec.head) continue;
      const entry = sweepEntry(rec.head);
      if (entry && entry.shard === shard && entry.wakeAt <= now) due.push({ head: rec.head, wakeAt: entry.wakeAt });
    }
    due.sort((a, b) => a.wakeAt - b.wakeAt);
    return copy(due.slice(0, limit).map((d) => d.head));
  }

  async markSwept(run: RunRef, mark: SweptMark, seen: { epoch: number }): Promise<boolean> {
    this.stats.requests++;
    const head = this.requireHead(run);
    if (head.epoch !== seen.epoch || head.lastSeq !== mark.seq) return false;
    head.swept = { ...mark };
    return true;
  }

  // ---- Inbox ----

  async put(run: RunRef, item: InboxItem): Promise<boolean> {
    this.stats.requests++;
    const head = this.requireHead(run);
    const rec = this.record(run);
    if (rec.inbox.has(item.id)) return false;
    rec.inbox.set(item.id, copy(item));
    head.inboxVersion += 1;
    return true;
  }

  async list(run: RunRef): Promise<InboxItem[]> {
    this.stats.requests++;
    const rec = this.runs.get(runName(run));
    if (!rec) return [];
    const items = [...rec.inbox.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    this.stats.itemsRead += items.length;
    return copy(items);
  }

  async delete(run: RunRef, id: string): Promise<void> {
    this.stats.requests++;
    this.runs.get(runName(run))?.inbox.delete(id);
  }
}

/** A projection, monotonic on lastSeq; false (nothing changed) for an older one. */
function applyProjection(head: RunHead, projection: HeadProjection): boolean {
  if (head.lastSeq > projection.lastSeq) return false;
  head.status = projection.status;
  head.lastSeq = projection.lastSeq;
  head.usage = copy(projection.usage);
  head.attention = copy(projection.attention);
  if (projection.waits?.length) head.waits = copy(projection.waits);
  else delete head.waits;
  head.expiresAt = projection.expiresAt;
  head.updatedAt = Math.max(head.updatedAt, projection.updatedAt);
  if (projection.outcome) head.outcome = copy(projection.outcome);
  else delete head.outcome;
  if (projection.wakeAt !== undefined) head.wakeAt = projection.wakeAt;
  else delete head.wakeAt;
  return true;
}

/** What a release leaves: no lease, the ingested inbox version, the failure streak over. */
function applyRelease(head: RunHead, inboxVersion: number): void {
  delete head.lease;
  head.ingestedInboxVersion = inboxVersion;
  head.attempts = 0;
  delete head.stalls;
}
