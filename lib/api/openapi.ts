import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Env } from 'hono';

/**
 * How a caller authenticates. A deployment uses one of the two (the `Logbook` construct picks IAM
 * unless it is given a JWT issuer), and API Gateway checks it before the request reaches the app;
 * the document lists both as alternatives. The local stack has no authorizer (tenant `local`).
 */
const SECURITY_SCHEMES = {
  sigv4: {
    // The form AWS documents for IAM-authorized API Gateway APIs (x-amazon-apigateway-authtype).
    type: 'apiKey',
    name: 'Authorization',
    in: 'header',
    'x-amazon-apigateway-authtype': 'awsSigv4',
    description: 'IAM authorization: sign each request with AWS Signature Version 4 (service `execute-api`). ' + "The tenant is the caller's AWS account id.",
  },
  jwt: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      "API Gateway JWT authorizer with the deployment's issuer and audience. The tenant is the claim named by " + 'LOGBOOK_TENANT_CLAIM (default `sub`).',
  },
} as const;

/** Serve the OpenAPI 3.1 document of `app`'s routes at /openapi.json. */
export function serveOpenApiDocument<E extends Env>(app: OpenAPIHono<E>, version: string): void {
  for (const [name, scheme] of Object.entries(SECURITY_SCHEMES)) app.openAPIRegistry.registerComponent('securitySchemes', name, scheme);
  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: 'Logbook',
      version,
      description:
        'Durable LLM agent runs. The tenant is the authorized caller (IAM account or JWT claim); a run of another tenant answers 404. ' +
        'Errors are `{error: {code, message, issues?}}`.',
      license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
    },
    // Relative: the API is wherever this document is served from (the stage URL, or 127.0.0.1 locally).
    servers: [{ url: '/', description: 'the host serving this document' }],
    security: Object.keys(SECURITY_SCHEMES).map((name) => ({ [name]: [] })),
  });
}
