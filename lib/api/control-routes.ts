import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { ApiEnv, ApiLogger } from './api-env.js';
import { AcceptedCallSchema, ApproveBodySchema, ForkBodySchema, ForkResponseSchema, MessageBodySchema, SignalBodySchema } from './control-schemas.js';
import { ErrorSchema, RunParamsSchema } from './schemas.js';
import type { RunService } from './service.js';

const json = <T>(schema: T, description: string) => ({ content: { 'application/json': { schema } }, description });
const common = {
  400: json(ErrorSchema, 'invalid request: `error.issues` names each bad field by path (including arguments or payloads that do not fit the pinned schema)'),
  401: json(ErrorSchema, 'no authorized caller'),
  404: json(ErrorSchema, 'no such run for this tenant (or no such call)'),
  429: json(
    ErrorSchema,
    'throttled (the stage or the store), or `too_many_runs` for a fork or a message that reopens a completed run while the tenant is at its limit of unfinished runs: retry after `Retry-After`',
  ),
  500: json(ErrorSchema, 'internal error'),
  503: json(ErrorSchema, 'the store is unavailable for now: retry'),
};

export const approveCallRoute = createRoute({
  method: 'post',
  path: '/runs/{runId}/approve',
  operationId: 'approveCall',
  summary: 'Approve, reject or edit a call that awaits approval (the first decision wins)',
  request: { params: RunParamsSchema, body: { ...json(ApproveBodySchema, 'the decision'), required: true } },
  responses: {
    202: json(AcceptedCallSchema, 'the decision is queued for the run'),
    ...common,
    409: json(
      ErrorSchema,
      'run_ended: the run is completed, failed or cancelled; or the call awaits no approval, already has a decision, or asks about other arguments',
    ),
  },
});

export const sendSignalRoute = createRoute({
  method: 'post',
  path: '/runs/{runId}/signals',
  operationId: 'sendSignal',
  summary: 'Complete the call waiting for this signal, with the payload as its result',
  request: { params: RunParamsSchema, body: { ...json(SignalBodySchema, 'the signal'), required: true } },
  responses: {
    202: json(AcceptedCallSchema, 'the signal is queued for the waiting call (callId)'),
    ...common,
    409: json(ErrorSchema, 'run_ended: the run has ended; or no call waits for this signal, the wait timed out, or the call was signalled already'),
  },
});

export const sendMessageRoute = createRoute({
  method: 'post',
  path: '/runs/{runId}/messages',
  operationId: 'sendMessage',
  summary: "A follow-up message: continues a completed run, or waits for an active run's next model call",
  request: { params: RunParamsSchema, body: { ...json(MessageBodySchema, 'the message'), required: true } },
  responses: {
    202: json(AcceptedCallSchema, 'the message is queued for the run'),
    ...common,
    409: json(ErrorSchema, 'the run failed or was cancelled, or a budget is used up'),
  },
});

export const forkRunRoute = createRoute({
  method: 'post',
  path: '/runs/{runId}/fork',
  operationId: 'forkRun',
  summary: 'A new run from a turn boundary of this one (idempotent on runId)',
  request: { params: RunParamsSchema, body: { ...json(ForkBodySchema, 'where to fork, and what to change'), required: true } },
  responses: {
    201: json(ForkResponseSchema, 'the fork was created'),
    200: json(ForkResponseSchema, 'this fork exists already'),
    ...common,
    409: json(ErrorSchema, 'not a turn boundary (names the call), the version does not fit a copied call, or the fork id exists with another request'),
  },
});

/** The control routes: approvals, signals, follow-up messages and forks. */
export function registerControlRoutes(app: OpenAPIHono<ApiEnv>, service: RunService, logger?: ApiLogger): void {
  app.openapi(approveCallRoute, async (c) => {
    const { runId } = c.req.valid('param');
    const caller = c.get('caller');
    const body = c.req.valid('json');
    const { inboxId } = await service.approve(caller, runId, body);
    logger?.info('decision requested', { tenant: caller.tenant, runId, inboxId, callId: body.callId, decision: body.decision });
    return c.json({ runId, accepted: true as const, inboxId, callId: body.callId }, 202);
  });

  app.openapi(sendSignalRoute, async (c) => {
    const { runId } = c.req.valid('param');
    const caller = c.get('caller');
    const body = c.req.valid('json');
    const { inboxId, callId } = await service.signal(caller, runId, body);
    logger?.info('signal sent', { tenant: caller.tenant, runId, inboxId, callId, signal: body.signal });
    return c.json({ runId, accepted: true as const, inboxId, callId }, 202);
  });

  app.openapi(sendMessageRoute, async (c) => {
    const { runId } = c.req.valid('param');
    const caller = c.get('caller');
    const { inboxId } = await service.message(caller, runId, c.req.valid('json'));
    logger?.info('message sent', { tenant: caller.tenant, runId, inboxId });
    return c.json({ runId, accepted: true as const, inboxId }, 202);
  });

  app.openapi(forkRunRoute, async (c) => {
    const { runId } = c.req.valid('param');
    const caller = c.get('caller');
    const out = await service.fork(caller, runId, c.req.valid('json'));
    logger?.info(out.created ? 'run forked' : 'fork exists', { tenant: caller.tenant, runId: out.runId, from: runId, atSeq: out.forkedFrom.seq });
    return c.json(out, out.created ? 201 : 200);
  });
}
