import { byId, fill, h } from './dom.js';
import { runPage } from './run-page.js';
import { runsPage } from './runs-page.js';

/** Two pages, by path: /ui/ (runs) and /ui/runs/<runId> (one run). Plain links between them. */
function route(): Promise<void> {
  const root = byId('app');
  const match = /^\/ui\/runs\/([^/]+)\/?$/.exec(location.pathname);
  if (match?.[1]) return runPage(root, decodeURIComponent(match[1]));
  if (location.pathname === '/ui' || location.pathname === '/ui/') return runsPage(root);
  fill(root, h('h1', {}, 'Not found'), h('p', {}, h('a', { href: '/ui/' }, 'All runs')));
  return Promise.resolve();
}

route().catch((error: unknown) => {
  fill(byId('app'), h('p', { class: 'error', role: 'alert' }, `The inspector failed: ${error instanceof Error ? error.message : String(error)}`));
});
