import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { FAVICON_SVG, clientModule } from './assets.js';
import { shellHtml } from './shell.js';
import { INSPECTOR_CSS } from './styles.js';

/**
 * The page may load scripts, styles, images and data from its own origin only; nothing inline
 * (no inline script, style or handler runs even if markup got in), no framing, and with Trusted
 * Types required, the DOM refuses any string assigned to an HTML sink such as innerHTML.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

const securityHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  c.header('content-security-policy', CONTENT_SECURITY_POLICY);
  c.header('x-content-type-options', 'nosniff');
  c.header('x-frame-options', 'DENY');
  c.header('referrer-policy', 'no-referrer');
  c.header('cross-origin-opener-policy', 'same-origin');
  c.header('cross-origin-resource-policy', 'same-origin');
};

export interface InspectorOptions {
  /** Which API this inspector shows, in its header (e.g. "local stack", or the deployed URL). */
  label?: string;
}

/**
 * The web inspector, mounted at /ui: an HTML shell, its stylesheet and its ES modules. It holds no
 * data and no credentials; the page reads everything through the API on the same origin (the local
 * stack's API, or the `logbook inspect` proxy), so tenant isolation is the API's. Never part of a
 * Lambda bundle: the deployed API does not serve /ui.
 */
export function createInspectorApp(options: InspectorOptions = {}): Hono {
  const ui = new Hono();
  ui.use('*', securityHeaders);
  const page = (c: Context) => c.html(shellHtml(options.label ?? ''), 200, { 'cache-control': 'no-store' });

  ui.get('/assets/inspector.css', (c) => c.body(INSPECTOR_CSS, 200, { 'content-type': 'text/css; charset=utf-8' }));
  ui.get('/assets/favicon.svg', (c) => c.body(FAVICON_SVG, 200, { 'content-type': 'image/svg+xml' }));
  ui.get('/assets/:file', async (c) => {
    const file = c.req.param('file');
    const code = file.endsWith('.js') ? await clientModule(file.slice(0, -3)) : undefined;
    if (code === undefined) return c.text('not found', 404);
    return c.body(code, 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache' });
  });
  ui.get('/', (c) => (c.req.path.endsWith('/') ? page(c) : c.redirect(`${c.req.path}/`, 308)));
  ui.get('/runs/:runId', page);
  ui.get('*', page);
  return ui;
}
