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
  /** What the run runs (absent from an older API: an agent). */
  kind?: 'agent' | 'workflow';
  agent: { name: string; version: string };
  /** For a workflow run (defineWorkflow): the workflow and the version it pinned. */
  workflow?: { name: string; version: string };
  /** For a child run: the parent run and the call (`op-<n>` for a workflow's) that started it. */
  parent?: { runId: string; callId: string };
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

/** One operation of a workflow run, as GET /runs/{id}/operations gives it (lib/api/workflow-schemas.ts). */
export interface Operation {
  op: number;
  callId: string;
  kind: 'step' | 'sleep' | 'signal' | 'child' | 'approval' | 'now' | 'random' | 'uuid';
  name: string;
  status: 'started' | 'retrying' | 'succeeded' | 'failed';
  seq: number;
  attempt: number;
  policy?: string;
  startedAt?: string;
  endedAt?: string;
  deadline?: string;
  retryAt?: string;
  waitsFor?: { kind: 'timer' | 'signal' | 'child' | 'approval'; signal?: string; argsHash?: string };
  child?: { runId: string; kind: 'agent' | 'workflow'; name: string; version: string };
  source?: string;
  sentBy?: string;
  result?: unknown;
  error?: { code: string; message: string };
}

export interface OperationPage {
  runId: string;
  workflow: { name: string; version: string };
  operations: Operation[];
  next?: number;
}

/** The definition a run runs, as one label: `name@version`, and whether it is a workflow. */
export function definitionOf(run: Pick<RunSummary, 'kind' | 'agent' | 'workflow'>): { kind: 'agent' | 'workflow'; label: string } {
  const d = run.workflow ?? run.agent;
  return { kind: run.kind === 'workflow' || run.workflow ? 'workflow' : 'agent', label: `${d.name}@${d.version}` };
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
