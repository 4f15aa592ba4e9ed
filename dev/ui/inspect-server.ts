import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createApiProxy, type ProxyAuth } from './api-proxy.js';
import { createInspectorApp } from './inspector-app.js';

export interface InspectServerOptions {
  apiUrl: URL;
  auth: ProxyAuth;
  /** On 127.0.0.1; 0 picks a free one. */
  port: number;
  fetch?: typeof fetch;
}

export interface InspectServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * `logbook inspect`: the inspector for a deployed stack, on this machine only. It serves the same
 * page as the local stack at /ui and forwards the page's API calls to the deployed API, signed
 * with the caller's own credentials, so the deployed stack needs nothing public.
 */
export async function startInspectServer(options: InspectServerOptions): Promise<InspectServer> {
  const app = new Hono();
  const how = options.auth.kind === 'token' ? 'bearer token' : 'your AWS credentials';
  app.route('/ui', createInspectorApp({ label: `${options.apiUrl.href} (signed with ${how})` }));
  app.route('/', createApiProxy({ apiUrl: options.apiUrl, auth: options.auth, ...(options.fetch ? { fetch: options.fetch } : {}) }));
  app.get('/', (c) => c.redirect('/ui/'));
  app.notFound((c) => c.json({ error: { code: 'not_found', message: `no route ${c.req.method} ${c.req.path} here: the inspector is at /ui/` } }, 404));

  const server = await new Promise<ReturnType<typeof serve>>((ok, fail) => {
    const s = serve({ fetch: app.fetch, port: options.port, hostname: '127.0.0.1' });
    s.once('listening', () => ok(s));
    s.once('error', fail);
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/ui/`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
