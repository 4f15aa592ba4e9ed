import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Socket, type AddressInfo } from 'node:net';
import { serve, type Http2Bindings, type HttpBindings } from '@hono/node-server';
import { DEFAULT_BODY_TIMINGS, IncomingBody, closeAfterDrain, type BodyTimings } from './request-body.js';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** What a loopback server asks of a request beyond "from this machine's own pages". */
export interface LoopbackPolicy {
  /**
   * The inspector's `x-logbook-inspector: 1` header is required (`logbook inspect`'s proxy: only
   * its page calls it). The local stack's API does not require it: the CLI and curl call it too.
   */
  inspectorHeader?: boolean;
  /** A per-session secret, in this cookie, is required (`logbook inspect`: see sessionCookie). */
  session?: { cookie: string; secret: string };
}

/**
 * Why a request to a server on 127.0.0.1 did not come from this server's own page or from a
 * program on this machine, or undefined when it did. Browsers let any web page send requests to
 * 127.0.0.1: with another Host (DNS rebinding: evil.example resolving to 127.0.0.1 makes the call
 * same-origin for the browser), or cross-site (a form or a no-cors fetch needs no preflight, and a
 * POST without a JSON body reaches the route). Browsers always send Origin on such POSTs and
 * Sec-Fetch-Site on every request; non-browser clients (the CLI, curl) send neither.
 */
export function foreignRequest(header: (name: string) => string | undefined, policy: LoopbackPolicy = {}): string | undefined {
  const host = header('host') ?? '';
  if (!loopbackHost(host)) return `Host ${host || '(none)'} is not this loopback server`;
  const origin = header('origin');
  if (origin !== undefined && origin !== `http://${host}`) return `Origin ${origin} is not this server`;
  const site = header('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return `a ${site} request`;
  if (policy.inspectorHeader && header('x-logbook-inspector') !== '1') {
    return 'no x-logbook-inspector header (only the inspector page calls the API through here)';
  }
  if (policy.session && !sameSecret(cookieValue(header('cookie'), policy.session.cookie), policy.session.secret)) {
    return 'no session: open the URL `logbook inspect` printed (it sets this session’s cookie)';
  }
  return undefined;
}

/** Only the Host check: for the inspector's static page, which a link from anywhere may open. */
export function foreignHost(header: (name: string) => string | undefined): string | undefined {
  const host = header('host') ?? '';
  return loopbackHost(host) ? undefined : `Host ${host || '(none)'} is not this loopback server`;
}

function loopbackHost(host: string): boolean {
  const hostname = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : (host.split(':')[0] ?? '');
  return LOOPBACK.has(hostname);
}

/** The 403 every refusal above gets: JSON like the API's errors, never cached. */
export function forbidden(why: string): Response {
  return new Response(JSON.stringify({ error: { code: 'forbidden', message: `refused: ${why}` } }), {
    status: 403,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' },
  });
}

export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function sameSecret(given: string | undefined, secret: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface LoopbackServer {
  port: number;
  close(): Promise<void>;
}

type Handler = (request: Request, env: HttpBindings | Http2Bindings) => Response | Promise<Response>;

/**
 * Serve `handler` on 127.0.0.1. Request bodies are read through IncomingBody (request-body.ts): a
 * body that has not arrived within BODY_TIMEOUT_MS fails (the API answers 408), a client that
 * closes mid-body fails it as a client abort, and an answer given before the body was all in
 * (a 413 from Content-Length, a 401 or 404 from the headers) goes out with `Connection: close`
 * and the rest of the body drained, so that the client reads it instead of a reset: see
 * closeAfterDrain. A keep-alive client told `close` opens a fresh socket for its next request.
 */
export async function serveLoopback(handler: Handler, port: number, timings: BodyTimings = DEFAULT_BODY_TIMINGS): Promise<LoopbackServer> {
  const fetch = async (request: Request, env: HttpBindings | Http2Bindings): Promise<Response> => {
    const incoming = env.incoming as IncomingMessage | undefined;
    if (!incoming || !(incoming.socket instanceof Socket) || request.method === 'GET' || request.method === 'HEAD') return handler(request, env);
    const body = new IncomingBody(incoming, timings);
    const guarded = new Request(request.url, {
      method: request.method,
      headers: request.headers,
      body: body.stream,
      duplex: 'half',
      signal: request.signal,
    } as RequestInit);
    let response: Response;
    try {
      response = await handler(guarded, env);
    } catch (error) {
      // No answer of ours (node-server answers 500): the body is still drained, within its bounds.
      void body.settle();
      throw error;
    }
    if (body.received) {
      void body.settle();
      return response;
    }
    closeAfterDrain(body, incoming.socket, timings);
    const headers = new Headers(response.headers);
    headers.set('connection', 'close');
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  };
  const server = await new Promise<ReturnType<typeof serve>>((ok, fail) => {
    // autoCleanupIncoming off: bodies are drained by IncomingBody, within its bounds (node-server's
    // own cleanup destroys the socket after 500 ms, which is the reset this avoids).
    const s = serve({ fetch, port, hostname: '127.0.0.1', autoCleanupIncoming: false });
    s.once('listening', () => ok(s));
    s.once('error', fail);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/** The inspector's page and its assets (and `/`, which redirects there): a link from anywhere may open them. */
function pagePath(method: string, path: string): boolean {
  return (method === 'GET' || method === 'HEAD') && (path === '/' || path === '/ui' || path.startsWith('/ui/'));
}

/**
 * `handler` behind the checks above: the page needs only a loopback Host (it holds no data, and
 * the API calls it makes pass the full check); everything else must pass `foreignRequest`.
 */
export function loopbackOnly(handler: Handler, policy: LoopbackPolicy = {}): Handler {
  return (request, env) => {
    const header = (name: string) => request.headers.get(name) ?? undefined;
    const why = pagePath(request.method, new URL(request.url).pathname) ? foreignHost(header) : foreignRequest(header, policy);
    return why ? forbidden(why) : handler(request, env);
  };
}
