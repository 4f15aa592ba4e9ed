import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createH2Server, type Http2ServerRequest, type Http2ServerResponse, type Http2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Clock } from '../../../lib/ports/clock.js';

/** One recorded HTTP answer. `body` is sent as JSON unless it is a string. */
export interface Fixture {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

export interface RecordedRequest {
  method: string;
  /** Path and query as sent, percent-encoding included. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A streamed answer: the status and headers, then each chunk as its own write (a separate frame
 * on the wire, so a test decides where lines and messages split), then how the answer ends:
 * `end` closes it cleanly, `hang` sends nothing more (until the client gives up), `break` resets
 * the connection mid-answer.
 */
export interface StreamedFixture {
  status: number;
  headers?: Record<string, string>;
  chunks: (string | Uint8Array)[];
  then?: 'end' | 'hang' | 'break';
}

/** A reply: a fixture, a streamed answer, or 'hang' to keep the request open until the client gives up. */
export type Reply = Fixture | StreamedFixture | 'hang';

export interface FixtureServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  requests: RecordedRequest[];
  /** Resolves when the n-th request (1-based) has arrived. */
  received(n: number): Promise<void>;
  close(): Promise<void>;
}

export function loadFixture(relative: string): Fixture {
  const path = fileURLToPath(new URL(`../../fixtures/models/${relative}`, import.meta.url));
  return JSON.parse(readFileSync(path, 'utf8')) as Fixture;
}

export function withHeaders(fixture: Fixture, headers: Record<string, string>): Fixture {
  return { ...fixture, headers: { ...fixture.headers, ...headers } };
}

async function sendStream(res: ServerResponse | Http2ServerResponse, fixture: StreamedFixture): Promise<void> {
  res.writeHead(fixture.status, fixture.headers);
  for (const chunk of fixture.chunks) {
    if (res.destroyed) return;
    (res as ServerResponse).write(chunk);
    // Let each write leave as its own frame before the next.
    await new Promise((resolve) => setImmediate(resolve));
  }
  const then = fixture.then ?? 'end';
  if (then === 'end') res.end();
  else if (then === 'break') {
    if ('stream' in res)
      res.stream.close(2); // HTTP/2 INTERNAL_ERROR
    else res.socket?.destroy();
  }
}

function send(res: ServerResponse | Http2ServerResponse, fixture: Fixture): void {
  const body = typeof fixture.body === 'string' ? fixture.body : JSON.stringify(fixture.body);
  res.writeHead(fixture.status, { ...fixture.headers, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * A server on 127.0.0.1 (random port) that records every request and answers with the replies in
 * order. A request beyond the script gets a 418 whose message says so, which no adapter retries.
 * `h2c` speaks cleartext HTTP/2 (prior knowledge), which is what the Bedrock runtime client's
 * default request handler uses; `http1` is what fetch uses.
 */
export async function startFixtureServer(replies: Reply[], protocol: 'http1' | 'h2c' = 'http1'): Promise<FixtureServer> {
  const requests: RecordedRequest[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const handler = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      for (const w of waiters.filter((w) => w.n <= requests.length)) w.resolve();
      const reply = replies[requests.length - 1];
      if (reply === 'hang') return;
      if (reply && 'chunks' in reply) {
        void sendStream(res, reply);
        return;
      }
      send(
        res,
        reply ?? {
          status: 418,
          headers: { 'content-type': 'application/json' },
          body: { message: `fixture server: no reply scripted for request ${requests.length}` },
        },
      );
    });
  };
  const sessions = new Set<Http2Session>();
  const server =
    protocol === 'h2c'
      ? createH2Server(handler).on('session', (s: Http2Session) => {
          sessions.add(s);
          s.on('close', () => sessions.delete(s));
        })
      : createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    received: (n) => (n <= requests.length ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
    close: () =>
      (closed ??= new Promise<void>((resolve, reject) => {
        if ('closeAllConnections' in server) server.closeAllConnections();
        for (const s of sessions) s.destroy();
        server.close((err) => (err ? reject(err) : resolve()));
      })),
  };
}

/** A clock whose sleeps return at once and move time forward: retries never wait for real. */
export class InstantClock implements Clock {
  readonly sleeps: number[] = [];
  constructor(private current = Date.UTC(2026, 0, 15, 12, 0, 0)) {}
  now(): number {
    return this.current;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.sleeps.push(ms);
    this.current += ms;
    return Promise.resolve();
  }
}
