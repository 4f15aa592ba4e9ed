import type { StreamPage } from './stream-feed.js';
import type { ApiIssue, EventPage, Operation, OperationPage, RunCounts, RunSummary, RunView } from './types.js';

/** A refusal from the API, with its stable code and the path of each bad field. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues: ApiIssue[] = [],
  ) {
    super(message);
  }
}

/**
 * Every request the page makes goes to the API on its own origin: the local stack's API, or the
 * `logbook inspect` proxy that signs it for the deployed one. The custom header marks it as the
 * inspector's own request; a cross-site page cannot send it without a preflight nobody answers.
 */
async function request(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('accept', 'application/json');
  headers.set('x-logbook-inspector', '1');
  let response: Response;
  try {
    response = await fetch(path, { ...init, headers, credentials: 'same-origin' });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw new ApiError(0, 'unreachable', `the API did not answer (${(error as Error).message})`);
  }
  if (response.ok) return response;
  const text = await response.text();
  let body: { error?: { code?: string; message?: string; issues?: ApiIssue[] } } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // Not JSON (a proxy or gateway error page): say the status only, never render the text.
  }
  throw new ApiError(response.status, body.error?.code ?? 'http_error', body.error?.message ?? `HTTP ${response.status}`, body.error?.issues ?? []);
}

async function json<T>(path: string, init?: RequestInit): Promise<T> {
  return (await (await request(path, init)).json()) as T;
}

const runPath = (runId: string) => `/runs/${encodeURIComponent(runId)}`;

export function listRuns(query: { status?: string; limit?: number; cursor?: string }): Promise<{ runs: RunSummary[]; cursor?: string }> {
  const params = new URLSearchParams();
  if (query.status) params.set('status', query.status);
  if (query.limit) params.set('limit', String(query.limit));
  if (query.cursor) params.set('cursor', query.cursor);
  const qs = params.toString();
  return json(`/runs${qs ? `?${qs}` : ''}`);
}

/** Exact counts per status (every status the API has, and their total). */
export function runCounts(): Promise<RunCounts> {
  return json('/run-counts');
}

export function getRun(runId: string): Promise<RunView> {
  return json(runPath(runId));
}

/** A workflow run's operations, one page (an agent run has none: 409). */
export function operations(runId: string, after = 0, limit = 500): Promise<OperationPage> {
  return json(`${runPath(runId)}/operations?after=${after}&limit=${limit}`);
}

/** Every operation of a workflow run, page by page. */
export async function allOperations(runId: string): Promise<Operation[]> {
  const out: Operation[] = [];
  let after = 0;
  for (;;) {
    const page = await operations(runId, after);
    out.push(...page.operations);
    if (page.next === undefined) return out;
    after = page.next;
  }
}

/** With waitSeconds, a long poll: answers when an event after `after` exists, or empty. */
export function events(runId: string, after: number, options: { waitSeconds?: number; limit?: number; signal?: AbortSignal } = {}): Promise<EventPage> {
  const params = new URLSearchParams({ after: String(after), limit: String(options.limit ?? 500) });
  if (options.waitSeconds) params.set('waitSeconds', String(options.waitSeconds));
  return json(`${runPath(runId)}/events?${params.toString()}`, options.signal ? { signal: options.signal } : {});
}

/**
 * The run stream (log events and the streamed text of model calls still running), from after
 * `after` (an opaque cursor); with waitSeconds, a long poll.
 */
export function stream(runId: string, query: { after?: string; waitSeconds: number; limit: number }, options: { signal?: AbortSignal } = {}): Promise<StreamPage> {
  const params = new URLSearchParams({ limit: String(query.limit) });
  if (query.after !== undefined) params.set('after', query.after);
  if (query.waitSeconds) params.set('waitSeconds', String(query.waitSeconds));
  return json(`${runPath(runId)}/stream?${params.toString()}`, options.signal ? { signal: options.signal } : {});
}

/** The stored bytes of an offloaded payload; the caller checks their sha256. */
export async function blob(runId: string, sha256: string): Promise<ArrayBuffer> {
  return (await request(`${runPath(runId)}/blobs/${encodeURIComponent(sha256)}`)).arrayBuffer();
}

/** The bytes of an upload of the caller's tenant (a run input's or message's attachment); the caller checks their sha256. */
export async function attachment(sha256: string): Promise<ArrayBuffer> {
  return (await request(`/attachments/${encodeURIComponent(sha256)}`)).arrayBuffer();
}

export type ResolveBody = { callId: string; outcome: 'succeeded' | 'failed' | 'rerun'; result?: unknown } | { action: 'retry' | 'fail' };

export function resolve(runId: string, body: ResolveBody): Promise<{ inboxId: string }> {
  return json(`${runPath(runId)}/resolve`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

export function cancel(runId: string, reason?: string): Promise<{ inboxId: string }> {
  return json(`${runPath(runId)}/cancel`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(reason ? { reason } : {}),
  });
}

const post = <T>(path: string, body: unknown): Promise<T> =>
  json(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

export interface Accepted {
  inboxId: string;
  callId?: string;
}

export type ApproveBody = { callId: string; decision: 'approve' | 'reject' | 'edit'; args?: Record<string, unknown>; argsHash?: string; comment?: string };

export function approve(runId: string, body: ApproveBody): Promise<Accepted> {
  return post(`${runPath(runId)}/approve`, body);
}

export function signal(runId: string, body: { signal: string; payload: unknown }): Promise<Accepted> {
  return post(`${runPath(runId)}/signals`, body);
}

/** `messageId` makes a repeat (a double click, a retry after a lost answer) one delivery. */
export function message(runId: string, body: { input: unknown; messageId: string }): Promise<Accepted> {
  return post(`${runPath(runId)}/messages`, body);
}

/** `runId` (the fork's) makes a repeat the same fork (200 instead of 201), never a second one. */
export function fork(runId: string, body: { atSeq: number; runId: string; input?: unknown }): Promise<{ runId: string; created: boolean; status: string }> {
  return post(`${runPath(runId)}/fork`, body);
}

/** A message for people: the API's message and each bad field. */
export function errorText(error: unknown): string {
  if (error instanceof ApiError) {
    const issues = error.issues.map((i) => `${i.path}: ${i.message}`).join('; ');
    return `${error.status ? `${error.status} ` : ''}${error.code}: ${error.message}${issues ? ` (${issues})` : ''}`;
  }
  return error instanceof Error ? error.message : String(error);
}
