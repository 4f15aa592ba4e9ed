import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { ApiEnv } from './api-env.js';
import { ErrorSchema, RunParamsSchema } from './schemas.js';
import { OperationPageSchema, OperationsQuerySchema, WorkflowListSchema, type OperationPage, type WorkflowList } from './workflow-schemas.js';
import type { Caller } from './tenant.js';

/**
 * The workflow routes: what workflows a deployment runs (and the input each version takes), and a
 * workflow run's operations. A workflow run is started, signalled, approved, resolved, cancelled
 * and read by the same routes as an agent run (POST /runs with `workflow`, /signals, /approve,
 * /resolve with callId `op-<n>`, /cancel, GET /runs/{id}).
 */

const json = <T>(schema: T, description: string) => ({ content: { 'application/json': { schema } }, description });
const common = {
  400: json(ErrorSchema, 'invalid request: `error.issues` names each bad field by path'),
  401: json(ErrorSchema, 'no authorized caller'),
  429: json(ErrorSchema, 'throttled (the stage or the store): retry after a pause'),
  500: json(ErrorSchema, 'internal error'),
  503: json(ErrorSchema, 'the store is unavailable for now: retry'),
};

export const listWorkflowsRoute = createRoute({
  method: 'get',
  path: '/workflows',
  operationId: 'listWorkflows',
  summary: 'The registered workflows, each version with the JSON Schema of the input it takes (as runs pin it)',
  responses: { 200: json(WorkflowListSchema, 'every registered workflow'), ...common },
});

export const runOperationsRoute = createRoute({
  method: 'get',
  path: '/runs/{runId}/operations',
  operationId: 'listRunOperations',
  summary: "A workflow run's operations in order: number, kind, name, status, times, waits, child runs, results and errors",
  request: { params: RunParamsSchema, query: OperationsQuerySchema },
  responses: {
    200: json(OperationPageSchema, 'operations numbered after `after`'),
    ...common,
    404: json(ErrorSchema, 'no such run for this tenant'),
    409: json(ErrorSchema, 'not_workflow_run: the run runs an agent (its calls are in GET /runs/{id}/events)'),
  },
});

export interface WorkflowService {
  /** GET /workflows; absent: none registered. */
  workflows?(caller: Caller): Promise<WorkflowList>;
  /** GET /runs/{id}/operations. */
  operations?(caller: Caller, runId: string, query: { after: number; limit: number }): Promise<OperationPage>;
}

export function registerWorkflowRoutes(app: OpenAPIHono<ApiEnv>, service: WorkflowService): void {
  app.openapi(listWorkflowsRoute, async (c) => c.json(service.workflows ? await service.workflows(c.get('caller')) : { workflows: [] }, 200));

  app.openapi(runOperationsRoute, async (c) => {
    const { runId } = c.req.valid('param');
    const query = c.req.valid('query');
    if (!service.operations) return c.json({ error: { code: 'not_found', message: 'this server lists no operations' } }, 404);
    return c.json(await service.operations(c.get('caller'), runId, query), 200);
  });
}
