import { randomBytes } from 'node:crypto';
import { Hono } from 'hono';
import { createApiProxy, type ProxyAuth } from './api-proxy.js';
import { createInspectorApp } from './inspector-app.js';
import { loopbackOnly, sameSecret, serveLoopback } from './loopback.js';

export interface InspectServerOptions {
  apiUrl: URL;
  auth: ProxyAuth;
  /** On 127.0.0.1; 0 picks a free one. */
  port: number;
  fetch?: typeof fetch;
}

export interface InspectServer {
  /** The URL to open: it carries this session's secret once, which the page trades for a cookie. */
  url: string;
  port: number;
  /** The session cookie's name and value (what a browser holds after opening `url`). */
  session: { cookie: string; secret: string };
  close(): Promise<void>;
}

/**
 * `logbook inspect`: the inspector for a deployed stack, on this machine only. It serves the same
 * page as the local stack at /ui and forwards the page's API calls to the deployed API, signed
 * with the caller's own credentials, so the deployed stack needs nothing public.
 *
 * Every API call must carry this run's session secret, in an HttpOnly SameSite=Strict cookie the
 * server sets when the printed URL (`/ui/?session=SECRET`) is opened: another program or page on
 * this machine that can reach the port, but did not see the URL, is refused 403 before anything
 * is signed. The cookie is named after the port, so two inspectors do not overwrite each other's.
 */
export async function startInspectServer(options: InspectServerOptions): Promise<InspectServer> {
  const secret = randomBytes(32).toString('base64url');
  const session = { cookie: '', secret };
  const app = new Hono();
  const how = options.auth.kind === 'token' ? 'bearer token' : 'your AWS credentials';
  // Opening the printed URL: trade the secret in the query for the cookie, and drop it from the
  // address bar (and the history) with a redirect.
  app.use('/ui/*', async (c, next) => {
    const offered = c.req.query('session');
    if (offered === undefined) return next();
    if (!sameSecret(offered, secret)) return c.json({ error: { code: 'forbidden', message: 'refused: not this session’s URL (logbook inspect prints it)' } }, 403);
    c.header('set-cookie', `${session.cookie}=${secret}; Path=/; HttpOnly; SameSite=Strict`);
    c.header('cache-control', 'no-store');
    return c.redirect(c.req.path, 303);
  });
  app.route('/ui', createInspectorApp({ label: `${options.apiUrl.href} (signed with ${how})` }));
  app.route('/', createApiProxy({ apiUrl: options.apiUrl, auth: options.auth, session, ...(options.fetch ? { fetch: options.fetch } : {}) }));
  app.get('/', (c) => c.redirect('/ui/'));
  app.notFound((c) => c.json({ error: { code: 'not_found', message: `no route ${c.req.method} ${c.req.path} here: the inspector is at /ui/` } }, 404));

  // The cookie is named after the port, known once bound (0 picks one). Until it is named no
  // cookie matches (an empty name never does), so nothing passes before then either.
  const server = await serveLoopback(loopbackOnly(app.fetch, { inspectorHeader: true, session }), options.port);
  session.cookie = `logbook_inspect_${server.port}`;
  return {
    url: `http://127.0.0.1:${server.port}/ui/?session=${secret}`,
    port: server.port,
    session,
    close: () => server.close(),
  };
}
