import type { DynamoStore } from '../../lib/adapters/aws/dynamo-store.js';
import type { S3BlobStore } from '../../lib/adapters/aws/s3-blob-store.js';
import { MemoryStepQueue } from '../../lib/adapters/memory/memory-step-queue.js';
import type { InboxItem } from '../../lib/core/inbox.js';
import type { RunEvent } from '../../lib/core/events.js';
import type { BlobStore } from '../../lib/ports/blob-store.js';
import type { AppendOptions, EventLog, ReadPage } from '../../lib/ports/event-log.js';
import type { Inbox } from '../../lib/ports/inbox.js';
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
} from '../../lib/ports/run-heads.js';
import type { RunRef } from '../../lib/core/run-ref.js';
import type { WorldStorage } from '../../lib/testing/world.js';

/**
 * Storage for the engine's test worlds on the emulators: the real DynamoStore and S3BlobStore.
 * The harness builds a fresh world per crash point and always uses the same run id, so each world
 * gets its own namespace on one shared table and bucket: the tenant becomes `<ns>.<tenant>` in
 * every key (and back in every head returned), blob keys get a `<ns>/` prefix. The queue is the
 * memory FIFO because the harness's driver takes ticks synchronously; SQS has its own tests.
 */
export function emulatorStorage(store: DynamoStore, blobs: S3BlobStore, namespace: string): WorldStorage & { stepQueue: MemoryStepQueue } {
  const ns = new NamespacedStore(store, namespace);
  const stepQueue = new MemoryStepQueue();
  return { log: ns, heads: ns, inbox: ns, blobs: new PrefixedBlobs(blobs, namespace), queue: stepQueue, stepQueue };
}

class PrefixedBlobs implements BlobStore {
  constructor(
    private readonly blobs: BlobStore,
    private readonly prefix: string,
  ) {}
  put(key: string, bytes: Uint8Array, options?: { contentType?: string }): Promise<void> {
    return this.blobs.put(`${this.prefix}/${key}`, bytes, options);
  }
  get(key: string, options?: { sha256?: string }): Promise<Uint8Array> {
    return this.blobs.get(`${this.prefix}/${key}`, options);
  }
}

class NamespacedStore implements EventLog, RunHeads, Inbox {
  constructor(
    private readonly store: DynamoStore,
    private readonly ns: string,
  ) {}

  private in(run: RunRef): RunRef {
    return { tenant: `${this.ns}.${run.tenant}`, runId: run.runId };
  }
  private out(head: RunHead): RunHead {
    return { ...head, tenant: head.tenant.slice(this.ns.length + 1) };
  }
  private mine(head: RunHead): boolean {
    return head.tenant.startsWith(`${this.ns}.`);
  }

  append(run: RunRef, event: RunEvent, options?: AppendOptions): Promise<void> {
    return this.store.append(this.in(run), event, options);
  }
  read(run: RunRef, options: { afterSeq: number; limit?: number }): Promise<ReadPage> {
    return this.store.read(this.in(run), options);
  }
  readOne(run: RunRef, seq: number): Promise<unknown> {
    return this.store.readOne(this.in(run), seq);
  }
  createHead(head: RunHead): Promise<boolean> {
    return this.store.createHead({ ...head, tenant: `${this.ns}.${head.tenant}` });
  }
  async getHead(run: RunRef): Promise<RunHead | undefined> {
    const head = await this.store.getHead(this.in(run));
    return head && this.out(head);
  }
  async claimLease(run: RunRef, args: { owner: string; now: number; ttlMs: number }): Promise<LeaseGrant> {
    const grant = await this.store.claimLease(this.in(run), args);
    return { ...grant, head: this.out(grant.head) };
  }
  renewLease(run: RunRef, args: { owner: string; epoch: number; now: number; ttlMs: number }): Promise<number> {
    return this.store.renewLease(this.in(run), args);
  }
  releaseLease(run: RunRef, args: { owner: string; epoch: number; inboxVersion: number }): Promise<boolean> {
    return this.store.releaseLease(this.in(run), args);
  }
  resetAttempts(run: RunRef, args: { owner: string; epoch: number }): Promise<void> {
    return this.store.resetAttempts(this.in(run), args);
  }
  markLoaded(run: RunRef, args: { owner: string; epoch: number; stalls: number }): Promise<void> {
    return this.store.markLoaded(this.in(run), args);
  }
  project(run: RunRef, projection: HeadProjection): Promise<boolean> {
    return this.store.project(this.in(run), projection);
  }
  projectAndRelease(run: RunRef, projection: HeadProjection, args: ReleaseArgs): Promise<boolean> {
    return this.store.projectAndRelease(this.in(run), projection, args);
  }
  setPark(run: RunRef, park: HeadPark | null, status?: RunStatus): Promise<void> {
    return this.store.setPark(this.in(run), park, status);
  }
  setSnapshot(run: RunRef, pointer: SnapshotPointer): Promise<boolean> {
    return this.store.setSnapshot(this.in(run), pointer);
  }
  markNotified(run: RunRef, seq: number): Promise<void> {
    return this.store.markNotified(this.in(run), seq);
  }
  async listRuns(tenant: string, options: ListRunsOptions): Promise<{ runs: RunHead[]; cursor?: string }> {
    const page = await this.store.listRuns(`${this.ns}.${tenant}`, options);
    return { ...page, runs: page.runs.map((h) => this.out(h)) };
  }
  countRuns(tenant: string): Promise<Record<RunStatus, number>> {
    return this.store.countRuns(`${this.ns}.${tenant}`);
  }
  async listDue(shard: number, now: number, limit: number): Promise<RunHead[]> {
    const due = await this.store.listDue(shard, now, 1_000);
    return due.filter((h) => this.mine(h)).slice(0, limit).map((h) => this.out(h));
  }
  markSwept(run: RunRef, mark: SweptMark, seen: { epoch: number }): Promise<boolean> {
    return this.store.markSwept(this.in(run), mark, seen);
  }
  put(run: RunRef, item: InboxItem): Promise<boolean> {
    return this.store.put(this.in(run), item);
  }
  list(run: RunRef): Promise<InboxItem[]> {
    return this.store.list(this.in(run));
  }
  delete(run: RunRef, id: string): Promise<void> {
    return this.store.delete(this.in(run), id);
  }
}
