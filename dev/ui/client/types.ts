/**
 * The HTTP API's JSON as the inspector reads it. The page knows Logbook only through the API (the
 * same routes, tenant scoping and validation as every client), so these mirror the wire shapes.
 */
export type RunStatus = 'running' | 'waiting' | 'awaiting_approval' | 'parked' | 'completed' | 'failed' | 'cancelled';
/**
 * Every status the API has (test/unit/ui/run-statuses.test.ts holds this to its RunStatus schema):
 * a status missing here was a run missing from the page's counts, filters and banner.
 */
export const RUN_STATUSES: readonly RunStatus[] = ['running', 'waiting', 'awaiting_approval', 'parked', 'completed', 'failed', 'cancelled'];
/** Statuses in which a run waits for a person: the runs page's banner counts them. */
export const NEEDS_A_PERSON: readonly RunStatus[] = ['parked', 'awaiting_approval'];
export const TERMINAL: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

export interface Usage {
  steps: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export interface RunSummary {
  runId: string;
  status: RunStatus;
  agent: { name: string; version: string };
  createdAt: string;
  updatedAt: string;
  lastSeq: number;
  usage: Usage;
  summary?: string;
}

export interface Attention {
  seq: number;
  reason: string;
  callId?: string;
  detail: string;
  rerunNotBefore?: string;
}

/** Something the run waits on from outside (GET /runs/{id} `waiting`). */
export interface Wait {
  callId: string;
  tool: string;
  kind: 'approval' | 'signal' | 'timer' | 'child';
  seq: number;
  signal?: string;
  childRunId?: string;
  childStatus?: string;
  until?: string;
  argsHash?: string;
  args?: unknown;
}

export interface RunCounts {
  counts: Record<RunStatus, number>;
  total: number;
}

export interface RunView extends RunSummary {
  pinned?: {
    model: string;
    prompt: { version: string; sha256: string };
    tools: { name: string; version: string; policy: string; schemaHash: string; approval?: string; wait?: string }[];
  };
  waiting?: Wait[];
  forkedFrom?: { runId: string; seq: number };
  budgets?: Record<string, number>;
  result?: unknown;
  failure?: { code: string; message: string };
  attention: Attention[];
  /** A cancelled run's calls with no known outcome (to check by hand). */
  unresolved?: string[];
  park?: { reason: string; detail: string };
}

export interface InlineBody {
  kind: 'inline';
  value: unknown;
}
export interface BlobBody {
  kind: 'blob';
  key: string;
  sha256: string;
  size: number;
  summary: string;
}
export type Body = InlineBody | BlobBody;

/** One event of the log: `seq`, `type`, `at` and the fields of its type. */
export type LogEvent = { seq: number; type: string; at: number } & Record<string, unknown>;

export interface EventPage {
  runId: string;
  events: LogEvent[];
  next?: number;
}

export interface ApiIssue {
  path: string;
  message: string;
}

export function isBody(value: unknown): value is Body {
  if (!value || typeof value !== 'object') return false;
  const kind = (value as { kind?: unknown }).kind;
  return kind === 'inline' || (kind === 'blob' && typeof (value as { sha256?: unknown }).sha256 === 'string');
}
