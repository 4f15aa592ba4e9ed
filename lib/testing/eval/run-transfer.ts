import { Buffer } from 'node:buffer';
import { attachmentRefs, type AttachmentRef } from '../../core/attachments.js';
import type { Body } from '../../core/body.js';
import { errorMessage } from '../../core/errors.js';
import { parseEvent, type EventOf } from '../../core/events.js';
import { foldLog } from '../../core/fold.js';
import type { JsonValue } from '../../core/json.js';
import { attachmentKey } from '../../engine/attachments.js';
import { DEFAULT_ENGINE_CONFIG, type EngineConfig } from '../../engine/engine.js';
import { projectHead } from '../../engine/head-projection.js';
import { initialHead } from '../../engine/start-run.js';
import type { BlobStore } from '../../ports/blob-store.js';
import type { EventLog } from '../../ports/event-log.js';
import type { RunHeads } from '../../ports/run-heads.js';
import type { RunRef } from '../../core/run-ref.js';
import { fileResolver } from './recorded-run.js';
import { blobReferences, retenantRun, RUN_FILE_FORMAT, RUN_FILE_VERSION, type ExportedRun } from './run-file.js';

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** The storage a run is exported from or imported into: a test world's, the local stack's. */
export interface RunStorage {
  log: EventLog;
  heads: RunHeads;
  blobs: BlobStore;
}

/**
 * The files a run's input and follow-up messages refer to (attachment references), found in the
 * events after resolving offloaded bodies with `resolve`.
 */
export async function attachmentsOf(events: readonly unknown[], resolve: (body: Body) => Promise<JsonValue>): Promise<AttachmentRef[]> {
  const refs = new Map<string, AttachmentRef>();
  for (const raw of events) {
    const event = parseEvent(raw);
    const body = event.type === 'run_started' || event.type === 'user_message' ? event.input : undefined;
    if (body) for (const ref of attachmentRefs(await resolve(body))) refs.set(ref.sha256, ref);
  }
  return [...refs.values()];
}

/** Every event of a run's log, all pages, in seq order (raw, as stored). */
export async function readWholeLog(log: EventLog, run: RunRef): Promise<Record<string, unknown>[]> {
  const events: Record<string, unknown>[] = [];
  for (let after = 0; ;) {
    const page = await log.read(run, { afterSeq: after, limit: 500 });
    events.push(...(page.events as Record<string, unknown>[]));
    if (page.nextAfterSeq === undefined) return events;
    after = page.nextAfterSeq;
  }
}

/** Runs of a world (or any storage) in the run file's shape: events, referenced payloads and files. */
export async function exportRuns(storage: RunStorage, runs: readonly RunRef[]): Promise<ExportedRun[]> {
  const out: ExportedRun[] = [];
  for (const run of runs) {
    const events = await readWholeLog(storage.log, run);
    const blobs = [];
    for (const ref of blobReferences(events)) {
      blobs.push({ key: ref.key, sha256: ref.sha256, text: decoder.decode(await storage.blobs.get(ref.key, { sha256: ref.sha256 })) });
    }
    const attachments = [];
    for (const ref of await attachmentsOf(events, fileResolver({ blobs }))) {
      const bytes = await storage.blobs.get(attachmentKey(run.tenant, ref.sha256), { sha256: ref.sha256 });
      attachments.push({ sha256: ref.sha256, mediaType: ref.mediaType, base64: Buffer.from(bytes).toString('base64') });
    }
    out.push({ format: RUN_FILE_FORMAT, v: RUN_FILE_VERSION, tenant: run.tenant, runId: run.runId, events, blobs, attachments });
  }
  return out;
}

export interface ImportOptions {
  /** Import under this tenant instead of the file's (the local stack's is `local`). */
  tenant?: string;
  /** The import's time: the heads' retention counts from it. Default Date.now(). */
  now?: number;
  config?: Pick<EngineConfig, 'retentionCompletedMs' | 'retentionFailedMs'>;
}

export interface ImportResult {
  imported: string[];
  /** Runs left out, and why: already there, not finished (importing would resume it), unreadable. */
  skipped: { runId: string; reason: string }[];
}

/**
 * Write exported runs into storage: their payloads and files first, then each event with its seq
 * (conditional appends: a run already there is skipped, never overwritten), then the head as the
 * folded log projects it, with no outcome notice owed. Only finished or parked runs are imported:
 * a running one would be resumed by the stack it lands in, and its tools would run there.
 */
export async function importRuns(storage: RunStorage, runs: readonly ExportedRun[], options: ImportOptions = {}): Promise<ImportResult> {
  const result: ImportResult = { imported: [], skipped: [] };
  const now = options.now ?? Date.now();
  const config = { ...DEFAULT_ENGINE_CONFIG, ...options.config };
  for (const original of runs) {
    const run = options.tenant ? retenantRun(original, options.tenant) : original;
    const ref: RunRef = { tenant: run.tenant, runId: run.runId };
    let events;
    try {
      events = run.events.map(parseEvent);
    } catch (error) {
      result.skipped.push({ runId: run.runId, reason: `unreadable: ${errorMessage(error)}` });
      continue;
    }
    const state = foldLog(events);
    if (state.status === 'running') {
      result.skipped.push({ runId: run.runId, reason: 'not finished: importing it would resume it here' });
      continue;
    }
    if (await storage.heads.getHead(ref)) {
      result.skipped.push({ runId: run.runId, reason: 'a run with this id exists here' });
      continue;
    }
    for (const blob of run.blobs) await storage.blobs.put(blob.key, encoder.encode(blob.text), { contentType: 'application/json' });
    for (const file of run.attachments) {
      await storage.blobs.put(attachmentKey(run.tenant, file.sha256), new Uint8Array(Buffer.from(file.base64, 'base64')), { contentType: file.mediaType });
    }
    const started = events[0] as EventOf<'run_started'>;
    for (const event of events) await storage.log.append(ref, event, { horizon: started.expiresAt });
    const projection = projectHead(state, now, config);
    await storage.heads.createHead({ ...initialHead(started, now), ...projection, notifiedSeq: state.lastSeq });
    result.imported.push(run.runId);
  }
  return result;
}
