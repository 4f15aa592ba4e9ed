import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { methodNotAllowed } from 'hono/method-not-allowed';
import { errorCode } from '../core/errors.js';
import { DEFAULT_BODY_LIMITS, attachmentTooLarge, jsonBodyGuard, payloadTooLarge, type BodyLimits } from './body-guard.js';
import { registerAttachmentRoutes } from './attachment-routes.js';
import { MAX_ATTACHMENT_BYTES, MAX_OPEN_STREAMS_PER_TENANT } from '../core/limits.js';
import { ReaderGate } from './reader-gate.js';
import { registerControlRoutes } from './control-routes.js';
import { registerAgentRoutes } from './agent-routes.js';
import { registerWorkflowRoutes } from './workflow-routes.js';
import { registerStreamRoutes } from './stream-routes.js';
import { registerChatRoutes } from './chat-routes.js';
import { errorResponse, issuesOf, type ApiErrorBody } from './errors.js';
import { publicErrors, redactText } from './error-text.js';
import { serveOpenApiDocument } from './openapi.js';
import { cancelRunRoute, getRunRoute, listRunsRoute, resolveRunRoute, runBlobRoute, runCountsRoute, runEventsRoute, startRunRoute } from './routes.js';
import type { RunService } from './service.js';
import type { ApiEnv, ApiLogger } from './api-env.js';
import type { Caller } from './tenant.js';

export type { ApiEnv, ApiLogger } from './api-env.js';

export interface ApiOptions {
  service: RunService;
  /** Who is calling: from the authorizer on Lambda, the local tenant on the local server. */
  caller(c: Context): Caller | undefined;
  logger?: ApiLogger;
  /** Body size and JSON nesting limits (default 1 MiB, 64 levels). */
  limits?: Partial<BodyLimits>;
  /** Serve GET /runs/{id}/stream as Server-Sent Events on `Accept: text/event-stream` (the local server only). */
  sse?: boolean;
  /** Open waiting reads (long polls, SSE) one tenant may hold on this server (default MAX_OPEN_STREAMS_PER_TENANT). */
  maxOpenStreams?: number;
}

/** Version of the API's contract, as the OpenAPI document states it. */
const API_VERSION = '0.1.0';

/**
 * The HTTP API as one Hono app: the Lambda handler and the local Node server run this same code.
 * Bodies, paths and queries are validated by zod; a bad one is a 400 naming each bad field.
 * Nothing a client sends is a 5xx: an unknown path is a 404, a known path with another method a
 * 405 with Allow, a body over the limit a 413, a wrong media type a 415, JSON that is not UTF-8,
 * too deep or carries `__proto__` a 400 (test/integration/api-fuzz.test.ts holds it to that).
 */
export function createApiApp(options: ApiOptions): OpenAPIHono<ApiEnv> {
  const { service, logger } = options;
  const limits: BodyLimits = { ...DEFAULT_BODY_LIMITS, ...options.limits };
  const gate = new ReaderGate(options.maxOpenStreams ?? MAX_OPEN_STREAMS_PER_TENANT);
  const app = new OpenAPIHono<ApiEnv>({
    defaultHook: (result, c) => {
      if (!result.success) {
        const issues = issuesOf(result.error, result.target);
        return c.json<ApiErrorBody>({ error: { code: 'validation_error', message: 'invalid request', issues } }, 400);
      }
      return undefined;
    },
  });

  app.onError((error, c) => {
    const response = errorResponse(c, error);
    const fields = { method: c.req.method, path: c.req.path, status: response.status, code: errorCode(error) };
    // A client that went away (an abandoned upload, a closed tab) is no failure of ours, whatever
    // reading its body threw: said as what it is, never an ERROR.
    if (errorCode(error) === 'client_closed' || c.req.raw.signal.aborted)
      logger?.info('request abandoned by the client', { method: fields.method, path: fields.path, code: 'client_closed' });
    else if (response.status >= 500) logger?.error('request failed', { ...fields, error });
    else logger?.info('request refused', fields);
    return response;
  });
  app.notFound((c) => c.json<ApiErrorBody>({ error: { code: 'not_found', message: `no route ${c.req.method} ${c.req.path}` } }, 404));

  // Outermost of all: no error body leaves with a storage key, a secret or an unbounded echo of the request.
  app.use(publicErrors(redactText(service)));
  // Outermost: a 404 for a path that exists with other methods becomes a 405 naming them.
  app.use(
    methodNotAllowed({
      app,
      onMethodNotAllowed: (c, methods) =>
        c.json<ApiErrorBody>({ error: { code: 'method_not_allowed', message: `${c.req.method} is not allowed here; use ${methods.join(', ')}` } }, 405, {
          Allow: methods.join(', '),
        }),
    }),
  );
  // Before anything reads a body: stops at the limit while streaming, never buffering more. An
  // upload has its own, larger limit (an attachment's), every other request the JSON one.
  const jsonLimit = bodyLimit({ maxSize: limits.maxBodyBytes, onError: (c) => payloadTooLarge(c, limits) });
  const uploadLimit = bodyLimit({ maxSize: MAX_ATTACHMENT_BYTES, onError: (c) => attachmentTooLarge(c) });
  app.use((c, next) => (c.req.method === 'POST' && c.req.path === '/attachments' ? uploadLimit(c, next) : jsonLimit(c, next)));
  app.use('/attachments', authenticate(options));
  app.use('/attachments/*', authenticate(options));
  app.use('/runs', authenticate(options));
  app.use('/runs/*', authenticate(options));
  app.use('/agents/*', authenticate(options));
  app.use('/workflows', authenticate(options));
  app.use('/run-counts', authenticate(options));
  app.use('/runs', jsonBodyGuard(limits));
  app.use('/runs/*', jsonBodyGuard(limits));
  // The cancel body is optional: an empty body sent as JSON means "no reason", not malformed JSON.
  app.use('/runs/:runId/cancel', async (c, next) => {
    if (c.req.method === 'POST' && (await c.req.text()).trim() === '') {
      const headers = new Headers(c.req.raw.headers);
      headers.delete('content-type');
      c.req.raw = new Request(c.req.raw.url, { method: 'POST', headers });
    }
    await next();
  });

  app.openapi(startRunRoute, async (c) => {
    const caller = c.get('caller');
    const out = await service.start(caller, c.req.valid('json'));
    logger?.info(out.created ? 'run created' : 'run exists', { tenant: caller.tenant, runId: out.runId });
    return c.json({ runId: out.runId, status: out.status, created: out.created }, out.created ? 201 : 200);
  });

  app.openapi(listRunsRoute, async (c) => {
    const q = c.req.valid('query');
    const page = await service.list(c.get('caller'), {
      limit: q.limit,
      ...(q.status ? { status: q.status } : {}),
      ...(q.parent ? { parent: q.parent } : {}),
      ...(q.cursor ? { cursor: q.cursor } : {}),
    });
    return c.json(page, 200);
  });

  app.openapi(runCountsRoute, async (c) => c.json(await service.counts(c.get('caller')), 200));

  app.openapi(getRunRoute, async (c) => {
    const { runId } = c.req.valid('param');
    return c.json(await service.get(c.get('caller'), runId), 200);
  });

  app.openapi(runEventsRoute, async (c) => {
    const { runId } = c.req.valid('param');
    const query = c.req.valid('query');
    const leave = query.waitSeconds ? gate.enter(c.get('caller').tenant) : () => undefined;
    try {
      // The request's signal aborts when the client goes away: a long poll then stops reading.
      const page = await service.events(c.get('caller'), runId, query, c.req.raw.signal);
      return c.json({ runId, ...page }, 200);
    } finally {
      leave();
    }
  });

  app.openapi(runBlobRoute, async (c) => {
    const { runId, sha256 } = c.req.valid('param');
    const bytes = await service.blob(c.get('caller'), runId, sha256);
    // The stored bytes, unparsed, so the client can check them against the sha256 it asked for
    // (hono's typed responses only know parsed JSON, hence the cast).
    const headers = { 'content-type': 'application/json', 'x-content-type-options': 'nosniff' };
    return new Response(bytes as Uint8Array<ArrayBuffer>, { status: 200, headers }) as never;
  });

  app.openapi(cancelRunRoute, async (c) => {
    const { runId } = c.req.valid('param');
    const body = (c.req.valid('json') as { reason?: string } | undefined) ?? {};
    const caller = c.get('caller');
    const { inboxId } = await service.cancel(caller, runId, body.reason);
    logger?.info('cancel requested', { tenant: caller.tenant, runId, inboxId });
    return c.json({ runId, accepted: true as const, inboxId }, 202);
  });

  app.openapi(resolveRunRoute, async (c) => {
    const { runId } = c.req.valid('param');
    const caller = c.get('caller');
    const body = c.req.valid('json');
    const { inboxId } = await service.resolve(caller, runId, body);
    logger?.info('resolution requested', {
      tenant: caller.tenant,
      runId,
      inboxId,
      ...('action' in body ? { action: body.action } : { callId: body.callId, outcome: body.outcome }),
    });
    return c.json({ runId, accepted: true as const, inboxId }, 202);
  });

  registerControlRoutes(app, service, logger);
  registerAgentRoutes(app, service);
  registerWorkflowRoutes(app, service);
  registerStreamRoutes(app, service, { gate, ...(options.sse ? { sse: true } : {}) });
  registerChatRoutes(app, service, { gate, ...(options.sse ? { sse: true } : {}) });
  registerAttachmentRoutes(app, service, logger);
  serveOpenApiDocument(app, API_VERSION);
  return app;
}

function authenticate(options: ApiOptions) {
  return async (c: Context<ApiEnv>, next: () => Promise<void>) => {
    const caller = options.caller(c);
    if (!caller) return c.json<ApiErrorBody>({ error: { code: 'unauthorized', message: 'no authorized caller' } }, 401);
    c.set('caller', caller);
    await next();
    return undefined;
  };
}
