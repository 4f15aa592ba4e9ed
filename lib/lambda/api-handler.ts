import type { Context as HonoContext } from 'hono';
import { handle } from 'hono/aws-lambda';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { createApiApp } from '../api/app.js';
import { engineRunService } from '../api/engine-service.js';
import { callerFromAuthorizer, type AuthorizerContext } from '../api/tenant.js';
import { safeFields } from './telemetry.js';
import type { Runtime } from './wiring.js';

type LambdaBindings = { event?: { requestContext?: { authorizer?: AuthorizerContext } } };

/** The HTTP API (API Gateway HTTP API, payload v2): the shared Hono app behind Lambda. */
export function apiHandlerFor(getRuntime: () => Promise<Runtime>) {
  let lambdaHandler: ReturnType<typeof handle> | undefined;
  return async (event: APIGatewayProxyEventV2, context: Context) => {
    if (!lambdaHandler) {
      const runtime = await getRuntime();
      const { logger } = runtime;
      const app = createApiApp({
        service: engineRunService(runtime.engine),
        caller: (c: HonoContext) =>
          callerFromAuthorizer((c.env as LambdaBindings | undefined)?.event?.requestContext?.authorizer, {
            claim: runtime.env.LOGBOOK_TENANT_CLAIM,
          }),
        logger: {
          info: (m, f) => logger.info(m, safeFields(f)),
          warn: (m, f) => logger.warn(m, safeFields(f)),
          error: (m, f) => logger.error(m, safeFields(f)),
        },
      });
      lambdaHandler = handle(app);
    }
    const result = (await lambdaHandler(event as unknown as Parameters<ReturnType<typeof handle>>[0], context)) as AdapterResult;
    return asJsonError(result);
  };
}

type AdapterResult = { statusCode: number; headers?: Record<string, string>; body: string; isBase64Encoded?: boolean };

/**
 * The app answers every error as JSON with a code. Only Hono's Lambda adapter answers in plain
 * text, when it cannot even build a Request from the event (a GET with a body, a header value
 * fetch refuses): give that the same shape as every other refusal.
 */
function asJsonError(result: AdapterResult): AdapterResult {
  const type = Object.entries(result.headers ?? {}).find(([k]) => k.toLowerCase() === 'content-type')?.[1] ?? '';
  if (result.statusCode < 400 || type.includes('json')) return result;
  const code = result.statusCode === 400 ? 'invalid_request' : 'internal_error';
  const message = result.statusCode === 400 ? 'the request could not be read' : 'internal error';
  return {
    statusCode: result.statusCode,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ error: { code, message } }),
    isBase64Encoded: false,
  };
}
