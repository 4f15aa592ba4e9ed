// The local stack's HTTP server, as a web page and a keep-alive client see it: a page from another
// site (or a rebound DNS name) is refused before any route runs, the CLI and the inspector's own
// page are not, and a 413 closes its socket saying so, so the next request on it does not fail.
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogbookClient } from '../../dev/cli/api-client.js';
import { startLocalStack, type LocalStack } from '../../dev/local/stack.js';
import { SUPPORT_AGENTS_MODULE } from '../../examples/support-agent/demo/stack-env.js';
import { endpointsFor, uniquePrefix } from '../setup/emulator-context.js';

const endpoints = endpointsFor('dynalite') ?? endpointsFor('dynamodb-local');
let stack: LocalStack;
let workDir: string;

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  socket: Socket;
  body: string;
}

/** One request with exactly these headers (fetch would set Host and Origin itself). */
function send(method: string, path: string, options: { headers?: Record<string, string>; body?: string | Buffer; agent?: Agent } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, stack.apiUrl);
    const req = request(
      url,
      { method, agent: options.agent ?? false, headers: { host: url.host, ...options.headers, ...(options.body !== undefined ? { 'content-length': String(Buffer.byteLength(options.body)) } : {}) } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, socket: req.socket as Socket, body }));
      },
    );
    req.on('error', reject);
    // A client still writing a body the server refused may see EPIPE after its answer: not a failure here.
    req.end(options.body);
  });
}

describe.skipIf(!endpoints)('the local stack’s HTTP server', () => {
  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'logbook-hygiene-'));
    stack = await startLocalStack({ port: 0, endpoints, prefix: uniquePrefix('hyg'), workDir, concurrency: 1, sweepEveryMs: 0, agentsModule: SUPPORT_AGENTS_MODULE, env: { SUPPORT_LEDGER_FILE: join(workDir, 'ledger.jsonl') } });
  });
  afterAll(async () => {
    await stack?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('refuses another Host (DNS rebinding) and cross-site requests before any route runs; serves the CLI and its own page', async () => {
    const client = new LogbookClient(stack.apiUrl);
    const { runId } = await client.startRun({ agent: 'support', input: 'where is my order?', runId: 'hyg-1' });
    const port = new URL(stack.apiUrl).port;

    const rebound = await send('GET', `/runs/${runId}`, { headers: { host: `attacker.example:${port}` } });
    expect(rebound.status).toBe(403);
    expect(rebound.body).not.toContain(runId);
    expect(JSON.parse(rebound.body)).toMatchObject({ error: { code: 'forbidden' } });
    expect((await send('GET', '/runs', { headers: { host: 'attacker.example' } })).status).toBe(403);
    expect((await send('GET', '/ui/', { headers: { host: `attacker.example:${port}` } })).status).toBe(403);

    // A form or no-cors fetch from another site: no body, no content type, so no preflight.
    const crossSite: Record<string, string>[] = [{ origin: 'https://attacker.example' }, { origin: 'null' }, { 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' }];
    for (const headers of crossSite) {
      expect((await send('POST', `/runs/${runId}/cancel`, { headers })).status, JSON.stringify(headers)).toBe(403);
    }
    // None of them reached the run: its log holds no cancel request.
    const events = await client.events(runId, 0, 100);
    expect(events.events.filter((e) => String(e.type).includes('cancel'))).toEqual([]);

    // The inspector's own page (same origin) and the CLI (no Origin at all) get through.
    const own = await send('GET', `/runs/${runId}`, { headers: { origin: stack.apiUrl, 'sec-fetch-site': 'same-origin', 'x-logbook-inspector': '1' } });
    expect(own.status).toBe(200);
    expect((await send('GET', '/ui/', { headers: { 'sec-fetch-site': 'cross-site' } })).status).toBe(200);
    const cancelled = await send('POST', `/runs/${runId}/cancel`, { headers: { origin: stack.apiUrl } });
    expect(cancelled.status).toBe(202);
    expect((await client.cancel(runId, 'done with it')).inboxId).toBeTruthy();
  });

  it('after a 413 says Connection: close, so a keep-alive client’s next request goes out on a fresh socket', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      // Two plain requests share one socket: keep-alive works, so the check below means something.
      const a = await send('GET', '/runs?limit=1', { agent });
      const b = await send('GET', '/runs?limit=1', { agent });
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(b.socket).toBe(a.socket);

      for (const size of [2 * 1024 * 1024, 8 * 1024 * 1024]) {
        const big = await send('POST', '/runs', { agent, headers: { 'content-type': 'application/json' }, body: Buffer.alloc(size, 0x20) });
        expect(big.status).toBe(413);
        expect(big.headers.connection).toBe('close');
        // The very next request on this agent: before the fix, ECONNRESET or "socket hang up".
        const next = await send('GET', '/runs?limit=1', { agent });
        expect(next.status).toBe(200);
        expect(next.socket).not.toBe(big.socket);
      }
    } finally {
      agent.destroy();
    }
  });
});
