import type { ResolveBody, RunSummary, RunView, StartRunBody } from './schemas.js';
import type { ControlService } from './control-service.js';
import type { Caller } from './tenant.js';

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
export interface RunService extends ControlService {
  start(caller: Caller, body: StartRunBody): Promise<StartRunOutcome>;
  list(caller: Caller, query: { status?: RunView['status']; limit: number; cursor?: string }): Promise<{ runs: RunSummary[]; cursor?: string }>;
  get(caller: Caller, runId: string): Promise<RunView>;
  events(caller: Caller, runId: string, query: { after: number; limit: number }): Promise<{ events: Record<string, unknown>[]; next?: number }>;
  cancel(caller: Caller, runId: string, reason?: string): Promise<{ inboxId: string }>;
  resolve(caller: Caller, runId: string, body: ResolveBody): Promise<{ inboxId: string }>;
}
