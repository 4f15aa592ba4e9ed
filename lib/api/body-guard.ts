import type { Context, Next } from 'hono';
import { jsonShapeProblem } from '../core/json.js';
import { MAX_ATTACHMENT_BYTES, MAX_JSON_DEPTH } from '../core/limits.js';
import type { ApiErrorBody } from './errors.js';

/** What the API accepts in one request body: anything else is a 4xx before a route sees it. */
export interface BodyLimits {
  /** Bytes; a larger body is a 413. */
  maxBodyBytes: number;
  /** Levels of arrays and objects; deeper is a 400 (recursive code later must not overflow). */
  maxJsonDepth: number;
}

/**
 * 1 MiB: a task, a tool result for a resolution, a cancel reason are far smaller; larger payloads
 * belong in the run's blobs, not in one request (API Gateway itself stops at 10 MB, Lambda at 6).
 */
export const DEFAULT_BODY_LIMITS: BodyLimits = { maxBodyBytes: 1024 * 1024, maxJsonDepth: MAX_JSON_DEPTH };

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;

export function payloadTooLarge(c: Context, limits: BodyLimits): Response {
  return c.json<ApiErrorBody>({ error: { code: 'payload_too_large', message: `the request body is over ${limits.maxBodyBytes} bytes` } }, 413);
}

/** An upload (POST /attachments) over the attachment limit: refused while it streams in. */
export function attachmentTooLarge(c: Context): Response {
  return c.json<ApiErrorBody>({ error: { code: 'attachment_too_large', message: `the attachment is over ${MAX_ATTACHMENT_BYTES} bytes` } }, 413);
}

/**
 * For a JSON body: it must be strict UTF-8 (a lossy decode would silently change the caller's
 * text), nest at most `maxJsonDepth` levels, and hold no `__proto__` key (it would vanish or
 * turn into a prototype when copied or read back). Malformed JSON, an empty body and other media
 * types are left to the route's validator, which answers them already.
 */
export function jsonBodyGuard(limits: BodyLimits) {
  return async (c: Context, next: Next): Promise<Response | void> => {
    if (c.req.raw.body === null) return next();
    const mediaType = (c.req.header('content-type') ?? '').split(';')[0]?.trim() ?? '';
    if (!JSON_MEDIA_TYPE.test(mediaType)) return next();
    // Read once into Hono's body cache: the validator parses the same bytes afterwards.
    const bytes = new Uint8Array(await c.req.arrayBuffer());
    if (bytes.byteLength > limits.maxBodyBytes) return payloadTooLarge(c, limits);
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      return c.json<ApiErrorBody>({ error: { code: 'invalid_request', message: 'the request body is not valid UTF-8' } }, 400);
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return next();
    }
    const problem = shapeProblem(value, limits.maxJsonDepth);
    if (problem) return c.json<ApiErrorBody>({ error: { code: 'validation_error', message: 'invalid request', issues: [problem] } }, 400);
    return next();
  };
}

/** The first place where a request body nests too deep or has a `__proto__` key. */
export function shapeProblem(value: unknown, maxDepth: number): { path: string; message: string } | undefined {
  return jsonShapeProblem(value, maxDepth, 'body');
}
