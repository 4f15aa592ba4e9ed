// `logbook inspect`: the inspector on 127.0.0.1 forwarding the page's API calls to a "deployed"
// API (the real Hono app on the memory engine, behind a gate that verifies SigV4 the way API
// Gateway's IAM authorizer does, or a bearer token): the tenant comes from the credentials, a
// request not from the inspector's own page is never signed, and a closed tab stops a long poll.
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectCommand } from '../../../dev/cli/inspect-command.js';
import type { Output } from '../../../dev/cli/output.js';
import { startInspectServer, type InspectServer } from '../../../dev/ui/inspect-server.js';
import { executeApiSigner, type AwsCredentials } from '../../../dev/ui/sigv4.js';
import { MemoryBlobStore, MemoryStepQueue, MemoryStore } from '../../../lib/adapters/memory/index.js';
import { CryptoIds } from '../../../lib/adapters/system/crypto-ids.js';
import { SystemClock } from '../../../lib/support/system-clock.js';
import { createApiApp } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import { AgentRegistry } from '../../../lib/authoring/registry.js';
import { createEngine } from '../../../lib/engine/engine.js';
import { StaticModelResolver } from '../../../lib/models/scripted-model.js';
import { SUPPORT_MODEL_ID, supportAgent, supportModel } from '../../../examples/support-agent/agent.js';
import { MemoryLedger } from '../../../examples/support-agent/ledger.js';
import { SupportServices } from '../../../examples/support-agent/services.js';

const REGION = 'eu-west-1';
const KEYS: Record<string, { secret: string; tenant: string }> = {
  AKIDACME: { secret: 'acme-secret', tenant: 'acme' },
  AKIDGLOBEX: { secret: 'globex-secret', tenant: 'globex' },
};
const TOKENS: Record<string, string> = { 'token-of-acme': 'acme' };
const creds = (id: string): AwsCredentials => ({ accessKeyId: id, secretAccessKey: KEYS[id]?.secret ?? '', sessionToken: `session-${id}` });

/** API Gateway's IAM check, redone: recompute the signature over the headers it says it signed. */
async function verifySigV4(req: Request, body: Uint8Array): Promise<string | undefined> {
  const auth = req.headers.get('authorization') ?? '';
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m) return undefined;
  const [, keyId = '', , region, service, signedHeaders = '', signature] = m;
  const key = KEYS[keyId];
  if (!key || region !== REGION || service !== 'execute-api') return undefined;
  const url = new URL(req.url);
  const headers: Record<string, string> = {};
  for (const name of signedHeaders.split(';')) if (name !== 'x-amz-date' && name !== 'authorization') headers[name] = req.headers.get(name) ?? '';
  const amzDate = req.headers.get('x-amz-date') ?? '';
  const signingDate = new Date(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
  const query: Record<string, string> = {};
  for (const [k, v] of url.searchParams) query[k] = v;
  const signer = new SignatureV4({ service: 'execute-api', region: REGION, credentials: creds(keyId), sha256: Sha256 });
  const again = await signer.sign(
    { method: req.method, protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: url.pathname, query, headers, ...(body.byteLength ? { body } : {}) },
    { signingDate },
  );
  return again.headers.authorization?.endsWith(`Signature=${signature}`) ? key.tenant : undefined;
}

/** A POST with exactly these headers (fetch would replace Host). */
function rawPost(url: string, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { host: new URL(url).host, ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A GET with exactly these headers (fetch would replace Host). */
function rawGet(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', headers: { host: new URL(url).host, ...headers } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

function capture(): Output & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => stdout.push(t), err: (t) => stderr.push(t), tty: false };
}

describe('logbook inspect', () => {
  let upstream: ReturnType<typeof serve>;
  let apiUrl: URL;
  let store: MemoryStore;
  const seen: { path: string; tenant?: string }[] = [];
  const servers: InspectServer[] = [];

  beforeAll(async () => {
    store = new MemoryStore();
    const deps = createEngine({
      log: store,
      heads: store,
      inbox: store,
      blobs: new MemoryBlobStore(),
      queue: new MemoryStepQueue(),
      models: new StaticModelResolver({ [SUPPORT_MODEL_ID]: supportModel() }),
      registry: new AgentRegistry().register(supportAgent(new SupportServices(new MemoryLedger()))),
      clock: new SystemClock(),
      ids: new CryptoIds(),
    });
    const api = createApiApp({
      service: engineRunService(deps),
      caller: (c) => {
        const tenant = c.req.header('x-verified-tenant');
        return tenant ? { tenant, principal: `user-of-${tenant}` } : undefined;
      },
    });
    // The "deployed" API: its authorizer, then the app; the base path is a stage, as with a custom domain.
    const gate = new Hono();
    gate.all('/prod/*', async (c) => {
      const body = new Uint8Array(await c.req.arrayBuffer());
      const bearer = /^Bearer (.+)$/.exec(c.req.header('authorization') ?? '')?.[1];
      const tenant = bearer ? TOKENS[bearer] : await verifySigV4(c.req.raw, body);
      const url = new URL(c.req.url);
      seen.push({ path: `${url.pathname}${url.search}`, ...(tenant ? { tenant } : {}) });
      if (!tenant) return c.json({ message: 'Forbidden' }, 403);
      const headers = new Headers(c.req.raw.headers);
      headers.set('x-verified-tenant', tenant);
      url.pathname = url.pathname.slice('/prod'.length);
      return api.fetch(new Request(url, { method: c.req.method, headers, ...(body.byteLength ? { body } : {}), signal: c.req.raw.signal }));
    });
    upstream = await new Promise((ok) => {
      const s = serve({ fetch: gate.fetch, port: 0, hostname: '127.0.0.1' }, () => ok(s));
    });
    apiUrl = new URL(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}/prod/`);
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    (upstream as { closeAllConnections?: () => void }).closeAllConnections?.();
    await new Promise((r) => upstream.close(r));
  });

  /** Open the printed URL as a browser would: the session cookie it sets, as a Cookie header. */
  const openSession = async (url: string) => {
    const opened = await fetch(url, { redirect: 'manual' });
    expect(opened.status).toBe(303);
    expect(opened.headers.get('location')).toBe('/ui/');
    const setCookie = opened.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/; HttpOnly; SameSite=Strict$/);
    return setCookie.split(';')[0] ?? '';
  };
  const cookies = new Map<string, string>();
  const inspector = async (auth: Parameters<typeof startInspectServer>[0]['auth']) => {
    const server = await startInspectServer({ apiUrl, auth, port: 0 });
    servers.push(server);
    const base = `http://127.0.0.1:${server.port}`;
    cookies.set(base, await openSession(server.url));
    return base;
  };
  /** The headers the inspector's page sends: its marker header, and the session cookie its browser holds. */
  const page = (base: string) => ({ 'x-logbook-inspector': '1', cookie: cookies.get(base) ?? '' });
  const startBody = (runId: string) => JSON.stringify({ agent: 'support', input: 'refund please', runId });

  it('serves the same UI and forwards the API signed with SigV4: the tenant is the caller’s', async () => {
    const acme = await inspector({ kind: 'sigv4', signer: executeApiSigner(REGION, async () => creds('AKIDACME')) });
    const ui = await fetch(`${acme}/ui/`);
    expect(ui.status).toBe(200);
    expect(ui.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await (await fetch(`${acme}/ui/assets/main.js`)).text()).toContain('runsPage');

    const created = await fetch(`${acme}/runs`, { method: 'POST', headers: { ...page(acme), 'content-type': 'application/json' }, body: startBody('insp-1') });
    expect(created.status).toBe(201);
    const list = (await (await fetch(`${acme}/runs?limit=5`, { headers: page(acme) })).json()) as { runs: { runId: string }[] };
    expect(list.runs.map((r) => r.runId)).toEqual(['insp-1']);
    const events = await fetch(`${acme}/runs/insp-1/events?after=0&limit=10`, { headers: page(acme) });
    expect(events.status).toBe(200);
    expect(seen.filter((s) => s.tenant === 'acme').map((s) => s.path)).toContain('/prod/runs/insp-1/events?after=0&limit=10');

    // Another tenant's run is a 404 through the inspector as anywhere else.
    const globex = await inspector({ kind: 'sigv4', signer: executeApiSigner(REGION, async () => creds('AKIDGLOBEX')) });
    const other = await fetch(`${globex}/runs/insp-1`, { headers: page(globex) });
    expect(other.status).toBe(404);
    expect(await other.text()).not.toContain('refund please');
    // The gate really checks signatures: the right key id with a wrong secret is refused.
    const forged = await inspector({ kind: 'sigv4', signer: executeApiSigner(REGION, async () => ({ accessKeyId: 'AKIDACME', secretAccessKey: 'guess' })) });
    expect((await fetch(`${forged}/runs/insp-1`, { headers: page(forged) })).status).toBe(403);
    // A validation error comes back as the API said it.
    const bad = await fetch(`${acme}/runs/insp-1/events?waitSeconds=99`, { headers: page(acme) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { issues: { path: string }[] } }).error.issues[0]?.path).toBe('query.waitSeconds');
  });

  it('forwards with a bearer token for a JWT authorizer', async () => {
    const acme = await inspector({ kind: 'token', token: 'token-of-acme' });
    expect((await fetch(`${acme}/runs/insp-1`, { headers: page(acme) })).status).toBe(200);
    const wrong = await inspector({ kind: 'token', token: 'stolen' });
    expect((await fetch(`${wrong}/runs/insp-1`, { headers: page(wrong) })).status).toBe(403);
  });

  it('never signs a request that did not come from its own page', async () => {
    const acme = await inspector({ kind: 'sigv4', signer: executeApiSigner(REGION, async () => creds('AKIDACME')) });
    const before = seen.length;
    const attempts: Record<string, string>[] = [
      {},
      // DNS rebinding: evil.example resolved to 127.0.0.1, so the browser calls it same-origin.
      { ...page(acme), host: `evil.example:${new URL(acme).port}` },
      { ...page(acme), origin: 'https://evil.example' },
      { ...page(acme), 'sec-fetch-site': 'cross-site' },
      // The page's header but not this session's cookie: another program on this machine, or a
      // page that learnt the port but never saw the printed URL.
      { 'x-logbook-inspector': '1' },
      { 'x-logbook-inspector': '1', cookie: `${cookies.get(acme)?.split('=')[0]}=guessed` },
    ];
    for (const headers of attempts) {
      const status = await rawPost(`${acme}/runs/insp-1/cancel`, { ...headers, 'content-type': 'application/json' }, '{}');
      expect(status, JSON.stringify(headers)).toBe(403);
    }
    expect((await fetch(`${acme}/admin`, { headers: page(acme) })).status).toBe(404);
    expect(seen.length).toBe(before);
  });

  it('sets the session cookie only for this session’s URL, and serves the page to anyone on loopback', async () => {
    const acme = await inspector({ kind: 'token', token: 'token-of-acme' });
    const wrong = await fetch(`${acme}/ui/?session=guessed`, { redirect: 'manual' });
    expect(wrong.status).toBe(403);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    // The page holds no data: a link from anywhere may open it (its API calls need the cookie).
    expect((await fetch(`${acme}/ui/`, { headers: { 'sec-fetch-site': 'cross-site' } })).status).toBe(200);
    const rebound = await rawGet(`${acme}/ui/`, { host: 'evil.example' });
    expect(rebound).toBe(403);
  });

  it('takes a bearer token from LOGBOOK_TOKEN or stdin, never from the command line', async () => {
    // (until: resolved, so a command that wrongly accepted --token stops at once instead of serving)
    await expect(inspectCommand(['--api', apiUrl.href, '--port', '0', '--token', 'token-of-acme'], capture(), { until: Promise.resolve() })).rejects.toThrow(/--token is refused.*ps.*LOGBOOK_TOKEN.*--token-stdin/);
    await expect(inspectCommand(['--api', apiUrl.href, '--token-stdin'], capture(), { readStdin: async () => '  \n' })).rejects.toThrow(/read no token/);
    for (const how of ['stdin', 'env'] as const) {
      let stop!: () => void;
      const io = capture();
      const saved = process.env.LOGBOOK_TOKEN;
      if (how === 'env') process.env.LOGBOOK_TOKEN = 'token-of-acme';
      else delete process.env.LOGBOOK_TOKEN;
      try {
        const done = inspectCommand(['--api', apiUrl.href, '--port', '0', ...(how === 'stdin' ? ['--token-stdin'] : [])], io, {
          readStdin: async () => 'token-of-acme\n',
          // No AWS credentials: only the token can make the request below succeed.
          credentials: async () => {
            throw new Error('no credentials in this test');
          },
          until: new Promise<void>((r) => (stop = r)),
        });
        for (let i = 0; i < 50 && io.stdout.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
        const url = /Inspector: (\S+)/.exec(io.stdout[0] ?? '')?.[1] ?? '';
        const cookie = await openSession(url);
        const before = seen.length;
        expect((await fetch(new URL('/runs/insp-1', url), { headers: { 'x-logbook-inspector': '1', cookie } })).status, how).toBe(200);
        expect(seen.slice(before).map((s) => s.tenant)).toEqual(['acme']);
        stop();
        expect(await done).toBe(0);
      } finally {
        if (saved === undefined) delete process.env.LOGBOOK_TOKEN;
        else process.env.LOGBOOK_TOKEN = saved;
      }
    }
  });

  it('stops the upstream long poll when the page goes away', async () => {
    const acme = await inspector({ kind: 'sigv4', signer: executeApiSigner(REGION, async () => creds('AKIDACME')) });
    await fetch(`${acme}/runs`, { method: 'POST', headers: { ...page(acme), 'content-type': 'application/json' }, body: startBody('insp-2') });
    const abort = new AbortController();
    const pending = fetch(`${acme}/runs/insp-2/events?after=1&waitSeconds=20`, { headers: page(acme), signal: abort.signal }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 600));
    abort.abort();
    await pending;
    await new Promise((r) => setTimeout(r, 600));
    const reads = store.stats.requests;
    await new Promise((r) => setTimeout(r, 1_000));
    expect(store.stats.requests).toBe(reads);
  });

  it('checks its arguments and finds no credentials before it serves', async () => {
    const cases: [string[], RegExp][] = [
      [[], /--api URL is required/],
      [['--api', 'not a url'], /--api must be a URL/],
      [['--api', 'http://api.example.com/'], /https:\/\//],
      [['--api', 'https://api.example.com/'], /--region/],
      [['--api', 'https://x.execute-api.eu-west-1.amazonaws.com/', '--port', 'x'], /--port/],
    ];
    const env = { AWS_REGION: process.env.AWS_REGION, AWS_DEFAULT_REGION: process.env.AWS_DEFAULT_REGION };
    delete process.env.AWS_REGION;
    delete process.env.AWS_DEFAULT_REGION;
    try {
      for (const [argv, message] of cases) await expect(inspectCommand(argv, capture())).rejects.toThrow(message);
    } finally {
      Object.assign(process.env, Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)));
    }
    const io = capture();
    const code = await inspectCommand(['--api', 'https://x.execute-api.eu-west-1.amazonaws.com/'], io, {
      credentials: async () => {
        throw new Error('Could not load credentials from any providers');
      },
    });
    expect(code).toBe(1);
    expect(io.stderr.join('\n')).toMatch(/no AWS credentials found .*--token/);
  });

  it('runs as a command until stopped, printing where the inspector is', async () => {
    let stop!: () => void;
    const io = capture();
    const done = inspectCommand(['--api', apiUrl.href, '--region', REGION, '--port', '0'], io, {
      credentials: async () => creds('AKIDACME'),
      until: new Promise<void>((r) => (stop = r)),
    });
    for (let i = 0; i < 50 && io.stdout.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    const url = /Inspector: (\S+)/.exec(io.stdout[0] ?? '')?.[1] ?? '';
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ui\/\?session=[\w-]{43}$/);
    const cookie = await openSession(url);
    expect((await fetch(new URL('/runs/insp-1', url), { headers: { 'x-logbook-inspector': '1', cookie } })).status).toBe(200);
    expect((await fetch(new URL('/runs/insp-1', url), { headers: { 'x-logbook-inspector': '1' } })).status).toBe(403);
    stop();
    expect(await done).toBe(0);
    await expect(fetch(url)).rejects.toThrow();
  });
});
