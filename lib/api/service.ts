import type { ResolveBody, RunCounts, RunSummary, RunView, StartRunBody } from './schemas.js';
import type { ControlService } from './control-service.js';
import type { AttachmentService } from './attachment-service.js';
import type { Caller } from './tenant.js';
import type { AgentSchemaView } from './agent-routes.js';
import type { StreamPage } from './stream-read.js';
import type { ChatService } from './chat-read.js';
import type { WorkflowService } from './workflow-routes.js';

export interface StartRunOutcome {
  runId: string;
  created: boolean;
  status: RunView['status'];
}

/**
 * What the HTTP API needs from the engine, one method per route. Every method is scoped by the
 * caller's tenant: a run of another tenant is indistinguishable from a missing one
 * (RunNotFoundError). Errors are Logbook errors; the app maps them to status codes.
 */
export interface RunService extends ControlService, AttachmentService, ChatService, WorkflowService {
  start(caller: Caller, body: StartRunBody): Promise<StartRunOutcome>;
  list(
    caller: Caller,
    query: { status?: RunView['status']; parent?: string; limit: number; cursor?: string },
  ): Promise<{ runs: RunSummary[]; cursor?: string }>;
  /** Exact counts of the caller's runs per status (GET /run-counts). */
  counts(caller: Caller): Promise<RunCounts>;
  get(caller: Caller, runId: string): Promise<RunView>;
  /**
   * Events after `after`. With `waitSeconds` > 0 and none there yet, polls the log until one lands,
   * the wait runs out (an empty page), the run is finished, or `signal` aborts (the client left).
   */
  events(
    caller: Caller,
    runId: string,
    query: { after: number; limit: number; waitSeconds?: number },
    signal?: AbortSignal,
  ): Promise<{ events: Record<string, unknown>[]; next?: number }>;
  /**
   * The run's events and its open model call's streamed text after the cursor `after`
   * (stream-merge.ts); with `waitSeconds` > 0 and nothing new, waits like `events`.
   */
  stream(caller: Caller, runId: string, query: { after?: string; limit: number; waitSeconds?: number }, signal?: AbortSignal): Promise<StreamPage>;
  /** The bytes of a payload the run's log holds by reference; BlobNotFoundError when absent. */
  blob(caller: Caller, runId: string, sha256: string): Promise<Uint8Array>;
  cancel(caller: Caller, runId: string, reason?: string): Promise<{ inboxId: string }>;
  resolve(caller: Caller, runId: string, body: ResolveBody): Promise<{ inboxId: string }>;
  /**
   * The application's redaction (defineAgents' `redaction`), for what error answers repeat: a
   * client is never told more than the log would hold. Absent: the built-in rules.
   */
  redactText?(text: string): string;
  /** The input each registered version of an agent takes (GET /agents/{name}/schema); undefined: no such agent. */
  agentSchema?(caller: Caller, name: string): Promise<AgentSchemaView | undefined>;
}
