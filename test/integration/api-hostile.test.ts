// One regression test per 5xx (or silent corruption) that hostile input produced on the API
// before it was hardened, on the real DynamoDB adapter: each request below used to answer 500.
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaContext } from '../../dev/local/lambda-context.js';
import { apiHandlerFor } from '../../lib/lambda/api-handler.js';
import type { Runtime } from '../../lib/lambda/wiring.js';
import { endpointsFor } from '../setup/emulator-context.js';
import { apiWorld, type ApiWorld } from './api-world.js';

const target = endpointsFor('dynamodb-local') ? 'dynamodb-local' : 'dynalite';
const json = { 'content-type': 'application/json' };
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe.runIf(endpointsFor(target))(`hostile requests to the API on ${target}`, () => {
  let world: ApiWorld;
  let parked: { callId: string };

  const answer = async (path: string, init: RequestInit & { caller?: number } = {}) => {
    const res = await world.request(path, init);
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as { error?: { code: string; issues?: { path: string }[] } } & Record<string, unknown> };
  };
  const start = (body: string) => answer('/runs', { method: 'POST', headers: json, body });

  beforeAll(async () => {
    world = await apiWorld(target, 'hostile');
    for (const [caller, runId] of [[0, 'h-1'], [0, 'h-2'], [1, 'g-1'], [1, 'g-2']] as const) {
      await answer('/runs', { method: 'POST', headers: json, body: JSON.stringify({ agent: 'support', runId, input: 'x' }), caller });
    }
    parked = await world.parkRun('h-parked');
  });

  afterAll(async () => {
    expect(world?.errors).toEqual([]);
    await world?.dispose();
  });

  it('refuses a forged or stale cursor with a 400 naming query.cursor', async () => {
    const real = (await answer('/runs?limit=1')).body.cursor as string;
    const forged = [
      b64({ a: 1 }),
      b64({}),
      b64({ pk: 'RUN#globex#g-1', sk: 'HEAD', tenantPk: 'TENANT#globex', tenantSk: '8203887898736#g-1' }),
      b64({ pk: 1, sk: 2, tenantPk: 3, tenantSk: 4 }),
      b64({ v: 1, s: null, c: 1.5, r: 'h-1' }),
      'A'.repeat(600),
      '%%%',
      `${real}x`,
    ];
    for (const cursor of forged) {
      const res = await answer(`/runs?cursor=${encodeURIComponent(cursor)}`);
      expect(res.status, cursor).toBe(400);
      expect(res.body.error?.issues?.[0]?.path).toBe('query.cursor');
    }
    // A cursor from the unfiltered listing does not page a filtered one.
    expect((await answer(`/runs?status=running&cursor=${real}`)).status).toBe(400);
  });

  it("pages through the caller's own runs only, whatever tenant's cursor it is handed", async () => {
    const theirs = (await answer('/runs?limit=1', { caller: 1 })).body.cursor as string;
    const res = await answer(`/runs?cursor=${theirs}`);
    expect(res.status).toBe(200);
    const runs = res.body.runs as { runId: string }[];
    expect(runs.length).toBeGreaterThan(0);
    expect(runs.every((r) => r.runId.startsWith('h-'))).toBe(true);
  });

  it('refuses JSON nested too deep (it overflowed the stack) with a 400, and starts nothing', async () => {
    const before = (await answer('/runs?limit=100')).body.runs as unknown[];
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
    const res = await start(`{"agent":"support","input":[${deep(5000)}]}`);
    expect(res.status).toBe(400);
    expect(res.body.error?.issues?.[0]?.path).toMatch(/^body\.input(\.0)+$/);
    const resolve = await answer('/runs/h-parked/resolve', { method: 'POST', headers: json, body: `{"callId":"${parked.callId}","outcome":"succeeded","result":${deep(3000)}}` });
    expect(resolve.status).toBe(400);
    expect((await answer('/runs?limit=100')).body.runs).toHaveLength(before.length);
  });

  it('refuses a __proto__ key (DynamoDB read it back as a prototype: a corrupt run_started) with a 400', async () => {
    const res = await start('{"agent":"support","runId":"h-proto","input":{"__proto__":{"x":1}}}');
    expect(res.status).toBe(400);
    expect(res.body.error?.issues?.[0]?.path).toBe('body.input.__proto__');
    expect((await answer('/runs/h-proto')).status).toBe(404);
  });

  it('refuses a body over the limit with a 413, with or without a content-length', async () => {
    const big = JSON.stringify({ agent: 'support', input: 'y'.repeat(1_100_000) });
    expect(await start(big)).toMatchObject({ status: 413, body: { error: { code: 'payload_too_large' } } });
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < 12; i++) c.enqueue(new TextEncoder().encode('y'.repeat(100_000)));
        c.close();
      },
    });
    const streamed = await answer('/runs', { method: 'POST', headers: json, body: stream, duplex: 'half' } as RequestInit);
    expect(streamed).toMatchObject({ status: 413, body: { error: { code: 'payload_too_large' } } });
  });

  it('refuses a resolution whose result would not fit an item (it was a 500 from DynamoDB) with a 413', async () => {
    const res = await answer('/runs/h-parked/resolve', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ callId: parked.callId, outcome: 'succeeded', result: { note: 'z'.repeat(500_000) } }),
    });
    expect(res).toMatchObject({ status: 413, body: { error: { code: 'item_too_large' } } });
  });

  it('refuses a body that is not UTF-8 instead of decoding it lossily', async () => {
    const res = await answer('/runs', { method: 'POST', headers: json, body: Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]) });
    expect(res).toMatchObject({ status: 400, body: { error: { code: 'invalid_request' } } });
  });

  it('answers unknown routes 404, other methods 405 with Allow, other media types 415, all as JSON with a code', async () => {
    expect(await answer('/nope')).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
    const del = await answer('/runs', { method: 'DELETE' });
    expect(del).toMatchObject({ status: 405, body: { error: { code: 'method_not_allowed' } } });
    expect(del.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'HEAD', 'POST']);
    const put = await answer('/runs/h-1/cancel', { method: 'PUT' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('POST');
    expect((await answer('/runs/h-1', { method: 'OPTIONS' })).status).toBe(405);
    const text = await answer('/runs', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' });
    expect(text).toMatchObject({ status: 415, body: { error: { code: 'unsupported_media_type' } } });
  });

  it('answers 400 when the Lambda adapter cannot even build the request (a GET with a body)', async () => {
    const runtime = { engine: world.deps, env: { LOGBOOK_TENANT_CLAIM: 'sub' }, logger: { info() {}, warn() {}, error() {} } } as unknown as Runtime;
    const handler = apiHandlerFor(async () => runtime);
    const event = {
      version: '2.0',
      routeKey: '$default',
      rawPath: '/runs',
      rawQueryString: '',
      headers: { host: 'api.example.com', 'content-type': 'application/json' },
      body: '{"x":1}',
      isBase64Encoded: false,
      requestContext: { accountId: '1', apiId: 'a', domainName: 'api.example.com', domainPrefix: 'api', http: { method: 'GET', path: '/runs', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 't' }, requestId: 'r', routeKey: '$default', stage: '$default', time: '', timeEpoch: 0, authorizer: { iam: { accountId: '111111111111' } } },
    } as unknown as APIGatewayProxyEventV2;
    const res = (await handler(event, lambdaContext('api', 30_000) as Context)) as { statusCode: number; body: string };
    expect(res.statusCode).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'invalid_request' } });
  });
});
