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
    return lambdaHandler(event as unknown as Parameters<ReturnType<typeof handle>>[0], context);
  };
}
