import { Hono, type Context } from 'hono';
import type { executeApiSigner } from './sigv4.js';

export type ProxyAuth = { kind: 'sigv4'; signer: ReturnType<typeof executeApiSigner> } | { kind: 'token'; token: string };

export interface ApiProxyOptions {
  /** The deployed HTTP API's base URL (its `$default` stage, or a custom domain with a base path). */
  apiUrl: URL;
  auth: ProxyAuth;
  fetch?: typeof fetch;
}

/** What the page may send on: a resolution's result, a start request. Far below API Gateway's 10 MB. */
const MAX_BODY_BYTES = 1024 * 1024;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

type Refusal = { status: 403 | 413 | 502; code: string; message: string };
const refuse = (c: Context, r: Refusal) => c.json({ error: { code: r.code, message: r.message } }, r.status);

/**
 * A request that did not come from the inspector's own page, seen from this loopback server:
 * another Host (DNS rebinding), another Origin or a cross-site fetch, or no inspector header (a
 * cross-site page cannot add one without a CORS preflight, which nothing here answers). Such a
 * request must never be signed with the caller's credentials.
 */
function foreign(c: Context): string | undefined {
  const host = c.req.header('host') ?? '';
  const hostname = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : (host.split(':')[0] ?? '');
  if (!LOOPBACK.has(hostname)) return `Host ${host || '(none)'} is not this loopback server`;
  const origin = c.req.header('origin');
  if (origin !== undefined && origin !== `http://${host}`) return `Origin ${origin} is not this server`;
  const site = c.req.header('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return `a ${site} request`;
  if (c.req.header('x-logbook-inspector') !== '1') return 'no x-logbook-inspector header (only the inspector page calls the API through here)';
  return undefined;
}

/**
 * `/runs...` of the deployed API, forwarded from the inspector's page and signed on the way: SigV4
 * with the caller's AWS credentials (IAM authorizer) or their bearer token (JWT authorizer). Only
 * the API's own paths and a body's content type pass; cookies, the browser's headers and the
 * upstream's headers do not. A closed tab aborts the upstream request (a long poll stops).
 */
export function createApiProxy(options: ApiProxyOptions): Hono {
  const upstreamFetch = options.fetch ?? fetch;
  const base = options.apiUrl.pathname.replace(/\/+$/, '');
  const proxy = new Hono();

  const forward = async (c: Context) => {
    // Phase 1: only the inspector's own page, only the API's methods, a bounded body.
    const why = foreign(c);
    if (why) return refuse(c, { status: 403, code: 'forbidden', message: `refused: ${why}` });
    const method = c.req.method;
    let body: Uint8Array | undefined;
    if (method === 'POST') {
      body = new Uint8Array(await c.req.arrayBuffer());
      if (body.byteLength > MAX_BODY_BYTES) return refuse(c, { status: 413, code: 'body_too_large', message: `bodies are at most ${MAX_BODY_BYTES} bytes` });
    }

    // Phase 2: the upstream request, signed.
    const incoming = new URL(c.req.url);
    const url = new URL(options.apiUrl.origin);
    url.pathname = `${base}${incoming.pathname}`;
    url.search = incoming.search;
    const headers: Record<string, string> = { accept: 'application/json' };
    const type = c.req.header('content-type');
    if (body && type) headers['content-type'] = type;
    try {
      if (options.auth.kind === 'token') headers.authorization = `Bearer ${options.auth.token}`;
      else Object.assign(headers, await options.auth.signer.sign({ method, url, headers, ...(body ? { body } : {}) }));
    } catch (error) {
      return refuse(c, { status: 502, code: 'credentials_unavailable', message: `no AWS credentials to sign with: ${(error as Error).message}` });
    }
    // fetch sets Host from the URL (the value that was signed).
    delete headers.host;

    // Phase 3: send it; pass back the status, the content type and the body, nothing else.
    let upstream: Response;
    try {
      upstream = await upstreamFetch(url, { method, headers, ...(body ? { body } : {}), signal: c.req.raw.signal, redirect: 'manual' });
    } catch (error) {
      if (c.req.raw.signal.aborted) return refuse(c, { status: 502, code: 'client_gone', message: 'the page went away' });
      return refuse(c, { status: 502, code: 'upstream_unreachable', message: `the API at ${options.apiUrl.origin} did not answer (${(error as Error).message})` });
    }
    const out = new Headers({ 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
    const upstreamType = upstream.headers.get('content-type');
    if (upstreamType) out.set('content-type', upstreamType);
    return new Response(await upstream.arrayBuffer(), { status: upstream.status, headers: out });
  };

  for (const path of ['/runs', '/runs/*']) {
    proxy.get(path, forward);
    proxy.post(path, forward);
  }
  return proxy;
}
