import { foldLog, foldMore, foldMoreInto } from '../core/fold.js';
import { FOLD_VERSION, type RunState } from '../core/state.js';
import type { BlobStore } from '../ports/blob-store.js';
import type { EventLog } from '../ports/event-log.js';
import type { RunHead, RunHeads, SnapshotPointer } from '../ports/run-heads.js';
import { runName, type RunRef } from '../core/run-ref.js';
import type { LoadHint } from '../ports/step-queue.js';
import { sha256Hex } from '../support/hash.js';
import { decodeSnapshot, encodeSnapshot } from './snapshot-codec.js';

export interface LoadStats {
  source: 'cache' | 'snapshot' | 'replay';
  tailEvents: number;
  /** The reads went out beside the claim (a tick's LoadHint), not after it. */
  prefetched?: boolean;
}

type Loaded = { base?: RunState; source: LoadStats['source']; records: unknown[] };

/** Reads started before the claim landed; `load` checks them against the claimed head. */
export type Prefetch = Promise<Loaded>;

/** A prefetch handed to `load`, with whether the claim found the lease released (LeaseGrant.fromReleased). */
export interface Prefetched {
  reads: Prefetch;
  fromReleased: boolean;
}

/**
 * Loads a run's state so that a step's reads do not grow with the run's length: a warm in-process
 * cache (as a warm Lambda container keeps it) or the latest snapshot, then a consistent read of
 * the events after that seq. Snapshots are never required: missing, corrupt or of another fold
 * version means a full replay.
 *
 * The tail read is skipped only when nobody can have appended since the cached state: this
 * container wrote it under lease epoch E and the claim now grants E + 1, so no other worker held
 * the lease in between (every claim bumps the epoch, and only a worker that loaded the log after
 * our last append could append the next seq). Anything else reads.
 */
export class RunLoader {
  private readonly cache = new Map<string, { state: RunState; epoch?: number }>();

  constructor(
    private readonly deps: { log: EventLog; heads: RunHeads; blobs: BlobStore },
    private readonly options: { snapshotEvery?: number; cacheRuns?: number } = {},
  ) {}

  async load(run: RunRef, head: RunHead | undefined, epoch?: number, prefetched?: Prefetched): Promise<{ state: RunState; stats: LoadStats }> {
    const cached = this.cache.get(runName(run));
    if (cached && epoch !== undefined && cached.epoch !== undefined && epoch === cached.epoch + 1 && (head?.lastSeq ?? 0) <= cached.state.lastSeq) {
      return { state: cached.state, stats: { source: 'cache', tailEvents: 0 } };
    }
    const early = cached || !prefetched ? undefined : await this.completed(run, head, prefetched);
    const { base, source, records } =
      early ??
      (cached ? { base: cached.state, source: 'cache' as const, records: await this.readAll(run, cached.state.lastSeq) } : await this.fromSnapshot(run, head));
    // A cached state is shared (the cache keeps it if this fold fails); a decoded snapshot is ours.
    const state = !base ? foldLog(records) : source === 'snapshot' ? foldMoreInto(base, records) : foldMore(base, records);
    // Read under the lease of `epoch`: current until someone else claims.
    this.remember(run, state, epoch);
    return { state, stats: { source, tailEvents: records.length, ...(early ? { prefetched: true } : {}) } };
  }

  /**
   * A cold step's reads, started with its claim from a tick's hint (`load` uses them once the
   * claim lands). None for a run this container holds: a warm step reads less after its claim.
   * The snapshot decodes as soon as it arrives, while the claim is still in flight; that is before
   * the head gate, so the Lambda handler gives a hint only to a tick's first delivery: a run whose
   * load kills its worker is redelivered without one and parks as poisoned before loading. The
   * caller may drop the promise (a busy claim): its failure is kept quiet here.
   */
  prefetch(run: RunRef, hint: LoadHint): Prefetch | undefined {
    if (this.cache.has(runName(run))) return undefined;
    const pointer = hint.snapshot?.foldVersion === FOLD_VERSION ? hint.snapshot : undefined;
    const reads = this.fromPointer(run, pointer);
    reads.catch(() => undefined);
    return reads;
  }

  /**
   * The prefetched reads may miss what was appended between them and the claim. When the claim
   * found the lease released, its last holder had projected its last append onto the head (before
   * or with the release), so the head's lastSeq shows whether anything is missing: at most one more
   * read, from where the reads ended. When the lease had lapsed instead (a holder died, perhaps
   * appending until its lease ended, which the head does not show), that read is always made: after
   * the claim, as a step without a hint reads.
   */
  private async completed(run: RunRef, head: RunHead | undefined, prefetched: Prefetched): Promise<Loaded | undefined> {
    let loaded: Loaded;
    try {
      loaded = await prefetched.reads;
    } catch {
      return undefined; // read again the usual way
    }
    const last = lastSeqOf(loaded);
    if (prefetched.fromReleased && (!head || head.lastSeq <= last)) return loaded;
    return { ...loaded, records: [...loaded.records, ...(await this.readAll(run, last))] };
  }

  /** Keep the state a worker holds after its own appends, for the next step in this container. */
  remember(run: RunRef, state: RunState, epoch?: number): void {
    const key = runName(run);
    this.cache.delete(key);
    const max = this.options.cacheRuns ?? 200;
    if (this.cache.size >= max) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    this.cache.set(key, { state, ...(epoch !== undefined ? { epoch } : {}) });
  }

  forget(run: RunRef): void {
    this.cache.delete(runName(run));
  }

  /** Write a snapshot every `snapshotEvery` events: the object first, then the pointer, forward only. */
  async maybeSnapshot(run: RunRef, state: RunState, head: RunHead | undefined): Promise<SnapshotPointer | undefined> {
    const every = this.options.snapshotEvery ?? 50;
    const last = head?.snapshot?.foldVersion === FOLD_VERSION ? head.snapshot.seq : 0;
    if (state.lastSeq - last < every) return undefined;
    const bytes = encodeSnapshot(state);
    const sha256 = sha256Hex(bytes);
    const key = `snapshots/${run.tenant}/${run.runId}/${String(state.lastSeq).padStart(10, '0')}-${sha256.slice(0, 16)}.json`;
    await this.deps.blobs.put(key, bytes, { contentType: 'application/json' });
    const pointer: SnapshotPointer = { seq: state.lastSeq, key, sha256, foldVersion: FOLD_VERSION };
    return (await this.deps.heads.setSnapshot(run, pointer)) ? pointer : undefined;
  }

  /**
   * The latest snapshot and the events after it, or the whole log. The snapshot and its tail are
   * independent reads (the pointer names the seq the snapshot holds), so both go out at once: a
   * cold step waits for the slower of the two, not for their sum, and the snapshot decodes while
   * the tail query is in flight. A snapshot that does not decode costs a second read, from seq 0.
   */
  private fromSnapshot(run: RunRef, head: RunHead | undefined): Promise<Loaded> {
    return this.fromPointer(run, head?.snapshot?.foldVersion === FOLD_VERSION ? head.snapshot : undefined);
  }

  private async fromPointer(run: RunRef, pointer: SnapshotPointer | undefined): Promise<Loaded> {
    if (!pointer) return { source: 'replay', records: await this.readAll(run, 0) };
    const [base, tail] = await Promise.all([this.readSnapshot(pointer.key, pointer.sha256), this.readAll(run, pointer.seq)]);
    if (!base) return { source: 'replay', records: await this.readAll(run, 0) };
    // The hash matched the pointer, so the snapshot holds exactly seq `pointer.seq`; checked anyway.
    const records = base.lastSeq === pointer.seq ? tail : await this.readAll(run, base.lastSeq);
    return { base, source: 'snapshot', records };
  }

  private async readSnapshot(key: string, sha256: string): Promise<RunState | undefined> {
    try {
      // The store checks the bytes against the pointer's hash (BlobIntegrityError otherwise).
      return decodeSnapshot(await this.deps.blobs.get(key, { sha256 }));
    } catch {
      return undefined; // a snapshot is an optimisation: fall back to a full replay
    }
  }

  private async readAll(run: RunRef, afterSeq: number): Promise<unknown[]> {
    const page = await this.deps.log.read(run, { afterSeq });
    return page.events;
  }
}

/** The last seq a load's reads cover: the tail's last event, else the snapshot's. */
function lastSeqOf(loaded: Loaded): number {
  const seq = (loaded.records.at(-1) as { seq?: unknown } | undefined)?.seq;
  return typeof seq === 'number' ? seq : (loaded.base?.lastSeq ?? 0);
}
