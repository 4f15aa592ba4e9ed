import type { ChatPlaces } from './chat-state.js';
import { sseMessages } from './sse.js';
import type { LogbookUIChunk } from './ui-chunks.js';
import { turnOfMessageId } from './ui-chunks.js';

/** How a connection lost mid-answer is retried before the response fails. */
export interface ReconnectPolicy {
  /** Connection failures in a row (default 6). */
  attempts?: number;
  /** First pause; doubled each time, at most 4 s (default 250 ms). */
  delayMs?: number;
}

export interface ConnectionContext {
  runId: string;
  chatId: string;
  places: ChatPlaces;
  /** GET the chat stream with these query parameters. */
  request(params: Record<string, string>, signal: AbortSignal): Promise<Response>;
  policy: ReconnectPolicy;
  /** A replay is needed: true when the transport will replay (a chat is attached), false to go on. */
  onReplay(): boolean;
}

/** An HTTP error as an Error with the API's message (`error.message`, else the status). */
export async function httpError(res: Response, what: string): Promise<Error> {
  let message = `${res.status} ${res.statusText}`.trim();
  try {
    const body = (await res.json()) as { error?: { code?: string; message?: string } };
    if (body.error?.message) message = `${body.error.code ?? res.status}: ${body.error.message}`;
  } catch {
    // not JSON
  }
  return new Error(`Logbook ${what}: ${message}`);
}

const lostError = (runId: string, n: number) => new Error(`Logbook chat: the connection to run ${runId} was lost ${n} times in a row`);

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * One response of the chat as the chunks the AI SDK reads, across connections: a chunk is passed
 * on only once the SSE message ending its item (the one with an `id`) has arrived, so a
 * connection lost mid-item resumes from the last id with nothing sent twice or skipped. The
 * response ends at `finish`, at a replay the transport takes over, or with an error after the
 * policy's attempts (a plain Error: the AI SDK then starts the next reconnect from a clean state).
 */
export function chatChunkStream(first: Response, initial: Record<string, string>, ctx: ConnectionContext, outer?: AbortSignal): ReadableStream<LogbookUIChunk> {
  const stop = new AbortController();
  const onOuter = () => stop.abort();
  outer?.addEventListener('abort', onOuter, { once: true });
  const attempts = ctx.policy.attempts ?? 6;
  const delay = ctx.policy.delayMs ?? 250;
  return new ReadableStream<LogbookUIChunk>({
    async start(controller) {
      let res: Response | undefined = first;
      let params = initial;
      let failures = 0;
      try {
        for (;;) {
          if (res) {
            const out = await pump(res, controller, ctx, stop.signal);
            if (stop.signal.aborted || out.end === 'finish') return controller.close();
            if (out.end === 'replay' && ctx.onReplay()) return controller.close();
            // Go on after the last item passed on (a replay the transport does not take: the text stays).
            if (out.lastId !== undefined) {
              params = { after: out.lastId };
              failures = 0;
            } else if (out.end === 'lost') failures++;
            if (failures >= attempts) return controller.error(lostError(ctx.runId, failures));
            res = undefined;
          }
          if (failures > 0) await pause(Math.min(4_000, delay * 2 ** (failures - 1)), stop.signal);
          if (stop.signal.aborted) return controller.close();
          try {
            res = await ctx.request(params, stop.signal);
          } catch {
            if (stop.signal.aborted) return controller.close();
            if (++failures >= attempts) return controller.error(lostError(ctx.runId, failures));
            continue;
          }
          if (res.status === 204) return controller.close();
          if (!res.ok) return controller.error(await httpError(res, 'chat stream'));
        }
      } finally {
        outer?.removeEventListener('abort', onOuter);
      }
    },
    cancel() {
      stop.abort();
    },
  });
}

/**
 * Read one response body: pass on each item's chunks once its id arrives, note the cursor.
 * 'finish': the message is done (or paused for a person); 'replay': text must be taken back;
 * 'eof': the body ended (the server's time was up); 'lost': the connection broke.
 */
async function pump(
  res: Response,
  controller: ReadableStreamDefaultController<LogbookUIChunk>,
  ctx: ConnectionContext,
  signal: AbortSignal,
): Promise<{ end: 'finish' | 'replay' | 'eof' | 'lost'; lastId: string | undefined }> {
  let lastId: string | undefined;
  if (!res.body) return { end: 'eof', lastId };
  let pending: LogbookUIChunk[] = [];
  try {
    for await (const m of sseMessages(res.body, signal)) {
      if (m.data && m.data !== '[DONE]') pending.push(JSON.parse(m.data) as LogbookUIChunk);
      if (m.id === undefined) continue;
      const place = ctx.places.get(ctx.chatId);
      let turn = place?.turn;
      let end: 'finish' | 'replay' | undefined;
      let finished = false;
      for (const chunk of pending) {
        if (chunk.type === 'start' && chunk.messageId) turn = turnOfMessageId(ctx.runId, chunk.messageId) ?? turn;
        if (chunk.type === 'finish') {
          end = 'finish';
          finished = chunk.finishReason !== 'tool-calls';
        }
        if (chunk.type === 'data-replay') end = 'replay';
        controller.enqueue(chunk);
      }
      pending = [];
      lastId = m.id;
      ctx.places.set(ctx.chatId, { cursor: m.id, ...(turn !== undefined ? { turn } : {}), finished });
      if (end) return { end, lastId };
    }
  } catch {
    return { end: 'lost', lastId };
  }
  return { end: 'eof', lastId };
}
