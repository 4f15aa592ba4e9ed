import type { ApiErrorBody } from '../../lib/api/errors.js';
import { issuesText } from '../../lib/core/zod-issues.js';
import type { RunSummary, RunView } from '../../lib/api/schemas.js';
import type { StreamPage } from '../../lib/api/stream-read.js';
import type { AttachmentRef } from '../../lib/core/attachments.js';
import type { OperationPage, WorkflowList } from '../../lib/api/workflow-schemas.js';

export const DEFAULT_API = `http://127.0.0.1:${process.env.LOGBOOK_PORT ?? '8787'}`;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody | undefined,
    message: string,
  ) {
    super(message);
  }
}

export interface EventPage {
  runId: string;
  events: Record<string, unknown>[];
  next?: number;
}

/** Signs one request (SigV4 for a deployed stack's API): the headers to add. */
export type RequestSigner = (request: { method: string; url: URL; headers: Record<string, string>; body?: Uint8Array }) => Promise<Record<string, string>>;

const encoder = new TextEncoder();

/** A small client of the Logbook HTTP API, used by the CLI and the local demo. */
export class LogbookClient {
  constructor(
    readonly baseUrl: string = DEFAULT_API,
    private readonly headers: Record<string, string> = {},
    private readonly sign?: RequestSigner,
  ) {}

  /** One request; the response as it came (the caller reads its body). */
  private async send(method: string, path: string, content?: { type: string; body: Uint8Array }): Promise<Response> {
    const url = new URL(path, this.baseUrl);
    const headers: Record<string, string> = { ...this.headers, ...(content ? { 'content-type': content.type } : {}) };
    if (this.sign) Object.assign(headers, await this.sign({ method, url, headers, ...(content ? { body: content.body } : {}) }));
    try {
      return await fetch(url, { method, headers, ...(content ? { body: content.body as Uint8Array<ArrayBuffer> } : {}) });
    } catch (error) {
      throw new ApiError(0, undefined, `cannot reach the Logbook API at ${this.baseUrl} (${(error as Error).message}); is \`npm start\` running?`);
    }
  }

  /** A JSON request, or with `raw` the bytes as they are under their own Content-Type (an upload). */
  private async call<T>(method: string, path: string, body?: unknown, raw?: { bytes: Uint8Array; contentType: string }): Promise<{ status: number; data: T }> {
    const content = raw
      ? { type: raw.contentType, body: raw.bytes }
      : body === undefined
        ? undefined
        : { type: 'application/json', body: encoder.encode(JSON.stringify(body)) };
    const response = await this.send(method, path, content);
    const text = await response.text();
    let data: unknown;
    try {
      data = text ? JSON.parse(text) : undefined;
    } catch {
      data = undefined;
    }
    if (!response.ok) {
      const err = data as ApiErrorBody | undefined;
      const issues = err?.error.issues ? issuesText(err.error.issues) : undefined;
      const message = `${response.status} ${err?.error.code ?? 'error'}: ${err?.error.message ?? text}${issues ? ` (${issues})` : ''}`;
      throw new ApiError(response.status, err, message);
    }
    return { status: response.status, data: data as T };
  }

  /** An agent run (`agent`) or a workflow run (`workflow`): exactly one of the two. */
  async startRun(
    body: {
      input: unknown;
      runId?: string;
      version?: string;
      budgets?: Record<string, number>;
    } & ({ agent: string; workflow?: never } | { workflow: string; agent?: never }),
  ): Promise<{ runId: string; status: string; created: boolean }> {
    return (await this.call<{ runId: string; status: string; created: boolean }>('POST', '/runs', body)).data;
  }

  async listRuns(query: { status?: string; parent?: string; limit?: number; cursor?: string } = {}): Promise<{ runs: RunSummary[]; cursor?: string }> {
    const params = new URLSearchParams();
    if (query.status) params.set('status', query.status);
    if (query.parent) params.set('parent', query.parent);
    if (query.limit) params.set('limit', String(query.limit));
    if (query.cursor) params.set('cursor', query.cursor);
    const qs = params.toString();
    return (await this.call<{ runs: RunSummary[]; cursor?: string }>('GET', `/runs${qs ? `?${qs}` : ''}`)).data;
  }

  async getRun(runId: string): Promise<RunView> {
    return (await this.call<RunView>('GET', `/runs/${encodeURIComponent(runId)}`)).data;
  }

  /** The registered workflows and their versions (GET /workflows). */
  async workflows(): Promise<WorkflowList> {
    return (await this.call<WorkflowList>('GET', '/workflows')).data;
  }

  /** A page of a workflow run's operations (GET /runs/{id}/operations); an agent run is a 409 not_workflow_run. */
  async operations(runId: string, after = 0, limit = 500): Promise<OperationPage> {
    return (await this.call<OperationPage>('GET', `/runs/${encodeURIComponent(runId)}/operations?after=${after}&limit=${limit}`)).data;
  }

  /** Every operation of a workflow run, following pages. */
  async allOperations(runId: string): Promise<OperationPage> {
    let page = await this.operations(runId);
    const operations = [...page.operations];
    while (page.next !== undefined) {
      page = await this.operations(runId, page.next);
      operations.push(...page.operations);
    }
    return { runId: page.runId, workflow: page.workflow, operations };
  }

  /** With waitSeconds (at most 20), a long poll: answers when an event after `after` exists, or empty. */
  async events(runId: string, after = 0, limit = 100, waitSeconds = 0): Promise<EventPage> {
    const wait = waitSeconds > 0 ? `&waitSeconds=${waitSeconds}` : '';
    return (await this.call<EventPage>('GET', `/runs/${encodeURIComponent(runId)}/events?after=${after}&limit=${limit}${wait}`)).data;
  }

  /** The run's stream (events and streamed text) after a cursor; with waitSeconds (at most 20), a long poll. */
  async stream(runId: string, after: string | undefined, limit = 100, waitSeconds = 0): Promise<StreamPage> {
    const query = new URLSearchParams({ limit: String(limit), ...(after ? { after } : {}), ...(waitSeconds > 0 ? { waitSeconds: String(waitSeconds) } : {}) });
    return (await this.call<StreamPage>('GET', `/runs/${encodeURIComponent(runId)}/stream?${query.toString()}`)).data;
  }

  /** Every event of a run, following pages. */
  async allEvents(runId: string, after = 0): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    let cursor: number | undefined = after;
    while (cursor !== undefined) {
      const page: EventPage = await this.events(runId, cursor, 500);
      out.push(...page.events);
      cursor = page.next;
    }
    return out;
  }

  async cancel(runId: string, reason?: string): Promise<{ inboxId: string }> {
    return (await this.call<{ inboxId: string }>('POST', `/runs/${encodeURIComponent(runId)}/cancel`, reason ? { reason } : {})).data;
  }

  async approve(
    runId: string,
    body: { callId: string; decision: 'approve' | 'reject' | 'edit'; args?: unknown; argsHash?: string; comment?: string },
  ): Promise<{ inboxId: string; callId?: string }> {
    return (await this.call<{ inboxId: string; callId?: string }>('POST', `/runs/${encodeURIComponent(runId)}/approve`, body)).data;
  }

  async signal(runId: string, body: { signal: string; payload: unknown }): Promise<{ inboxId: string; callId: string }> {
    return (await this.call<{ inboxId: string; callId: string }>('POST', `/runs/${encodeURIComponent(runId)}/signals`, body)).data;
  }

  async message(runId: string, body: { input: unknown; messageId?: string }): Promise<{ inboxId: string }> {
    return (await this.call<{ inboxId: string }>('POST', `/runs/${encodeURIComponent(runId)}/messages`, body)).data;
  }

  async fork(
    runId: string,
    body: { atSeq: number; runId?: string; input?: unknown; version?: string },
  ): Promise<{ runId: string; status: string; created: boolean; forkedFrom: { runId: string; seq: number } }> {
    return (
      await this.call<{ runId: string; status: string; created: boolean; forkedFrom: { runId: string; seq: number } }>(
        'POST',
        `/runs/${encodeURIComponent(runId)}/fork`,
        body,
      )
    ).data;
  }

  /** Upload an image or document (POST /attachments): the reference a run input or message carries. */
  async upload(bytes: Uint8Array, mediaType: string, name?: string): Promise<{ ref: AttachmentRef }> {
    const query = name === undefined ? '' : `?name=${encodeURIComponent(name)}`;
    return (await this.call<{ ref: AttachmentRef }>('POST', `/attachments${query}`, undefined, { bytes, contentType: mediaType })).data;
  }

  /** A payload the run's log holds by reference, as stored (the caller checks its sha256). */
  async blob(runId: string, sha256: string): Promise<Uint8Array> {
    return this.bytes(`/runs/${encodeURIComponent(runId)}/blobs/${encodeURIComponent(sha256)}`);
  }

  /** An uploaded file of this tenant (an attachment a run refers to), as stored. */
  async attachment(sha256: string): Promise<Uint8Array> {
    return this.bytes(`/attachments/${encodeURIComponent(sha256)}`);
  }

  private async bytes(path: string): Promise<Uint8Array> {
    const response = await this.send('GET', path);
    if (!response.ok) {
      const text = await response.text();
      let err: ApiErrorBody | undefined;
      try {
        err = JSON.parse(text) as ApiErrorBody;
      } catch {
        err = undefined;
      }
      throw new ApiError(response.status, err, `${response.status} ${err?.error.code ?? 'error'}: ${err?.error.message ?? text}`);
    }
    return new Uint8Array(await response.arrayBuffer());
  }

  /** Import a run file into the local stack (`logbook dev`; a deployed API has no such route). */
  async importRuns(file: string): Promise<{ imported: string[]; skipped: { runId: string; reason: string }[] }> {
    return (
      await this.call<{ imported: string[]; skipped: { runId: string; reason: string }[] }>('POST', '/local/import', undefined, {
        bytes: encoder.encode(file),
        contentType: 'application/x-ndjson',
      })
    ).data;
  }

  async resolve(
    runId: string,
    body: { callId: string; outcome: 'succeeded' | 'failed' | 'rerun'; result?: unknown } | { action: 'retry' | 'fail' },
  ): Promise<{ inboxId: string }> {
    return (await this.call<{ inboxId: string }>('POST', `/runs/${encodeURIComponent(runId)}/resolve`, body)).data;
  }
}
