import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { UI_MESSAGE_STREAM_HEADERS } from '../chat/ui-chunks.js';
import type { ReaderGate } from './reader-gate.js';
import type { ApiEnv } from './api-env.js';
import { CHAT_CURSOR_PATTERN, type ChatRequest, type ChatService } from './chat-read.js';
import { ErrorSchema, MAX_WAIT_SECONDS, RunParamsSchema } from './schemas.js';
import { SSE_MAX_MS } from './stream-routes.js';

const json = <T>(schema: T, description: string) => ({ content: { 'application/json': { schema } }, description });

export const chatCursor = z.string().regex(new RegExp(CHAT_CURSOR_PATTERN), 'a chat cursor this endpoint gave out (an SSE id)');

export const ChatQuerySchema = z.object({
  after: chatCursor.optional().openapi({ description: 'go on after this cursor (the `id` of the last SSE message applied; `Last-Event-ID` does the same)' }),
  replay: z
    .enum(['true', 'false'])
    .optional()
    .openapi({ description: "with `after`: send the cursor's message again from its start (the client rebuilds it)" }),
  from: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .openapi({ description: 'the answer to the first user turn after this seq: 0 for the run input, a turn seq for the follow-up after it' }),
});
export type ChatQuery = z.infer<typeof ChatQuerySchema>;

export const runChatRoute = createRoute({
  method: 'get',
  path: '/runs/{runId}/chat',
  operationId: 'chatRun',
  summary: "The run as the AI SDK's UI message stream (Server-Sent Events): one assistant message, resumable by cursor",
  description:
    'For `useChat` (logbook/chat). Text, tool and data parts of one answer, `id` = a cursor on each message that ends an item. ' +
    'Without `after` or `from`: the latest answer, or 204 when the run is not running (or not there). Reads only, like GET /runs/{runId}/stream.',
  request: { params: RunParamsSchema, query: ChatQuerySchema },
  responses: {
    200: { content: { 'text/event-stream': { schema: z.string() } }, description: 'the UI message stream (`x-vercel-ai-ui-message-stream: v1`)' },
    204: { description: 'no answer is streaming: the run is not running, or (without `after` and `from`) not there' },
    400: json(ErrorSchema, 'invalid request: `error.issues` names each bad field by path'),
    401: json(ErrorSchema, 'no authorized caller'),
    404: json(ErrorSchema, 'no such run for this tenant'),
    429: json(ErrorSchema, 'throttled (the stage or the store): retry after a pause'),
    500: json(ErrorSchema, 'internal error'),
    503: json(ErrorSchema, 'the store is unavailable for now: retry'),
  },
});

/** The chat request from the query and Last-Event-ID (which wins over `after`, as EventSource resends it). */
export function chatRequestOf(query: ChatQuery, lastEventId: string | undefined): ChatRequest {
  const after = lastEventId !== undefined && chatCursor.safeParse(lastEventId).success ? lastEventId : query.after;
  return {
    ...(after !== undefined ? { after } : {}),
    ...(query.replay === 'true' ? { replay: true } : {}),
    ...(query.from !== undefined ? { from: query.from } : {}),
  };
}

export const CHAT_HEADERS = { ...UI_MESSAGE_STREAM_HEADERS, 'content-type': 'text/event-stream; charset=utf-8', 'x-content-type-options': 'nosniff' };

/** A streamed response of the SSE text; the body's cancel (the client left) aborts the reads. */
export function chatResponse(
  open: (signal: AbortSignal) => Promise<AsyncIterable<string> | undefined>,
  requestSignal: AbortSignal,
  /** Called once when the response is over (the tenant's open-stream slot is given back). */
  leave: () => void = () => undefined,
): Promise<Response> {
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  requestSignal.addEventListener('abort', onAbort, { once: true });
  let left = false;
  const done = () => {
    requestSignal.removeEventListener('abort', onAbort);
    if (!left) leave();
    left = true;
  };
  return open(stop.signal).then(
    (text) => {
      if (!text) {
        done();
        return new Response(null, { status: 204 });
      }
      const encoder = new TextEncoder();
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          try {
            for await (const s of text) controller.enqueue(encoder.encode(s));
          } finally {
            done();
            try {
              controller.close();
            } catch {
              // already cancelled by the client
            }
          }
        },
        cancel() {
          stop.abort();
        },
      });
      return new Response(body, { status: 200, headers: CHAT_HEADERS });
    },
    (error: unknown) => {
      done();
      throw error;
    },
  );
}

/**
 * GET /runs/{runId}/chat. On the local server (`sse`) a response lasts up to SSE_MAX_MS; behind
 * API Gateway, which buffers a whole response, it ends within MAX_WAIT_SECONDS and the client
 * comes back with the last cursor (the function URL streams: lib/lambda/stream-handler.ts).
 */
export function registerChatRoutes(app: OpenAPIHono<ApiEnv>, service: ChatService, options: { sse?: boolean; gate?: ReaderGate } = {}): void {
  const maxMs = options.sse ? SSE_MAX_MS : MAX_WAIT_SECONDS * 1000;
  app.openapi(runChatRoute, async (c) => {
    const { runId } = c.req.valid('param');
    const request = chatRequestOf(c.req.valid('query'), c.req.header('last-event-id'));
    const caller = c.get('caller');
    if (!service.chat) return c.json({ error: { code: 'not_found', message: 'this API serves no chat stream' } }, 404);
    const chat = service.chat.bind(service);
    // A chat response waits on the run like a long poll: it takes one of the tenant's open-stream slots.
    const leave = options.gate?.enter(caller.tenant) ?? (() => undefined);
    return (await chatResponse((signal) => chat(caller, runId, request, { maxMs, signal }), c.req.raw.signal, leave)) as never;
  });
}
