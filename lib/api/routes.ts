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
  409: json(ErrorSchema, 'conflict with the run as it is'),
  500: json(ErrorSchema, 'internal error'),
};

export const startRunRoute = createRoute({
  method: 'post',
  path: '/runs',
  summary: 'Start a run (idempotent on runId)',
  request: { body: { ...json(StartRunBodySchema, 'the run to start'), required: true } },
  responses: {
    201: json(StartRunResponseSchema, 'the run was created'),
    200: json(StartRunResponseSchema, 'a run with this id and the same request already exists'),
    400: errors[400],
    401: errors[401],
    409: json(ErrorSchema, 'the run id exists with a different request'),
  },
});

export const listRunsRoute = createRoute({
  method: 'get',
  path: '/runs',
  summary: "The caller's runs, newest first",
  request: { query: ListQuerySchema },
  responses: { 200: json(RunListSchema, 'a page of runs'), 400: errors[400], 401: errors[401] },
});

export const getRunRoute = createRoute({
  method: 'get',
  path: '/runs/{runId}',
  summary: 'Status, pinned versions, usage, result or failure, open attention',
  request: { params: RunParamsSchema },
  responses: { 200: json(RunViewSchema, 'the run'), 400: errors[400], 401: errors[401], 404: errors[404] },
});

export const runEventsRoute = createRoute({
  method: 'get',
  path: '/runs/{runId}/events',
  summary: 'The run log, paginated; large bodies appear by reference',
  request: { params: RunParamsSchema, query: EventsQuerySchema },
  responses: { 200: json(EventPageSchema, 'events after `after`'), 400: errors[400], 401: errors[401], 404: errors[404] },
});

export const cancelRunRoute = createRoute({
  method: 'post',
  path: '/runs/{runId}/cancel',
  summary: 'Ask the run to stop: no new calls, abortable calls aborted',
  request: { params: RunParamsSchema, body: { ...json(CancelBodySchema, 'optional reason'), required: false } },
  responses: { 202: json(AcceptedSchema, 'the cancel is queued for the run'), 400: errors[400], 401: errors[401], 404: errors[404], 409: errors[409] },
});

export const resolveRunRoute = createRoute({
  method: 'post',
  path: '/runs/{runId}/resolve',
  summary: 'Answer an open attention: a call outcome, or retry/fail for a run-level park',
  request: { params: RunParamsSchema, body: { ...json(ResolveBodySchema, 'the resolution'), required: true } },
  responses: {
    202: json(AcceptedSchema, 'the resolution is queued for the run'),
    400: errors[400],
    401: errors[401],
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
  responses: { 200: json(BlobContentSchema, 'the stored JSON'), 400: errors[400], 401: errors[401], 404: json(ErrorSchema, 'no such run or blob for this tenant') },
});
