import { RunNotFoundError, ValidationError } from '../core/errors.js';
import { parseEvent, type EventOf, type RunEvent } from '../core/events.js';
import type { JsonValue } from '../core/json.js';
import type { EngineDeps } from '../engine/engine.js';
import { requestCancel, requestResolution, requestRunAction } from '../engine/requests.js';
import { blobKey } from '../engine/payload-codec.js';
import { startRun } from '../engine/start-run.js';
import { TERMINAL_STATUSES, type RunHead } from '../ports/run-heads.js';
import { type RunRef } from '../core/run-ref.js';
import { EVENTS_POLL_MS, waitForEvents } from './long-poll.js';
import { engineControlService, withApprovalArgs } from './control-service.js';
import { eventView, runSummary, runView, withChildren, withOutput } from './run-views.js';
import type { RunService } from './service.js';
import type { RunView } from './schemas.js';
import { agentSchemaView } from './agent-routes.js';
import { streamPage } from './stream-read.js';
import { chatSseText, openChat } from './chat-read.js';
import { engineAttachmentService } from './attachment-service.js';
import { operationsPage, workflowList } from './workflow-views.js';

async function readEvent(deps: EngineDeps, run: RunRef, seq: number): Promise<RunEvent | undefined> {
  const raw = await deps.log.readOne(run, seq);
  if (raw === undefined) return undefined;
  try {
    return parseEvent(raw);
  } catch {
    return undefined;
  }
}

export interface RunServiceOptions {
  /** How often a long poll reads the log while it waits (default EVENTS_POLL_MS). */
  eventsPollMs?: number;
  /** How soon a waiting stream request reads again (default STREAM_POLL_MS); it backs off from there. */
  streamPollMs?: number;
  /** The longest wait between two reads of a long poll or stream that find nothing (default POLL_MAX_MS). */
  pollMaxMs?: number;
}

/** The API's RunService over the engine: every call scoped by the caller's tenant. */
export function engineRunService(deps: EngineDeps, options: RunServiceOptions = {}): RunService {
  const requireHead = async (run: RunRef): Promise<RunHead> => {
    const head = await deps.heads.getHead(run);
    if (!head) throw new RunNotFoundError(run);
    return head;
  };
  return {
    ...engineControlService(deps),
    ...engineAttachmentService(deps),
    async start(caller, body) {
      const out = await startRun(deps, {
        tenant: caller.tenant,
        ...(body.workflow !== undefined ? { workflow: body.workflow } : { agent: body.agent ?? '' }),
        input: body.input as JsonValue,
        ...(body.runId ? { runId: body.runId } : {}),
        ...(body.version ? { version: body.version } : {}),
        ...(body.budgets ? { budgets: body.budgets } : {}),
      }).catch((error: unknown) => {
        // Name fields as the API does: `body.agent`, not `agent`.
        if (error instanceof ValidationError) {
          throw new ValidationError(
            error.message,
            error.issues.map((i) => ({ path: `body.${i.path}`, message: i.message })),
          );
        }
        throw error;
      });
      return { runId: out.runId, created: out.created, status: out.status as RunView['status'] };
    },
    async list(caller, query) {
      const page = await deps.heads
        .listRuns(caller.tenant, {
          limit: query.limit,
          ...(query.status ? { status: query.status } : {}),
          ...(query.parent ? { parent: query.parent } : {}),
          ...(query.cursor ? { cursor: query.cursor } : {}),
        })
        .catch((error: unknown) => {
          // The store names the option (`cursor`); the API names the request part (`query.cursor`).
          if (error instanceof ValidationError) {
            throw new ValidationError(
              error.message,
              error.issues.map((i) => ({ path: `query.${i.path}`, message: i.message })),
            );
          }
          throw error;
        });
      return { runs: page.runs.map((h) => runSummary(h, deps.registry.workflow(h.agent.name) !== undefined)), ...(page.cursor ? { cursor: page.cursor } : {}) };
    },
    async counts(caller) {
      const counts = await deps.heads.countRuns(caller.tenant);
      return { counts, total: Object.values(counts).reduce((a, b) => a + b, 0) };
    },
    async get(caller, runId) {
      const run = { tenant: caller.tenant, runId };
      const head = await requireHead(run);
      const started = (await readEvent(deps, run, 1)) as EventOf<'run_started'> | undefined;
      const outcomeSeq = head.outcome && head.outcome.status !== 'parked' && head.outcome.status !== 'awaiting_approval' ? head.outcome.seq : undefined;
      const terminal = outcomeSeq !== undefined ? await readEvent(deps, run, outcomeSeq) : undefined;
      const view = runView(head, started?.type === 'run_started' ? started : undefined, terminal);
      return withApprovalArgs(deps, run, await withChildren(deps, run, await withOutput(deps, view, terminal)));
    },
    async events(caller, runId, query, signal) {
      const run = { tenant: caller.tenant, runId };
      const head = await requireHead(run);
      const page = await waitForEvents(deps, run, {
        after: query.after,
        limit: query.limit,
        // A finished run gets no more events: nothing to wait for.
        waitMs: TERMINAL_STATUSES.has(head.status) ? 0 : (query.waitSeconds ?? 0) * 1000,
        pollMs: options.eventsPollMs ?? EVENTS_POLL_MS,
        ...(options.pollMaxMs !== undefined ? { maxPollMs: options.pollMaxMs } : {}),
        ...(signal ? { signal } : {}),
      });
      return { events: page.events.map(eventView), ...(page.nextAfterSeq !== undefined ? { next: page.nextAfterSeq } : {}) };
    },
    async stream(caller, runId, query, signal) {
      const run = { tenant: caller.tenant, runId };
      return streamPage(deps, run, query, {
        ...(options.streamPollMs ? { pollMs: options.streamPollMs } : {}),
        ...(options.pollMaxMs !== undefined ? { maxPollMs: options.pollMaxMs } : {}),
        ...(signal ? { signal } : {}),
      });
    },
    async chat(caller, runId, request, chatOptions) {
      const chatDeps = { ...deps, resolve: (body: Parameters<typeof deps.codec.resolve>[0]) => deps.codec.resolve(body) };
      const session = await openChat(chatDeps, { tenant: caller.tenant, runId }, request);
      if (session.kind === 'none') return undefined;
      return chatSseText(chatDeps, session, { ...chatOptions, ...(options.streamPollMs ? { pollMs: options.streamPollMs } : {}) });
    },
    async blob(caller, runId, sha256) {
      const run = { tenant: caller.tenant, runId };
      await requireHead(run);
      // The payload codec's key: the caller's tenant and run are part of it, so no other
      // tenant's blob can be named.
      return deps.blobs.get(blobKey(run, sha256));
    },
    async cancel(caller, runId, reason) {
      return requestCancel(deps, { tenant: caller.tenant, runId }, caller.principal, reason);
    },
    redactText: (text) => deps.codec.redactText(text),
    async agentSchema(_caller, name) {
      return agentSchemaView(deps.registry, name);
    },
    async workflows() {
      return workflowList(deps.registry);
    },
    async operations(caller, runId, query) {
      return operationsPage(deps, { tenant: caller.tenant, runId }, query);
    },
    async resolve(caller, runId, body) {
      const run = { tenant: caller.tenant, runId };
      if ('action' in body) return requestRunAction(deps, run, body.action, caller.principal);
      return requestResolution(
        deps,
        run,
        { callId: body.callId, outcome: body.outcome, ...(body.result !== undefined ? { result: body.result as JsonValue } : {}) },
        caller.principal,
      );
    },
  };
}
