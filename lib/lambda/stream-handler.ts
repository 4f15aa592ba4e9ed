import type { Context } from 'aws-lambda';
import { errorCode } from '../core/errors.js';
import { issuesOf, statusOf, type ApiErrorBody } from '../api/errors.js';
import { RunIdSchema } from '../api/schemas.js';
import { SSE_HEADERS, SSE_MAX_MS, StreamQuerySchema, sseText, type NextPage } from '../api/stream-routes.js';
import { streamPage, type StreamDeps } from '../api/stream-read.js';
import { callerFromAuthorizer, type AuthorizerContext } from '../api/tenant.js';
import { MAX_WAIT_SECONDS } from '../api/schemas.js';
import { ChatQuerySchema, CHAT_HEADERS, chatRequestOf } from '../api/chat-routes.js';
import { chatSseText, openChat } from '../api/chat-read.js';
import type { Body } from '../core/body.js';
import type { JsonValue } from '../core/json.js';

/** The parts of a Lambda function URL request (payload 2.0) the stream handler reads. */
export interface FunctionUrlEvent {
  rawPath: string;
  queryStringParameters?: Record<string, string | undefined>;
  headers?: Record<string, string | undefined>;
  requestContext: { http: { method: string }; authorizer?: AuthorizerContext };
}

/** The response stream Lambda hands a streaming handler (a Node Writable). */
export interface ResponseStream {
  write(chunk: string): unknown;
  end(): void;
  on?(event: 'close' | 'error', listener: () => void): unknown;
}

/** Lambda's `awslambda` global in a streaming runtime: how the status and headers are set. */
export interface StreamingRuntime {
  streamifyResponse<H>(handler: H): H;
  HttpResponseStream: { from(stream: ResponseStream, metadata: { statusCode: number; headers: Record<string, string> }): ResponseStream };
}

/** Time kept free before the function's own timeout: the stream ends cleanly and the client reconnects. */
const END_MARGIN_MS = 5_000;
const PATH = /^\/runs\/([^/]+)\/(stream|chat)\/?$/;

export interface StreamHandlerDeps {
  /** The run table's readers; `codec` reads the payloads a chat answer shows when they are offloaded to S3. */
  deps: StreamDeps & { codec?: { resolve(body: Body): Promise<JsonValue> } };
  tenantClaim?: string;
}

/**
 * GET /runs/{runId}/stream as true Server-Sent Events, for a Lambda function URL with response
 * streaming (InvokeMode RESPONSE_STREAM, AWS_IAM auth): the same items, cursors and tenant as
 * the API's long poll, one SSE message per item, resumed by `after` or Last-Event-ID. The HTTP
 * API (API Gateway) buffers whole responses, so it serves the long poll only. GET
 * /runs/{runId}/chat is the same run as the AI SDK's UI message stream (lib/api/chat-read.ts).
 */
export function streamHandlerFor(getDeps: () => Promise<StreamHandlerDeps>, runtime: StreamingRuntime) {
  return async (event: FunctionUrlEvent, responseStream: ResponseStream, context: Pick<Context, 'getRemainingTimeInMillis'>): Promise<void> => {
    const refuse = (statusCode: number, body: ApiErrorBody) => {
      const out = runtime.HttpResponseStream.from(responseStream, { statusCode, headers: { 'content-type': 'application/json' } });
      out.write(JSON.stringify(body));
      out.end();
    };
    const match = PATH.exec(event.rawPath);
    if (event.requestContext.http.method !== 'GET' || !match) {
      return refuse(404, { error: { code: 'not_found', message: `no route ${event.requestContext.http.method} ${event.rawPath}` } });
    }
    const { deps, tenantClaim } = await getDeps();
    const caller = callerFromAuthorizer(event.requestContext.authorizer, tenantClaim ? { claim: tenantClaim } : {});
    if (!caller) return refuse(401, { error: { code: 'unauthorized', message: 'no authorized caller' } });
    const runId = RunIdSchema.safeParse(decodeURIComponent(match[1] ?? ''));
    const lastId = event.headers?.['last-event-id'];
    const remaining = () => context.getRemainingTimeInMillis() - END_MARGIN_MS - MAX_WAIT_SECONDS * 1000;
    if (match[2] === 'chat') {
      const chat = ChatQuerySchema.safeParse(event.queryStringParameters ?? {});
      if (!runId.success || !chat.success) {
        const issues = [...(runId.success ? [] : issuesOf(runId.error, 'param')), ...(chat.success ? [] : issuesOf(chat.error, 'query'))];
        return refuse(400, { error: { code: 'validation_error', message: 'invalid request', issues } });
      }
      return serveChat(runtime, responseStream, { deps, refuse }, { tenant: caller.tenant, runId: runId.data }, chatRequestOf(chat.data, lastId), remaining());
    }
    const query = StreamQuerySchema.safeParse({ ...event.queryStringParameters, ...(lastId ? { after: lastId } : {}) });
    if (!runId.success || !query.success) {
      const issues = [...(runId.success ? [] : issuesOf(runId.error, 'param')), ...(query.success ? [] : issuesOf(query.error, 'query'))];
      return refuse(400, { error: { code: 'validation_error', message: 'invalid request', issues } });
    }
    const run = { tenant: caller.tenant, runId: runId.data };
    const stop = new AbortController();
    responseStream.on?.('close', () => stop.abort());
    responseStream.on?.('error', () => stop.abort());
    const { limit } = query.data;
    let first;
    try {
      first = await streamPage(deps, run, { ...(query.data.after ? { after: query.data.after } : {}), limit, waitSeconds: 0 }, { signal: stop.signal });
    } catch (error) {
      const status = statusOf(error);
      return refuse(status, {
        error: { code: status === 500 ? 'internal_error' : errorCode(error), message: status === 500 ? 'internal error' : (error as Error).message },
      });
    }
    const out = runtime.HttpResponseStream.from(responseStream, { statusCode: 200, headers: SSE_HEADERS });
    const next: NextPage = (after, signal) => streamPage(deps, run, { after, limit, waitSeconds: MAX_WAIT_SECONDS }, { signal });
    const maxMs = Math.max(0, Math.min(SSE_MAX_MS, remaining()));
    for await (const text of sseText(next, first, { maxMs, signal: stop.signal })) out.write(text);
    out.end();
  };
}

/** GET /runs/{runId}/chat: the UI message stream, a 204 when nothing streams, errors as JSON. */
async function serveChat(
  runtime: StreamingRuntime,
  responseStream: ResponseStream,
  io: { deps: StreamHandlerDeps['deps']; refuse(statusCode: number, body: ApiErrorBody): void },
  run: { tenant: string; runId: string },
  request: ReturnType<typeof chatRequestOf>,
  remainingMs: number,
): Promise<void> {
  const stop = new AbortController();
  responseStream.on?.('close', () => stop.abort());
  responseStream.on?.('error', () => stop.abort());
  const codec = io.deps.codec;
  const deps = { ...io.deps, ...(codec ? { resolve: (body: Body) => codec.resolve(body) } : {}) };
  let session;
  try {
    session = await openChat(deps, run, request);
  } catch (error) {
    const status = statusOf(error);
    return io.refuse(status, {
      error: { code: status === 500 ? 'internal_error' : errorCode(error), message: status === 500 ? 'internal error' : (error as Error).message },
    });
  }
  if (session.kind === 'none') {
    runtime.HttpResponseStream.from(responseStream, { statusCode: 204, headers: {} }).end();
    return;
  }
  const out = runtime.HttpResponseStream.from(responseStream, { statusCode: 200, headers: CHAT_HEADERS });
  const maxMs = Math.max(0, Math.min(SSE_MAX_MS, remainingMs));
  for await (const text of chatSseText(deps, session, { maxMs, signal: stop.signal })) out.write(text);
  out.end();
}

/** Lambda's streaming runtime global, present only inside a Node.js Lambda runtime. */
export function lambdaStreamingRuntime(): StreamingRuntime {
  const runtime = (globalThis as { awslambda?: StreamingRuntime }).awslambda;
  if (!runtime) throw new Error('createStreamHandler runs only in a Lambda Node.js runtime (the awslambda global is missing)');
  return runtime;
}
