import { z } from 'zod';
import { sha256Hex } from '../../support/hash.js';
import { zodIssuesText } from '../../core/zod-issues.js';
import { RUN_ID_PATTERN, TENANT_PATTERN } from '../../core/run-ref.js';
import { RunFileError } from './eval-errors.js';

/**
 * The file `logbook runs export` writes and `runs import`, `logbook eval --file` and runEval read:
 * JSON lines, one run a line, each with its events as the log holds them and every payload they
 * reference. Redaction is intact by construction: the file holds what the log holds (redacted at
 * write, before anything was stored), never a raw value. One schema, versioned by `v`.
 */
export const RUN_FILE_FORMAT = 'logbook.run';
export const RUN_FILE_VERSION = 1;

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a lowercase hex sha256');

export const exportedRunSchema = z
  .object({
    format: z.literal(RUN_FILE_FORMAT),
    v: z.literal(RUN_FILE_VERSION),
    tenant: z.string().regex(TENANT_PATTERN),
    runId: z.string().regex(RUN_ID_PATTERN),
    /** The run's events in seq order, as stored (validated when they are folded, not here). */
    events: z.array(z.record(z.string(), z.unknown())).min(1),
    /** The payloads the events hold by reference (`{kind: "blob", key, sha256}`): the stored JSON text. */
    blobs: z.array(z.object({ key: z.string().min(1), sha256, text: z.string() }).strict()),
    /** Files the run's input or follow-up messages refer to (attachments), as uploaded. */
    attachments: z.array(z.object({ sha256, mediaType: z.string().min(1), base64: z.string() }).strict()),
  })
  .strict();

export type ExportedRun = z.infer<typeof exportedRunSchema>;

const encoder = new TextEncoder();

/**
 * Read a run file (JSON lines; blank lines ignored). Every blob and attachment must hash to its
 * sha256, so a reference in the file resolves to exactly what the log pointed at. A bad line is a
 * RunFileError naming the line and the path of what is wrong.
 */
export function parseRunFile(text: string, source = 'run file'): ExportedRun[] {
  const runs: ExportedRun[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const where = `${source} line ${i + 1}`;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw new RunFileError(`${where}: not JSON`);
    }
    const parsed = exportedRunSchema.safeParse(json);
    if (!parsed.success) {
      const version = (json as { v?: unknown } | null)?.v;
      const hint = typeof version === 'number' && version !== RUN_FILE_VERSION ? ` (a v${version} file; this Logbook reads v${RUN_FILE_VERSION})` : '';
      throw new RunFileError(`${where}: ${zodIssuesText(parsed.error, { max: 3 })}${hint}`);
    }
    const run = parsed.data;
    const first = run.events[0] as { type?: unknown; tenant?: unknown; runId?: unknown };
    if (first.type === 'run_started' && (first.runId !== run.runId || first.tenant !== run.tenant)) {
      throw new RunFileError(`${where}: events.0 is run ${String(first.tenant)}/${String(first.runId)}, the line says ${run.tenant}/${run.runId}`);
    }
    for (const [n, blob] of run.blobs.entries()) {
      if (sha256Hex(encoder.encode(blob.text)) !== blob.sha256) throw new RunFileError(`${where}: blobs.${n} does not hash to its sha256 ${blob.sha256}`);
    }
    for (const [n, file] of run.attachments.entries()) {
      if (sha256Hex(Buffer.from(file.base64, 'base64')) !== file.sha256)
        throw new RunFileError(`${where}: attachments.${n} does not hash to its sha256 ${file.sha256}`);
    }
    runs.push(run);
  });
  return runs;
}

/** Runs as a run file: one JSON line each, newline-terminated. */
export function formatRunFile(runs: readonly ExportedRun[]): string {
  return runs.map((r) => `${JSON.stringify(exportedRunSchema.parse(r))}\n`).join('');
}

/** A `{kind: "blob", key, sha256}` body anywhere in the events: a payload the log holds by reference. */
export interface BlobReference {
  key: string;
  sha256: string;
}

function isBlobBody(value: unknown): value is BlobReference & { kind: 'blob' } {
  const v = value as { kind?: unknown; key?: unknown; sha256?: unknown } | null;
  return typeof v === 'object' && v !== null && v.kind === 'blob' && typeof v.key === 'string' && typeof v.sha256 === 'string';
}

/** Every payload reference in the events (bodies offloaded to the blob store), once each, in order. */
export function blobReferences(events: readonly unknown[]): BlobReference[] {
  const seen = new Map<string, BlobReference>();
  const walk = (value: unknown) => {
    if (typeof value !== 'object' || value === null) return;
    if (isBlobBody(value)) {
      if (!seen.has(value.key)) seen.set(value.key, { key: value.key, sha256: value.sha256 });
      return;
    }
    for (const item of Array.isArray(value) ? value : Object.values(value)) walk(item);
  };
  for (const event of events) walk(event);
  return [...seen.values()];
}

/**
 * The run moved to another tenant (`runs import` into the local stack, whose tenant is `local`):
 * run_started's tenant and every payload key under the old tenant's prefix. Contents and hashes
 * do not change (keys are content-addressed), so every reference still resolves.
 */
export function retenantRun(run: ExportedRun, tenant: string): ExportedRun {
  if (run.tenant === tenant) return run;
  const from = `blobs/${run.tenant}/`;
  const to = `blobs/${tenant}/`;
  const rekey = (key: string) => (key.startsWith(from) ? to + key.slice(from.length) : key);
  const walk = (value: unknown): unknown => {
    if (typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) return value.map(walk);
    if (isBlobBody(value)) return { ...value, key: rekey(value.key) };
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]));
  };
  const events = run.events.map((e, i) => {
    const moved = walk(e) as Record<string, unknown>;
    return i === 0 && moved.type === 'run_started' ? { ...moved, tenant } : moved;
  });
  return { ...run, tenant, events, blobs: run.blobs.map((b) => ({ ...b, key: rekey(b.key) })) };
}
