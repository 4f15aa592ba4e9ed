// The local server's SSE responses stop by themselves: when the server is closed (as the local
// stack's stop() closes it) an open stream's reads end, so nothing holds the process open.
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { describe, expect, it } from 'vitest';
import { createApiApp } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import type { RunService } from '../../../lib/api/service.js';
import { SystemClock } from '../../../lib/support/system-clock.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { createEngine } from '../../../lib/engine/engine.js';

describe('SSE on the local server', () => {
  it('an open stream of a run still going ends when the server closes', async () => {
    const t = scriptedWorld({ tools: [], script: [{ text: 'never reached' }] });
    await startRun(t.worker.deps, { tenant: 'local', runId: 'open', agent: 'agent', input: 'hi' });
    // The same storage on a real clock (the long poll sleeps for real here); no worker runs the run.
    const deps = createEngine({ ...t.worker.deps, clock: new SystemClock() });
    const inner = engineRunService(deps, { streamPollMs: 20 });
    const signals: AbortSignal[] = [];
    let calls = 0;
    const service: RunService = {
      ...inner,
      stream: (caller, runId, query, signal) => {
        calls++;
        if (signal) signals.push(signal);
        return inner.stream(caller, runId, query, signal);
      },
    };
    const app = createApiApp({ service, caller: () => ({ tenant: 'local', principal: 'p' }), sse: true });
    const server = await new Promise<ReturnType<typeof serve>>((ok) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => ok(s));
    });
    const port = (server.address() as AddressInfo).port;
    const res = await fetch(`http://127.0.0.1:${port}/runs/open/stream`, { headers: { accept: 'text/event-stream' } });
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain('event: event');
    // Now waiting in a long poll for the next item.
    for (let i = 0; i < 100 && calls < 2; i++) await new Promise((r) => setTimeout(r, 20));
    expect(calls).toBe(2);
    (server as { closeAllConnections?: () => void }).closeAllConnections?.();
    await new Promise((r) => server.close(r));
    await reader.read().catch(() => undefined);
    for (let i = 0; i < 250 && !signals.at(-1)!.aborted; i++) await new Promise((r) => setTimeout(r, 20));
    expect(signals.at(-1)!.aborted).toBe(true);
    const after = calls;
    await new Promise((r) => setTimeout(r, 200));
    expect(calls).toBe(after);
  });
});
