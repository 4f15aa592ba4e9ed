import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ZodError } from 'zod';
import { LogbookError, RunNotFoundError, errorCode } from '../core/errors.js';

export interface ApiIssue {
  path: string;
  message: string;
}

export interface ApiErrorBody {
  error: { code: string; message: string; issues?: ApiIssue[] };
}

/** Validation targets as people call them. */
const TARGET_NAMES: Record<string, string> = { json: 'body', query: 'query', param: 'path', header: 'header' };

interface LooseIssue {
  code: string;
  path: PropertyKey[];
  message: string;
  errors?: LooseIssue[][];
  keys?: string[];
}

/**
 * Flatten zod issues into `{path, message}` with the request part first (`body.budgets.maxSteps`).
 * A union reports the branch that came closest (fewest issues), not zod's generic "Invalid input".
 */
export function issuesOf(error: ZodError, target: string): ApiIssue[] {
  const root = TARGET_NAMES[target] ?? target;
  const out: ApiIssue[] = [];
  const walk = (issues: readonly LooseIssue[], prefix: PropertyKey[]) => {
    for (const issue of issues) {
      const path = [...prefix, ...issue.path];
      if (issue.code === 'invalid_union' && issue.errors && issue.errors.length > 0) {
        const best = [...issue.errors].sort((a, b) => a.length - b.length)[0] ?? [];
        if (best.length > 0) {
          walk(best, path);
          continue;
        }
      }
      if (issue.code === 'unrecognized_keys' && issue.keys) {
        for (const key of issue.keys) out.push({ path: render(root, [...path, key]), message: 'unknown field' });
        continue;
      }
      out.push({ path: render(root, path), message: issue.message });
    }
  };
  walk(error.issues as unknown as LooseIssue[], []);
  return out;
}

function render(root: string, path: PropertyKey[]): string {
  return [root, ...path.map(String)].join('.');
}

/** HTTP status of a Logbook error; unknown errors are 500 and never echo their message. */
export function statusOf(error: unknown): 400 | 404 | 409 | 429 | 500 | 503 {
  switch (errorCode(error)) {
    case 'validation_error':
      return 400;
    case 'run_not_found':
    case 'call_not_found':
      return 404;
    case 'run_conflict':
    case 'attention_not_open':
    case 'resolution_conflict':
    case 'rerun_too_early':
    case 'conflict':
      return 409;
    case 'throttled':
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
    const code = status === 400 ? 'invalid_request' : status === 401 ? 'unauthorized' : 'http_error';
    return c.json<ApiErrorBody>({ error: { code, message: error.message || 'request refused' } }, status);
  }
  const status = statusOf(error);
  if (status === 500) {
    return c.json<ApiErrorBody>({ error: { code: 'internal_error', message: 'internal error' } }, 500);
  }
  if (status === 404 && error instanceof RunNotFoundError) {
    // The key names the caller's own tenant; say it in the caller's terms.
    const runId = error.runKey.split('#').slice(2).join('#');
    return c.json<ApiErrorBody>({ error: { code: 'run_not_found', message: `run ${runId} not found` } }, 404);
  }
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
