import { Hono, type Context } from 'hono';
import { foreignRequest, type LoopbackPolicy } from './loopback.js';
import type { executeApiSigner } from './sigv4.js';

export type ProxyAuth = { kind: 'sigv4'; signer: ReturnType<typeof executeApiSigner> } | { kind: 'token'; token: string };

export interface ApiProxyOptions {
  /** The deployed HTTP API's base URL (its `$default` stage, or a custom domain with a base path). */
  apiUrl: URL;
  auth: ProxyAuth;
  fetch?: typeof fetch;
  /** This session's secret and the cookie carrying it (startInspectServer makes one per run). */
  session?: LoopbackPolicy['session'];
}

/** What the page may send on: a resolution's result, a start request. Far below API Gateway's 10 MB. */
const MAX_BODY_BYTES = 1024 * 1024;

type Refusal = { status: 403 | 413 | 502; code: string; message: string };
const refuse = (c: Context, r: Refusal) => c.json({ error: { code: r.code, message: r.message } }, r.status);

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
    // Phase 1: only the inspector's own page (loopback Host, same Origin, its header, this
    // session's cookie: see loopback.ts), only the API's methods, a bounded body. Such a request
    // must never be signed with the caller's credentials.
    const why = foreignRequest((name) => c.req.header(name), { inspectorHeader: true, ...(options.session ? { session: options.session } : {}) });
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
  proxy.get('/run-counts', forward);
  // The inspector's attachment links read uploads; it never uploads.
  proxy.get('/attachments/*', forward);
  return proxy;
}
