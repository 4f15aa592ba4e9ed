import { Buffer } from 'node:buffer';
import { sha256Hex } from '../../lib/support/hash.js';
import { RUN_STATUSES, type RunStatus } from '../../lib/ports/run-heads.js';
import type { RunSummary } from '../../lib/api/schemas.js';
import { blobReferences, RUN_FILE_FORMAT, RUN_FILE_VERSION, type ExportedRun } from '../../lib/testing/eval/run-file.js';
import { attachmentsOf } from '../../lib/testing/eval/run-transfer.js';
import { fileResolver } from '../../lib/testing/eval/recorded-run.js';
import type { LogbookClient } from './api-client.js';
import type { FlagSpecs } from './args.js';
import { UsageError } from './output.js';

/** Which recorded runs a command takes from the API. */
export interface RunFilter {
  statuses: RunStatus[];
  agent?: string;
  /** The recorded runs' agent version. */
  agentVersion?: string;
  /** Created at or after / before (epoch ms). */
  since?: number;
  until?: number;
  /** These runs only (the other filters still apply). */
  runIds?: string[];
  /** At most this many (newest first). */
  limit?: number;
}

export const FILTER_FLAGS = {
  status: { type: 'string', value: 'S,S' },
  agent: { type: 'string', value: 'NAME' },
  'agent-version': { type: 'string', value: 'V' },
  since: { type: 'string', value: 'TIME' },
  until: { type: 'string', value: 'TIME' },
  run: { type: 'string', value: 'RUN_ID', multiple: true },
  limit: { type: 'string', value: 'N' },
} as const satisfies FlagSpecs;

type FilterValues = {
  status?: string | undefined;
  agent?: string | undefined;
  'agent-version'?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
  run?: string[] | undefined;
  limit?: string | undefined;
};

/** A time flag: an ISO time, or a span ago (`30m`, `24h`, `7d`). */
export function parseTime(text: string, flag: string, now: number): number {
  const ago = /^(\d+)([mhd])$/.exec(text.trim());
  if (ago) return now - Number(ago[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[ago[2] as 'm' | 'h' | 'd'];
  const at = Date.parse(text);
  if (Number.isNaN(at)) throw new UsageError(`--${flag} must be an ISO time or a span ago such as 24h or 7d, got "${text}"`);
  return at;
}

export function parseFilter(values: FilterValues, defaultStatuses: readonly RunStatus[], now = Date.now()): RunFilter {
  const statuses = (values.status ?? defaultStatuses.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = statuses.filter((s) => !(RUN_STATUSES as readonly string[]).includes(s));
  if (statuses.length === 0 || bad.length > 0)
    throw new UsageError(`--status takes a comma-separated list of ${RUN_STATUSES.join(', ')}; got "${values.status}"`);
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) throw new UsageError('--limit must be a positive integer');
  return {
    statuses: [...new Set(statuses)] as RunStatus[],
    ...(values.agent ? { agent: values.agent } : {}),
    ...(values['agent-version'] ? { agentVersion: values['agent-version'] } : {}),
    ...(values.since ? { since: parseTime(values.since, 'since', now) } : {}),
    ...(values.until ? { until: parseTime(values.until, 'until', now) } : {}),
    ...(values.run && values.run.length > 0 ? { runIds: values.run } : {}),
    ...(limit ? { limit } : {}),
  };
}

type Client = Pick<LogbookClient, 'listRuns' | 'getRun' | 'allEvents' | 'blob' | 'attachment'>;

function matches(run: Pick<RunSummary, 'status' | 'agent' | 'createdAt'>, filter: RunFilter): boolean {
  const created = Date.parse(run.createdAt);
  return (
    filter.statuses.includes(run.status) &&
    (filter.agent === undefined || run.agent.name === filter.agent) &&
    (filter.agentVersion === undefined || run.agent.version === filter.agentVersion) &&
    (filter.since === undefined || created >= filter.since) &&
    (filter.until === undefined || created < filter.until)
  );
}

/** The summaries of the runs the filter selects, newest first. */
async function selectRuns(client: Client, filter: RunFilter): Promise<RunSummary[]> {
  if (filter.runIds) {
    const runs = await Promise.all(filter.runIds.map((id) => client.getRun(id)));
    return runs.filter((r) => matches(r, filter)).slice(0, filter.limit);
  }
  const found: RunSummary[] = [];
  for (const status of filter.statuses) {
    let cursor: string | undefined;
    do {
      const page = await client.listRuns({ status, limit: 100, ...(cursor ? { cursor } : {}) });
      found.push(...page.runs.filter((r) => matches(r, filter)));
      // Listings are newest first: past `since`, nothing older can match.
      const oldest = page.runs.at(-1);
      cursor = oldest && filter.since !== undefined && Date.parse(oldest.createdAt) < filter.since ? undefined : page.cursor;
    } while (cursor);
  }
  found.sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || (a.runId < b.runId ? -1 : 1));
  return found.slice(0, filter.limit);
}

const decoder = new TextDecoder();

/**
 * One run as the run file holds it, read through the API: every event, every payload its events
 * hold by reference (GET /runs/{id}/blobs/{sha256}, of the run whose prefix the key names: a fork
 * shares its source's), and every file its input refers to (GET /attachments/{sha256}), each
 * checked against its sha256. What the API serves is what the log holds: redacted.
 */
export async function fetchRun(client: Client, runId: string): Promise<ExportedRun> {
  const events = await client.allEvents(runId);
  const tenant = String(events[0]?.tenant ?? '');
  const blobs = [];
  for (const ref of blobReferences(events)) {
    const owner = /^blobs\/[^/]+\/([^/]+)\//.exec(ref.key)?.[1] ?? runId;
    const bytes = await client.blob(owner, ref.sha256);
    if (sha256Hex(bytes) !== ref.sha256) throw new Error(`run ${runId}: the payload ${ref.key} does not hash to its sha256`);
    blobs.push({ key: ref.key, sha256: ref.sha256, text: decoder.decode(bytes) });
  }
  const attachments = [];
  for (const ref of await attachmentsOf(events, fileResolver({ blobs }))) {
    const bytes = await client.attachment(ref.sha256);
    if (sha256Hex(bytes) !== ref.sha256) throw new Error(`run ${runId}: the attachment ${ref.sha256} does not hash to its sha256`);
    attachments.push({ sha256: ref.sha256, mediaType: ref.mediaType, base64: Buffer.from(bytes).toString('base64') });
  }
  return { format: RUN_FILE_FORMAT, v: RUN_FILE_VERSION, tenant, runId, events, blobs, attachments };
}

/** The runs the filter selects, each fetched whole (fetchRun). */
export async function collectRuns(client: Client, filter: RunFilter, progress?: (done: number, total: number) => void): Promise<ExportedRun[]> {
  const selected = await selectRuns(client, filter);
  const out: ExportedRun[] = [];
  for (const run of selected) {
    out.push(await fetchRun(client, run.runId));
    progress?.(out.length, selected.length);
  }
  return out;
}
