import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ZodError } from 'zod';
import { LogbookError, RunNotFoundError, TooManyRunsError, TooManyStreamsError, errorCode } from '../core/errors.js';
import { zodIssues } from '../core/zod-issues.js';

export interface ApiIssue {
  path: string;
  message: string;
}

export interface ApiErrorBody {
  error: { code: string; message: string; issues?: ApiIssue[] };
}

/** Validation targets as people call them. */
const TARGET_NAMES: Record<string, string> = { json: 'body', query: 'query', param: 'path', header: 'header' };

/**
 * Zod issues as the API reports them, the request part first (`body.budgets.maxSteps`,
 * `query.limit`, `path.runId`); see zodIssues for unions and unknown fields.
 */
export function issuesOf(error: ZodError, target: string): ApiIssue[] {
  return zodIssues(error, { prefix: TARGET_NAMES[target] ?? target });
}

/** Codes for the refusals Hono and its validators raise as HTTPException. */
const HTTP_CODES: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

/** HTTP status of a Logbook error; unknown errors are 500 and never echo their message. */
export function statusOf(error: unknown): 400 | 404 | 408 | 409 | 413 | 415 | 429 | 500 | 503 {
  switch (errorCode(error)) {
    case 'validation_error':
    // The client went away mid-body: nobody reads this answer, but it is the client's doing, not a 5xx.
    case 'client_closed':
    // An agent's instructions refused this run's input or context: the request cannot start a run.
    case 'instructions_failed':
      return 400;
    // Only a request's own content makes an item too large (a resolution's result, say).
    case 'item_too_large':
    case 'attachment_too_large':
      return 413;
    case 'unsupported_media_type':
      return 415;
    case 'request_timeout':
      return 408;
    case 'run_not_found':
    case 'blob_not_found':
    case 'call_not_found':
      return 404;
    case 'run_conflict':
    case 'run_ended':
    case 'attention_not_open':
    case 'resolution_conflict':
    case 'rerun_too_early':
    case 'conflict':
    case 'not_workflow_run':
    case 'signal_not_awaited':
      return 409;
    case 'throttled':
    case 'too_many_runs':
    case 'too_many_streams':
      return 429;
    case 'store_unavailable':
      return 503;
    default:
      return error instanceof LogbookError && /conflict|not_open|too_early/.test(error.code) ? 409 : 500;
  }
}

export function errorResponse(c: Context, error: unknown): Response {
  if (error instanceof HTTPException) {
    const status = error.status;
    if (status >= 500) return c.json<ApiErrorBody>({ error: { code: 'internal_error', message: 'internal error' } }, 500);
    const code = HTTP_CODES[status] ?? 'http_error';
    return c.json<ApiErrorBody>({ error: { code, message: error.message || 'request refused' } }, status);
  }
  const status = statusOf(error);
  if (status === 500) {
    return c.json<ApiErrorBody>({ error: { code: 'internal_error', message: 'internal error' } }, 500);
  }
  if (error instanceof RunNotFoundError) {
    // The error carries the run; name it in the caller's terms (its id within the caller's tenant).
    return c.json<ApiErrorBody>({ error: { code: 'run_not_found', message: `run ${error.run.runId} not found` } }, 404);
  }
  // The tenant is at its limit of unfinished runs or open streams: say when to try again (RFC 9110 Retry-After).
  if (error instanceof TooManyRunsError || error instanceof TooManyStreamsError) c.header('Retry-After', String(error.retryAfterSeconds));
  const issues = error instanceof LogbookError && 'issues' in error ? (error as { issues: readonly ApiIssue[] }).issues : undefined;
  return c.json<ApiErrorBody>(
    {
      error: {
        code: errorCode(error),
        message: error instanceof Error ? error.message : String(error),
        ...(issues && issues.length > 0 ? { issues: [...issues] } : {}),
      },
    },
    status,
  );
}
