import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { ATTACHMENT_MEDIA_TYPES, servedMediaType } from '../core/attachments.js';
import { MAX_ATTACHMENT_BYTES } from '../core/limits.js';
import type { ApiEnv, ApiLogger } from './api-env.js';
import { ErrorSchema } from './schemas.js';
import type { RunService } from './service.js';

/**
 * Attachments over HTTP: `POST /attachments` takes the raw bytes of one image or document with
 * its Content-Type and answers the reference a run's input or a follow-up message carries in
 * their place; `GET /attachments/{sha256}` gives the bytes back (the inspector's links). Both are
 * scoped by the caller's tenant, like every run route.
 */

const json = <T>(schema: T, description: string) => ({ content: { 'application/json': { schema } }, description });
const Sha256Schema = z.string().regex(/^[0-9a-f]{64}$/, 'a sha256 is 64 lowercase hex digits');

export const AttachmentRefSchema = z
  .object({
    kind: z.literal('blob'),
    sha256: Sha256Schema,
    mediaType: z.enum(ATTACHMENT_MEDIA_TYPES),
    bytes: z.number().int().positive().openapi({ description: 'size of the upload' }),
    name: z.string().optional().openapi({ description: 'the name given at upload' }),
  })
  .openapi('AttachmentRef', {
    description:
      'An uploaded image or document. Put it anywhere in a run input or a follow-up message (as a field, or in an array): the model receives ' +
      'the file beside the text, the log keeps only this reference',
  });

const UploadQuerySchema = z.object({
  name: z
    .string()
    .optional()
    .openapi({
      param: { name: 'name', in: 'query' },
      description: 'the file name to show the model and people (1 to 255 characters, no slashes)',
      example: 'receipt.png',
    }),
});

const AttachmentParamsSchema = z.object({ sha256: Sha256Schema.openapi({ param: { name: 'sha256', in: 'path' } }) });

const binary = { schema: z.string().openapi({ format: 'binary' }) };

export const uploadAttachmentRoute = createRoute({
  method: 'post',
  path: '/attachments',
  operationId: 'uploadAttachment',
  summary: 'Upload an image or document for a run input or message (idempotent: stored by sha256)',
  request: {
    query: UploadQuerySchema,
    body: {
      content: Object.fromEntries(ATTACHMENT_MEDIA_TYPES.map((type) => [type, binary])),
      description: `the file's bytes, with its own Content-Type; at most ${MAX_ATTACHMENT_BYTES} bytes`,
      required: true,
    },
  },
  responses: {
    201: json(z.object({ ref: AttachmentRefSchema }).openapi('UploadedAttachment'), 'stored (the same bytes again answer the same reference)'),
    400: json(ErrorSchema, 'an empty body or a bad name'),
    401: json(ErrorSchema, 'no authorized caller'),
    413: json(ErrorSchema, `over ${MAX_ATTACHMENT_BYTES} bytes`),
    415: json(ErrorSchema, 'a Content-Type off the allow-list, or bytes that are not what the Content-Type says'),
    429: json(ErrorSchema, 'throttled: retry after a pause'),
    500: json(ErrorSchema, 'internal error'),
    503: json(ErrorSchema, 'the store is unavailable for now: retry'),
  },
});

export const getAttachmentRoute = createRoute({
  method: 'get',
  path: '/attachments/{sha256}',
  operationId: 'getAttachment',
  summary: "An upload of the caller's tenant, byte for byte (text of any kind is served as text/plain)",
  request: { params: AttachmentParamsSchema },
  responses: {
    200: { content: { 'application/octet-stream': binary }, description: 'the bytes; check them against the sha256' },
    400: json(ErrorSchema, 'not a sha256'),
    401: json(ErrorSchema, 'no authorized caller'),
    404: json(ErrorSchema, 'no such upload for this tenant'),
    429: json(ErrorSchema, 'throttled: retry after a pause'),
    500: json(ErrorSchema, 'internal error'),
    503: json(ErrorSchema, 'the store is unavailable for now: retry'),
  },
});

/** The Content-Type's media type, lower-cased, without parameters (`text/plain; charset=utf-8` → `text/plain`). */
function mediaTypeOf(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

export function registerAttachmentRoutes(app: OpenAPIHono<ApiEnv>, service: RunService, logger?: ApiLogger): void {
  app.openapi(uploadAttachmentRoute, async (c) => {
    const caller = c.get('caller');
    const { name } = c.req.valid('query');
    // The raw bytes: the body limit in front of this route already stopped anything larger.
    const bytes = new Uint8Array(await c.req.arrayBuffer());
    const ref = await service.upload(caller, { bytes, mediaType: mediaTypeOf(c.req.header('content-type')), ...(name !== undefined ? { name } : {}) });
    logger?.info('attachment stored', { tenant: caller.tenant, sha256: ref.sha256, mediaType: ref.mediaType, bytes: ref.bytes });
    return c.json({ ref }, 201);
  });

  app.openapi(getAttachmentRoute, async (c) => {
    const { sha256 } = c.req.valid('param');
    const bytes = await service.attachment(c.get('caller'), sha256);
    // An upload is someone's file: served as what its bytes are (text as plain text), never
    // sniffed into something else, and sandboxed should a browser open it directly.
    const headers = {
      'content-type': servedMediaType(bytes),
      'x-content-type-options': 'nosniff',
      'content-security-policy': "sandbox; default-src 'none'",
      'cache-control': 'private, max-age=31536000, immutable',
    };
    return new Response(bytes as Uint8Array<ArrayBuffer>, { status: 200, headers }) as never;
  });
}
