import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { AgentRegistry } from '../authoring/registry.js';
import type { ApiEnv } from './api-env.js';
import { echoValue } from '../core/echo.js';
import { redactText } from './error-text.js';
import { ErrorSchema } from './schemas.js';
import type { Caller } from './tenant.js';

/**
 * What each agent takes as input, per version: the JSON Schema POST /runs (and the EventBridge
 * trigger, child runs, forks with a new input and follow-up messages) validates `input` against.
 * A per-agent endpoint rather than a `oneOf` in StartRunRequest: the API document stays one static
 * contract for every deployment, and the schema a client reads is exactly the one a run pins
 * (`run_started.inputSchema`, same sha256).
 */

const AgentParamsSchema = z.object({
  name: z
    .string()
    .min(1)
    .max(128)
    .openapi({ param: { name: 'name', in: 'path' }, example: 'support' }),
});

export const AgentSchemaViewSchema = z
  .object({
    agent: z.string(),
    /** The version a run gets when it names none. */
    latest: z.string(),
    versions: z.array(
      z.object({
        version: z.string(),
        input: z
          .object({
            jsonSchema: z.record(z.string(), z.unknown()).openapi({ description: 'JSON Schema (draft 2020-12) of `input`' }),
            sha256: z.string().openapi({ description: 'as pinned in run_started.inputSchema' }),
          })
          .nullable()
          .openapi({ description: 'null: the agent takes any non-empty text, JSON object or array' }),
        instructions: z.enum(['fixed', 'function']).openapi({ description: '`function`: the system prompt is built from the input when a run starts' }),
      }),
    ),
  })
  .openapi('AgentSchema');
export type AgentSchemaView = z.infer<typeof AgentSchemaViewSchema>;

export const agentSchemaRoute = createRoute({
  method: 'get',
  path: '/agents/{name}/schema',
  operationId: 'getAgentSchema',
  summary: 'The input an agent takes, per registered version (JSON Schema, as runs pin it)',
  request: { params: AgentParamsSchema },
  responses: {
    200: { content: { 'application/json': { schema: AgentSchemaViewSchema } }, description: 'the agent' },
    400: { content: { 'application/json': { schema: ErrorSchema } }, description: 'invalid request' },
    401: { content: { 'application/json': { schema: ErrorSchema } }, description: 'no authorized caller' },
    404: { content: { 'application/json': { schema: ErrorSchema } }, description: 'no agent of this name is registered' },
    429: { content: { 'application/json': { schema: ErrorSchema } }, description: 'throttled (the stage): retry after a pause' },
    500: { content: { 'application/json': { schema: ErrorSchema } }, description: 'internal error' },
  },
});

/** The view of one registered agent, or undefined when none has this name. */
export function agentSchemaView(registry: AgentRegistry, name: string): AgentSchemaView | undefined {
  const versions = registry.list().filter((a) => a.name === name);
  const latest = registry.agent(name);
  if (!latest || versions.length === 0) return undefined;
  return {
    agent: name,
    latest: latest.version,
    versions: versions.map((a) => ({
      version: a.version,
      input: a.inputSchema ? { jsonSchema: a.inputSchema.jsonSchema, sha256: a.inputSchema.sha256 } : null,
      instructions: typeof a.system.text === 'function' ? 'function' : 'fixed',
    })),
  };
}

export function registerAgentRoutes(
  app: OpenAPIHono<ApiEnv>,
  service: { agentSchema?(caller: Caller, name: string): Promise<AgentSchemaView | undefined>; redactText?(text: string): string },
): void {
  app.openapi(agentSchemaRoute, async (c) => {
    const { name } = c.req.valid('param');
    const view = service.agentSchema ? await service.agentSchema(c.get('caller'), name) : undefined;
    if (!view) return c.json({ error: { code: 'agent_not_found', message: `no agent ${echoValue(name, redactText(service))} is registered` } }, 404);
    return c.json(view, 200);
  });
}
