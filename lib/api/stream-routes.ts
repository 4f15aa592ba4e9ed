import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { ApiEnv } from './api-env.js';
import { ErrorSchema, MAX_WAIT_SECONDS, RunParamsSchema } from './schemas.js';
import type { RunService } from './service.js';
import { CURSOR_PATTERN, type StreamItem } from './stream-merge.js';
import type { ReaderGate } from './reader-gate.js';
import type { Caller } from './tenant.js';
import { ValidationError } from '../core/errors.js';

const json = <T>(schema: T, description: string) => ({ content: { 'application/json': { schema } }, description });

const cursor = z.string().regex(new RegExp(CURSOR_PATTERN), "a cursor this endpoint gave out (`next` or an item's `cursor`)");

export const StreamQuerySchema = z.object({
  after: cursor
    .optional()
    .openapi({ description: 'resume after this cursor (opaque: `next`, or the `cursor` of the last item applied); absent: from the start' }),
  waitSeconds: z.coerce
    .number()
    .int()
    .min(0)
    .max(MAX_WAIT_SECONDS)
    .default(0)
    .openapi({
      description: `long poll: when nothing is new after \`after\`, wait up to this many seconds (at most ${MAX_WAIT_SECONDS}), then answer no items`,
    }),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
export type StreamQuery = z.infer<typeof StreamQuerySchema>;

const StreamItemSchema = z
  .discriminatedUnion('type', [
    z.object({
      type: z.literal('event'),
      cursor: z.string(),
      event: z.record(z.string(), z.unknown()).openapi({ description: 'the event, exactly as GET /runs/{runId}/events gives it' }),
    }),
    z.object({
      type: z.literal('text'),
      cursor: z.string(),
      callSeq: z.number().int().openapi({ description: "seq of the event holding the model call's reservation" }),
      attempt: z.number().int().openapi({ description: "which try at this turn's model call (1-based)" }),
      index: z.number().int(),
      text: z.string().openapi({ description: "streamed answer text: append to the call's text so far (plain text, never markup)" }),
    }),
    z.object({
      type: z.literal('discard'),
      cursor: z.string(),
      callSeq: z.number().int().openapi({ description: 'drop the partial text of this abandoned attempt' }),
    }),
  ])
  .openapi('StreamItem');

export const StreamPageSchema = z
  .object({
    items: z.array(StreamItemSchema),
    next: z.string().openapi({ description: 'pass as `after` for what follows' }),
    done: z.boolean().openapi({ description: 'the run is finished and everything is served' }),
  })
  .openapi('StreamPage');

export const runStreamRoute = createRoute({
  method: 'get',
  path: '/runs/{runId}/stream',
  operationId: 'streamRun',
  summary: "The run's events and the text of its open model call as it streams, in order, resumable by cursor",
  description:
    "Long poll (`waitSeconds`). Text items are previews: a model_response event supersedes its call's text, a `discard` drops an abandoned attempt's. " +
    'The local stack also answers `Accept: text/event-stream` (one SSE message per item, `id` = cursor, `Last-Event-ID` resumes).',
  request: { params: RunParamsSchema, query: StreamQuerySchema },
  responses: {
    200: json(StreamPageSchema, 'the items after `after`'),
    400: json(ErrorSchema, "invalid request: `error.issues` names each bad field by path (a cursor this run's log cannot have included)"),
    401: json(ErrorSchema, 'no authorized caller'),
    404: json(ErrorSchema, 'no such run for this tenant'),
    429: json(ErrorSchema, 'throttled, or (`too_many_streams`, with Retry-After) the tenant already holds its maximum of open long polls and streams'),
    500: json(ErrorSchema, 'internal error'),
    503: json(ErrorSchema, 'the store is unavailable for now: retry'),
  },
});

export interface StreamRouteOptions {
  /** Answer `Accept: text/event-stream` with Server-Sent Events (the local server; API Gateway buffers responses). */
  sse?: boolean;
  /** Caps the tenant's open waiting reads (a long poll, an SSE connection): over it, a 429. */
  gate?: ReaderGate;
}

/** The longest one SSE response lasts; the client reconnects with Last-Event-ID (EventSource does by itself). */
export const SSE_MAX_MS = 10 * 60_000;

export function registerStreamRoutes(app: OpenAPIHono<ApiEnv>, service: Pick<RunService, 'stream'>, options: StreamRouteOptions = {}): void {
  app.openapi(runStreamRoute, async (c) => {
    const { runId } = c.req.valid('param');
    const query = c.req.valid('query');
    const caller = c.get('caller');
    if (options.sse && (c.req.header('accept') ?? '').includes('text/event-stream')) {
      const lastId = c.req.header('last-event-id');
      const resumed = lastId !== undefined && cursor.safeParse(lastId).success;
      const after = resumed ? lastId : query.after;
      const leave = options.gate?.enter(caller.tenant) ?? (() => undefined);
      try {
        // The first read answers a missing run (404) or a cursor its log cannot have (400) before any stream starts.
        const first = await service
          .stream(caller, runId, { ...(after ? { after } : {}), limit: query.limit, waitSeconds: 0 }, c.req.raw.signal)
          .catch((error: unknown) => {
            throw resumed ? renamed(error, 'query.after', 'header.last-event-id') : error;
          });
        return sseResponse(service, caller, runId, first, query.limit, c.req.raw.signal, leave) as never;
      } catch (error) {
        leave();
        throw error;
      }
    }
    const waits = query.waitSeconds > 0;
    const leave = waits ? (options.gate?.enter(caller.tenant) ?? (() => undefined)) : () => undefined;
    try {
      const page = await service.stream(
        caller,
        runId,
        query.after ? { ...query, after: query.after } : { limit: query.limit, waitSeconds: query.waitSeconds },
        c.req.raw.signal,
      );
      return c.json(page, 200);
    } finally {
      leave();
    }
  });
}

/** The same refusal, naming the field the client sent (a Last-Event-ID rather than `after`). */
function renamed(error: unknown, from: string, to: string): unknown {
  if (!(error instanceof ValidationError)) return error;
  return new ValidationError(
    error.message,
    error.issues.map((i) => (i.path === from ? { ...i, path: to } : i)),
  );
}

/** One SSE message per item; a comment line while nothing is new, so a gone client is noticed. */
export function sseMessage(item: StreamItem): string {
  // JSON.stringify escapes every newline in strings, so data is one line.
  return `id: ${item.cursor}\nevent: ${item.type}\ndata: ${JSON.stringify(item)}\n\n`;
}

/** Reads the page after a cursor (a long poll of up to MAX_WAIT_SECONDS). */
export type NextPage = (after: string, signal: AbortSignal) => Promise<{ items: StreamItem[]; next: string; done: boolean }>;

/**
 * The SSE text of a stream from its first page on: each item as a message, a comment while
 * nothing is new (a gone client is then noticed), until the run is done, `signal` aborts, the
 * store fails (the client reconnects with Last-Event-ID) or `maxMs` has passed.
 */
export async function* sseText(
  next: NextPage,
  first: { items: StreamItem[]; next: string; done: boolean },
  options: { maxMs: number; signal: AbortSignal; now?: () => number },
): AsyncGenerator<string> {
  const now = options.now ?? Date.now;
  const ends = now() + options.maxMs;
  let page = first;
  for (;;) {
    for (const item of page.items) yield sseMessage(item);
    if (page.done || options.signal.aborted || now() >= ends) return;
    if (page.items.length === 0) yield ': waiting\n\n';
    try {
      page = await next(page.next, options.signal);
    } catch {
      return;
    }
  }
}

function sseResponse(
  service: Pick<RunService, 'stream'>,
  caller: Caller,
  runId: string,
  first: { items: StreamItem[]; next: string; done: boolean },
  limit: number,
  requestSignal: AbortSignal,
  leave: () => void,
): Response {
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  requestSignal.addEventListener('abort', onAbort, { once: true });
  const encoder = new TextEncoder();
  const next: NextPage = (after, signal) => service.stream(caller, runId, { after, limit, waitSeconds: MAX_WAIT_SECONDS }, signal);
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      try {
        for await (const text of sseText(next, first, { maxMs: SSE_MAX_MS, signal: stop.signal })) controller.enqueue(encoder.encode(text));
      } finally {
        leave();
        requestSignal.removeEventListener('abort', onAbort);
        try {
          controller.close();
        } catch {
          // already cancelled by the client
        }
      }
    },
    cancel() {
      stop.abort();
      leave();
    },
  });
  return new Response(body, { status: 200, headers: SSE_HEADERS });
}

export const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' };
