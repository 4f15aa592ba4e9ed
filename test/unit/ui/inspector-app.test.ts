// The inspector's server side: a fixed HTML shell, its own stylesheet and ES modules (no CDN), a
// strict CSP on everything, no file outside the client directory, and never on the deployed API.
import { describe, expect, it } from 'vitest';
import { createApiApp } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import { CONTENT_SECURITY_POLICY, createInspectorApp } from '../../../dev/ui/inspector-app.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';

describe('the inspector app', () => {
  const ui = createInspectorApp({ label: '<img src=x onerror=alert(1)> "local"' });

  it('serves the shell for its pages with a CSP that allows nothing inline and nothing foreign', async () => {
    for (const path of ['/', '/runs/r-1', '/runs/r-1/']) {
      const res = await ui.request(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      const html = await res.text();
      expect(html).toContain('<script type="module" src="/ui/assets/main.js"></script>');
      // The label is text, escaped; the shell has no inline script or style.
      expect(html).toContain('&lt;img src=x onerror=alert(1)&gt; &quot;local&quot;');
      expect(html).not.toMatch(/<script>|<style|style=|<img/);
    }
    for (const directive of ["default-src 'self'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "require-trusted-types-for 'script'"]) {
      expect(CONTENT_SECURITY_POLICY).toContain(directive);
    }
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe|https?:|\*/);
  });

  it('serves every module the page imports, as JavaScript from this server', async () => {
    const seen = new Set<string>();
    const queue = ['main'];
    while (queue.length > 0) {
      const name = queue.pop() as string;
      if (seen.has(name)) continue;
      seen.add(name);
      const res = await ui.request(`/assets/${name}.js`);
      expect(res.status, name).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      const code = await res.text();
      expect(code).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/);
      for (const m of code.matchAll(/from "\.\/([a-z-]+)\.js"/g)) queue.push(m[1] ?? '');
      expect(code).not.toMatch(/from "(?!\.\/)/);
    }
    expect([...seen].sort()).toEqual(expect.arrayContaining(['main', 'dom', 'api', 'run-page', 'runs-page', 'timeline', 'payload', 'attention', 'charts']));
    expect((await ui.request('/assets/inspector.css')).headers.get('content-type')).toMatch(/^text\/css/);
  });

  it('serves nothing else from the disk', async () => {
    for (const path of ['/assets/tsconfig.json', '/assets/..%2F..%2Fpackage.json.js', '/assets/nope.js', '/assets/Main.js', '/assets/types.d.ts']) {
      expect((await ui.request(path)).status, path).toBe(404);
    }
  });

  it('is not part of the deployed API: the API app alone answers 404 for /ui', async () => {
    const { worker } = scriptedWorld({ tools: [], script: [{ text: 'done' }] });
    const api = createApiApp({ service: engineRunService(worker.deps), caller: () => ({ tenant: 't', principal: 'p' }) });
    expect((await api.request('/ui/')).status).toBe(404);
    expect((await api.request('/ui/assets/main.js')).status).toBe(404);
  });
});
