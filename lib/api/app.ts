import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { errorCode } from '../core/errors.js';
import { registerControlRoutes } from './control-routes.js';
import { errorResponse, issuesOf, type ApiErrorBody } from './errors.js';
import { cancelRunRoute, getRunRoute, listRunsRoute, resolveRunRoute, runEventsRoute, startRunRoute } from './routes.js';
import type { RunService } from './service.js';
import type { Caller } from './tenant.js';

export interface ApiLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export interface ApiOptions {
  service: RunService;
  /** Who is calling: from the authorizer on Lambda, the local tenant on the local server. */
  caller(c: Context): Caller | undefined;
  logger?: ApiLogger;
}

export type ApiEnv = { Variables: { caller: Caller } };

/**
 * The HTTP API as one Hono app: the Lambda handler and the local Node server run this same code.
 * Bodies, paths and queries are validated by zod; a bad one is a 400 naming each bad field.
 */
export function createApiApp(options: ApiOptions): OpenAPIHono<ApiEnv> {
  const { service, logger } = options;
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
    if (response.status >= 500) logger?.error('request failed', { ...fields, error });
    else logger?.info('request refused', fields);
    return response;
  });
  app.notFound((c) => c.json<ApiErrorBody>({ error: { code: 'not_found', message: `no route ${c.req.method} ${c.req.path}` } }, 404));

  app.use('/runs', authenticate(options));
  app.use('/runs/*', authenticate(options));
  // The cancel body is optional: an empty body sent as JSON means "no reason", not malformed JSON.
  app.use('/runs/:runId/cancel', async (c, next) => {
    if (c.req.method === 'POST' && (await c.req.raw.clone().text()).trim() === '') {
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
      ...(q.cursor ? { cursor: q.cursor } : {}),
    });
    return c.json(page, 200);
  });

  app.openapi(getRunRoute, async (c) => {
    const { runId } = c.req.valid('param');
    return c.json(await service.get(c.get('caller'), runId), 200);
  });

  app.openapi(runEventsRoute, async (c) => {
    const { runId } = c.req.valid('param');
    const page = await service.events(c.get('caller'), runId, c.req.valid('query'));
    return c.json({ runId, ...page }, 200);
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

  app.doc('/openapi.json', {
    openapi: '3.0.3',
    info: {
      title: 'Logbook',
      version: '0.1.0',
      description:
        'Durable LLM agent runs. The tenant is the authorized caller (IAM account or JWT claim); a run of another tenant answers 404.',
    },
  });
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
