import { createRoute } from '@hono/zod-openapi';
import {
  AcceptedSchema,
  BlobContentSchema,
  BlobParamsSchema,
  CancelBodySchema,
  ErrorSchema,
  EventPageSchema,
  EventsQuerySchema,
  ListQuerySchema,
  ResolveBodySchema,
  RunCountsSchema,
  RunListSchema,
  RunParamsSchema,
  RunViewSchema,
  StartRunBodySchema,
  StartRunResponseSchema,
} from './schemas.js';

const json = <T>(schema: T, description: string) => ({ content: { 'application/json': { schema } }, description });
const errors = {
  400: json(ErrorSchema, 'invalid request: `error.issues` names each bad field by path'),
  401: json(ErrorSchema, 'no authorized caller'),
  404: json(ErrorSchema, 'no such run for this tenant'),
  429: json(ErrorSchema, 'throttled (the stage or the store): retry after a pause'),
  500: json(ErrorSchema, 'internal error'),
  503: json(ErrorSchema, 'the store is unavailable for now: retry'),
};
/** What any route may answer besides its own outcomes. */
const always = { 400: errors[400], 401: errors[401], 429: errors[429], 500: errors[500], 503: errors[503] };

export const startRunRoute = createRoute({
  method: 'post',
  path: '/runs',
  operationId: 'startRun',
  summary: 'Start a run (idempotent on runId)',
  request: { body: { ...json(StartRunBodySchema, 'the run to start'), required: true } },
  responses: {
    201: json(StartRunResponseSchema, 'the run was created'),
    200: json(StartRunResponseSchema, 'a run with this id and the same request already exists'),
    ...always,
    409: json(ErrorSchema, 'the run id exists with a different request'),
  },
});

export const listRunsRoute = createRoute({
  method: 'get',
  path: '/runs',
  operationId: 'listRuns',
  summary: "The caller's runs, newest first (with `parent`: that run's child runs)",
  request: { query: ListQuerySchema },
  responses: { 200: json(RunListSchema, 'a page of runs'), ...always },
});

/**
 * Not `/runs/counts`: that path is also `GET /runs/{runId}` for a run named "counts" (a valid id),
 * which it would shadow.
 */
export const runCountsRoute = createRoute({
  method: 'get',
  path: '/run-counts',
  operationId: 'countRuns',
  summary: "How many of the caller's runs are in each status: exact counts (each is what `GET /runs?status=` pages through)",
  responses: { 200: json(RunCountsSchema, 'a count for every status, and their total'), ...always },
});

export const getRunRoute = createRoute({
  method: 'get',
  path: '/runs/{runId}',
  operationId: 'getRun',
  summary: 'Status, pinned versions, budgets, usage, result or failure, open attention',
  request: { params: RunParamsSchema },
  responses: { 200: json(RunViewSchema, 'the run'), ...always, 404: errors[404] },
});

export const runEventsRoute = createRoute({
  method: 'get',
  path: '/runs/{runId}/events',
  operationId: 'listRunEvents',
  summary: 'The run log, paginated; large bodies appear by reference',
  request: { params: RunParamsSchema, query: EventsQuerySchema },
  responses: {
    200: json(EventPageSchema, 'events after `after`'),
    ...always,
    404: errors[404],
    429: json(ErrorSchema, 'throttled, or (`too_many_streams`, with Retry-After) the tenant already holds its maximum of open long polls and streams'),
  },
});

export const cancelRunRoute = createRoute({
  method: 'post',
  path: '/runs/{runId}/cancel',
  operationId: 'cancelRun',
  summary: 'Ask the run to stop: no new calls, abortable calls aborted',
  request: { params: RunParamsSchema, body: { ...json(CancelBodySchema, 'optional reason'), required: false } },
  responses: {
    202: json(AcceptedSchema, 'the cancel is queued for the run'),
    ...always,
    404: errors[404],
    409: json(ErrorSchema, 'the run is already finished'),
  },
});

export const resolveRunRoute = createRoute({
  method: 'post',
  path: '/runs/{runId}/resolve',
  operationId: 'resolveRun',
  summary: 'Answer an open attention: a call outcome, or retry/fail for a run-level park',
  request: { params: RunParamsSchema, body: { ...json(ResolveBodySchema, 'the resolution'), required: true } },
  responses: {
    202: json(AcceptedSchema, 'the resolution is queued for the run'),
    ...always,
    404: errors[404],
    409: json(ErrorSchema, 'no open attention on that call, or rerun before the call deadline'),
  },
});

export const runBlobRoute = createRoute({
  method: 'get',
  path: '/runs/{runId}/blobs/{sha256}',
  operationId: 'getRunBlob',
  summary: 'A payload the log holds by reference (`{kind: "blob", sha256}`), as stored: check its sha256',
  request: { params: BlobParamsSchema },
  responses: { 200: json(BlobContentSchema, 'the stored JSON'), ...always, 404: json(ErrorSchema, 'no such run or blob for this tenant') },
});
