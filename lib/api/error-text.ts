import type { MiddlewareHandler } from 'hono';
import { Redactor } from '../core/redaction.js';
import type { ApiEnv } from './api-env.js';
import type { ApiIssue } from './errors.js';

/**
 * What a client is told when a request fails: never a storage key (the DynamoDB partition and
 * sort keys, the S3 keys of payloads, snapshots and uploads: internal layout, and another tenant's
 * name in a key is none of its business), never a secret it or a tool sent (redacted with the
 * application's redaction), never an unbounded echo of its own input (truncated). Applied to every
 * error body the API sends, whatever raised it, and to what the CLI prints.
 */

export const MAX_ERROR_MESSAGE_CHARS = 500;
export const MAX_ISSUE_PATH_CHARS = 200;
export const MAX_ISSUE_MESSAGE_CHARS = 300;
export const MAX_ISSUES = 100;

const STORAGE_KEYS: [RegExp, string][] = [
  // RUN#<tenant>#<runId>: the run id is the caller's own name for it.
  [/\bRUN#[^#\s"'`]*#([A-Za-z0-9_-]{1,80})/g, '$1'],
  [/\b(?:TENANT|SWEEP|EVT|INBOX|STR|ADMIT)#[^\s"'`,;)]*/g, '(an internal key)'],
  // S3: uploads by their sha256 (the caller's own reference), run payloads and snapshots by nothing.
  [/\battachments\/[^/\s"'`]+\/([0-9a-f]{64})\b/g, 'attachment $1'],
  [/\bblobs\/[^/\s"'`]+\/[^/\s"'`]+\/([0-9a-f]{64})\.json\b/g, 'payload $1'],
  [/\b(?:blobs|snapshots|attachments)\/[^\s"'`,;)]+/g, '(a stored object)'],
];

const defaultRedactor = new Redactor();
const builtIn = (text: string) => defaultRedactor.text(text);

/** The service's redaction (the application's rules), or the built-in one. */
export function redactText(service: { redactText?(text: string): string }): (text: string) => string {
  return service.redactText ? (t) => service.redactText!(t) : builtIn;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** One line of error text as a client may see it: keys out, secrets out, bounded. */
export function publicErrorText(text: string, redact: (text: string) => string = builtIn, max = MAX_ERROR_MESSAGE_CHARS): string {
  let out = text;
  for (const [pattern, replacement] of STORAGE_KEYS) out = out.replace(pattern, replacement);
  return clip(redact(out), max);
}

interface ErrorBodyLike {
  error: { code?: unknown; message?: unknown; issues?: unknown };
}

function isErrorBody(body: unknown): body is ErrorBodyLike {
  return typeof body === 'object' && body !== null && typeof (body as { error?: unknown }).error === 'object' && (body as { error?: unknown }).error !== null;
}

/** An error body with its message and each issue's path and message made public; at most MAX_ISSUES issues. */
export function publicErrorBody(body: ErrorBodyLike, redact: (text: string) => string): ErrorBodyLike {
  const error = { ...body.error };
  if (typeof error.message === 'string') error.message = publicErrorText(error.message, redact);
  if (Array.isArray(error.issues)) {
    const issues = (error.issues as ApiIssue[]).slice(0, MAX_ISSUES).map((i) => ({
      path: publicErrorText(String(i.path), redact, MAX_ISSUE_PATH_CHARS),
      message: publicErrorText(String(i.message), redact, MAX_ISSUE_MESSAGE_CHARS),
    }));
    const more = error.issues.length - issues.length;
    if (more > 0) issues.push({ path: '', message: `and ${more} more issues` });
    error.issues = issues;
  }
  return { ...body, error };
}

/**
 * Outermost middleware: every JSON error body (a refusal of a route, a validator, a guard, an
 * unknown route, an error the app maps) goes through publicErrorBody on its way out.
 */
export function publicErrors(redact: (text: string) => string): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    await next();
    const res = c.res;
    if (res.status < 400 || !(res.headers.get('content-type') ?? '').includes('application/json')) return;
    let body: unknown;
    try {
      body = await res.clone().json();
    } catch {
      return;
    }
    if (!isErrorBody(body)) return;
    const text = JSON.stringify(publicErrorBody(body, redact));
    const headers = new Headers(res.headers);
    headers.delete('content-length');
    c.res = undefined;
    c.res = new Response(text, { status: res.status, headers });
  };
}
