import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { lambdaContext } from '../../../dev/local/lambda-context.js';
import { apiHandlerFor } from '../../../lib/lambda/api-handler.js';
import type { Runtime } from '../../../lib/lambda/wiring.js';
import { createApiApp } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import type { Caller } from '../../../lib/api/tenant.js';
import { sha256Hex } from '../../../lib/support/hash.js';
import { MAX_ATTACHMENT_BYTES } from '../../../lib/core/limits.js';
import { IMAGE_TOKENS_ESTIMATE } from '../../../lib/core/attachments.js';
import type { MemoryBlobStore } from '../../../lib/adapters/memory/memory-blob-store.js';
import { ScriptedModel } from '../../../lib/models/scripted-model.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { drain } from '../control/helpers.js';
import { docxBytes, jpegBytes, pdfBytes, pngBytes, textBytes } from './fixtures.js';

let t: ReturnType<typeof scriptedWorld>;
let model: ScriptedModel;

beforeEach(() => {
  model = new ScriptedModel([{ text: 'I see it' }, { text: 'second look' }]);
  t = scriptedWorld({ tools: [], script: [], model });
});

function app() {
  return createApiApp({
    service: engineRunService(t.worker.deps),
    caller: (c): Caller | undefined => ({ tenant: c.req.header('x-test-tenant') ?? 't', principal: 'alice@example.com' }),
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are inspected loosely
type Loose = Record<string, any>;

async function upload(bytes: Uint8Array, contentType: string | undefined, options: { tenant?: string; name?: string } = {}) {
  const query = options.name !== undefined ? `?name=${encodeURIComponent(options.name)}` : '';
  const res = await app().request(`/attachments${query}`, {
    method: 'POST',
    headers: { 'x-test-tenant': options.tenant ?? 't', ...(contentType ? { 'content-type': contentType } : {}) },
    body: bytes as Uint8Array<ArrayBuffer>,
  });
  return { status: res.status, body: (await res.json()) as Loose };
}

async function call(method: string, path: string, body?: unknown, tenant = 't') {
  const res = await app().request(path, {
    method,
    headers: { 'x-test-tenant': tenant, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Loose | undefined };
}

const blobs = () => t.storage.blobStore as MemoryBlobStore;
const paths = (res: { body?: Loose }) => ((res.body?.error?.issues ?? []) as { path: string }[]).map((i) => i.path);

async function logOf(runId: string) {
  return (await t.storage.log.read({ tenant: 't', runId }, { afterSeq: 0 })).events as { type: string }[];
}

describe('POST /attachments', () => {
  it('stores the bytes under the tenant by sha256 and answers the reference; the same upload again is the same reference', async () => {
    const png = pngBytes(100);
    const first = await upload(png, 'image/png', { name: 'broken mug.png' });
    expect(first).toEqual({ status: 201, body: { ref: { kind: 'blob', sha256: sha256Hex(png), mediaType: 'image/png', bytes: 100, name: 'broken mug.png' } } });
    const again = await upload(png, 'image/png', { name: 'broken mug.png' });
    expect(again.body).toEqual(first.body);
    expect(
      blobs()
        .keys()
        .filter((k) => k.startsWith('attachments/')),
    ).toEqual([`attachments/t/${sha256Hex(png)}`]);
    // A Content-Type with parameters is its media type.
    expect((await upload(textBytes(), 'text/csv; charset=utf-8')).body.ref.mediaType).toBe('text/csv');
    expect((await upload(pdfBytes(), 'application/pdf')).status).toBe(201);
    expect((await upload(docxBytes(), 'application/vnd.openxmlformats-officedocument.wordprocessingml.document')).status).toBe(201);
  });

  it('refuses a type off the allow-list with 415, and stores nothing', async () => {
    for (const type of ['image/svg+xml', 'application/json', 'application/zip', 'image/bmp']) {
      const res = await upload(textBytes('<svg/>'), type);
      expect(res.status, type).toBe(415);
      expect(res.body.error.code).toBe('unsupported_media_type');
      expect(res.body.error.message).toContain(`${type} is not an attachment type; send one of image/png`);
    }
    expect((await upload(pngBytes(), undefined)).body.error.message).toContain('the upload has no Content-Type');
    expect(blobs().keys()).toEqual([]);
  });

  it('sniffs the bytes: a mislabeled file is a 415 that says what the bytes are, and is not stored', async () => {
    const cases: [Uint8Array, string, string][] = [
      [pngBytes(), 'image/jpeg', 'the bytes are image/png, not image/jpeg'],
      [jpegBytes(), 'image/png', 'the bytes are image/jpeg, not image/png'],
      [textBytes('hello'), 'application/pdf', 'the bytes are text, not application/pdf'],
      [pdfBytes(), 'text/plain', 'the bytes are application/pdf, not text/plain'],
      [new Uint8Array([0xde, 0xad, 0x00, 0xbe, 0xef]), 'text/plain', 'the bytes are not text/plain: no known file signature, and not UTF-8 text'],
      [new Uint8Array([0x50, 0x4b, 0x03, 0x04, 1, 2, 3]), 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'no known file signature'],
    ];
    for (const [bytes, type, message] of cases) {
      const res = await upload(bytes, type);
      expect(res.status, `${type}: ${message}`).toBe(415);
      expect(res.body.error.message).toContain(message);
    }
    expect(blobs().keys()).toEqual([]);
  });

  it(`takes exactly MAX_ATTACHMENT_BYTES (${MAX_ATTACHMENT_BYTES}) and refuses one byte more with 413`, async () => {
    expect((await upload(pngBytes(MAX_ATTACHMENT_BYTES), 'image/png')).status).toBe(201);
    const over = await upload(pngBytes(MAX_ATTACHMENT_BYTES + 1, 2), 'image/png');
    expect(over).toEqual({ status: 413, body: { error: { code: 'attachment_too_large', message: `the attachment is over ${MAX_ATTACHMENT_BYTES} bytes` } } });
    expect(blobs().keys()).toHaveLength(1);
  });

  it('keeps the JSON limit on every other route: a 2 MB run request is still a 413', async () => {
    const res = await call('POST', '/runs', { agent: 'agent', input: 'x'.repeat(2 * 1024 * 1024) });
    expect(res.status).toBe(413);
    expect(res.body?.error.code).toBe('payload_too_large');
  });

  it('answers 400 for an empty body and a bad name', async () => {
    const empty = await upload(new Uint8Array(0), 'image/png');
    expect(empty.status).toBe(400);
    expect(paths(empty)).toEqual(['body']);
    const badName = await upload(pngBytes(), 'image/png', { name: '../../etc/passwd' });
    expect(badName.status).toBe(400);
    expect(paths(badName)).toEqual(['query.name']);
    expect(blobs().keys()).toEqual([]);
  });

  it('needs an authorized caller', async () => {
    const res = await createApiApp({ service: engineRunService(t.worker.deps), caller: () => undefined }).request('/attachments', {
      method: 'POST',
      headers: { 'content-type': 'image/png' },
      body: pngBytes() as Uint8Array<ArrayBuffer>,
    });
    expect(res.status).toBe(401);
  });
});

describe('GET /attachments/{sha256}', () => {
  it("gives the caller's own upload back byte for byte, text as text/plain, and 404 to another tenant", async () => {
    const png = pngBytes(100);
    const { ref } = (await upload(png, 'image/png')).body;
    const res = await app().request(`/attachments/${ref.sha256}`, { headers: { 'x-test-tenant': 't' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toContain('sandbox');
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(png);
    const html = (await upload(textBytes('<script>alert(1)</script>'), 'text/html')).body.ref;
    const page = await app().request(`/attachments/${html.sha256}`, { headers: { 'x-test-tenant': 't' } });
    expect(page.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const other = await app().request(`/attachments/${ref.sha256}`, { headers: { 'x-test-tenant': 'other' } });
    expect(other.status).toBe(404);
    expect((await app().request('/attachments/not-a-sha', { headers: { 'x-test-tenant': 't' } })).status).toBe(400);
  });
});

describe('runs and messages with attachments', () => {
  it('passes the bytes to the model beside the text; the log holds only the reference', async () => {
    const png = pngBytes(300, 5);
    const { ref } = (await upload(png, 'image/png', { name: 'mug.png' })).body;
    const start = await call('POST', '/runs', { agent: 'agent', runId: 'r-1', input: { task: 'Is this mug broken?', photo: ref } });
    expect(start.status).toBe(201);
    await drain(t.world, t.worker);
    expect(model.attachments[0]).toEqual([
      { kind: 'image', mediaType: 'image/png', sha256: ref.sha256, name: 'mug.png', data: Buffer.from(png).toString('base64') },
    ]);
    const log = await logOf('r-1');
    expect(log.find((e) => e.type === 'run_started')).toMatchObject({ input: { kind: 'inline', value: { task: 'Is this mug broken?', photo: ref } } });
    const text = JSON.stringify(log);
    expect(text).not.toContain(Buffer.from(png).toString('base64').slice(0, 40));
    expect((await call('GET', '/runs/r-1')).body?.status).toBe('completed');
    // The budget reserves input tokens for the image (IMAGE_TOKENS_ESTIMATE) beyond its reference.
    const reserved = (log.find((e) => e.type === 'model_started') as unknown as { reserved: { inputTokens: number } }).reserved.inputTokens;
    expect(reserved).toBeGreaterThan(IMAGE_TOKENS_ESTIMATE);
    expect(reserved).toBeLessThan(IMAGE_TOKENS_ESTIMATE + 500);

    // A follow-up with a document: the second call carries both (the conversation holds both messages).
    const csv = textBytes('order,amount\n1001,45.00\n');
    const doc = (await upload(csv, 'text/csv', { name: 'orders.csv' })).body.ref;
    expect((await call('POST', '/runs/r-1/messages', { input: { question: 'and this?', file: doc } })).status).toBe(202);
    await drain(t.world, t.worker);
    expect(model.attachments[1]?.map((a) => [a.kind, a.mediaType, Buffer.from(a.data, 'base64').toString('utf8').slice(0, 5)])).toEqual([
      ['image', 'image/png', Buffer.from(png).toString('utf8').slice(0, 5)],
      ['document', 'text/csv', 'order'],
    ]);
  });

  it("refuses a reference the tenant never uploaded, another tenant's upload, or one that misstates it: 400 naming the path, nothing written", async () => {
    const png = pngBytes(90);
    const theirs = (await upload(png, 'image/png', { tenant: 'other' })).body.ref;
    const cross = await call('POST', '/runs', { agent: 'agent', runId: 'r-x', input: { task: 'look', photos: [theirs] } });
    expect(cross.status).toBe(400);
    expect(cross.body?.error.issues).toEqual([
      { path: 'body.input.photos.0', message: `no attachment ${theirs.sha256} was uploaded for this tenant (POST /attachments first)` },
    ]);
    expect(await logOf('r-x')).toEqual([]);
    expect(await t.storage.heads.getHead({ tenant: 't', runId: 'r-x' })).toBeUndefined();
    expect(t.storage.queue.take()).toBeUndefined();

    const mine = (await upload(png, 'image/png')).body.ref;
    const misstated = await call('POST', '/runs', {
      agent: 'agent',
      runId: 'r-y',
      input: { a: { ...mine, bytes: 91 }, b: { ...mine, mediaType: 'image/gif' }, c: { kind: 'blob', mediaType: 'image/png', sha256: 'nope' } },
    });
    expect(misstated.status).toBe(400);
    expect(misstated.body?.error.issues).toEqual([
      { path: 'body.input.a', message: `the upload ${mine.sha256.slice(0, 12)} is 90 bytes, not 91` },
      { path: 'body.input.b', message: 'the bytes are image/png, not image/gif' },
      { path: 'body.input.c.bytes', message: expect.any(String) },
      { path: 'body.input.c.sha256', message: 'a lowercase hex sha256' },
    ]);
    expect(await logOf('r-y')).toEqual([]);

    // The same for a follow-up message: refused, and no inbox item.
    expect((await call('POST', '/runs', { agent: 'agent', runId: 'r-z', input: 'hello' })).status).toBe(201);
    await drain(t.world, t.worker);
    // (t has uploaded the bytes of `theirs` by now: this one only the other tenant has.)
    const onlyTheirs = (await upload(pngBytes(90, 9), 'image/png', { tenant: 'other' })).body.ref;
    const message = await call('POST', '/runs/r-z/messages', { input: { file: onlyTheirs } });
    expect(message.status).toBe(400);
    expect(paths(message)).toEqual(['body.input.file']);
    expect(await t.storage.inbox.list({ tenant: 't', runId: 'r-z' })).toEqual([]);
  });
});

describe('a model that cannot take the attachment', () => {
  it('refuses the start with a 400 naming the path and the model, before anything is written', async () => {
    t = scriptedWorld({ tools: [], script: [], model, modelId: 'bedrock:amazon.titan-text-express-v1' });
    const { ref } = (await upload(pngBytes(), 'image/png')).body;
    const res = await call('POST', '/runs', { agent: 'agent', runId: 'r-t', input: { photo: ref } });
    expect(res.status).toBe(400);
    expect(res.body?.error.issues).toEqual([
      { path: 'body.input.photo', message: 'model bedrock:amazon.titan-text-express-v1 does not take images (image/png) on Bedrock Converse' },
    ]);
    expect(await logOf('r-t')).toEqual([]);
  });
});

describe('through the Lambda handler (API Gateway HTTP API, payload v2)', () => {
  const LAMBDA_PAYLOAD_LIMIT = 6 * 1024 * 1024;
  const event = (method: string, path: string, init: { body?: string; isBase64Encoded?: boolean; contentType?: string; query?: string } = {}) =>
    ({
      version: '2.0',
      routeKey: '$default',
      rawPath: path,
      rawQueryString: init.query ?? '',
      headers: { host: 'api.example.com', ...(init.contentType ? { 'content-type': init.contentType } : {}) },
      ...(init.body !== undefined ? { body: init.body, isBase64Encoded: init.isBase64Encoded ?? false } : { isBase64Encoded: false }),
      requestContext: {
        accountId: '1',
        apiId: 'a',
        domainName: 'api.example.com',
        domainPrefix: 'api',
        http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 't' },
        requestId: 'r',
        routeKey: '$default',
        stage: '$default',
        time: '',
        timeEpoch: 0,
        authorizer: { iam: { accountId: '111111111111' } },
      },
    }) as unknown as APIGatewayProxyEventV2;

  it('takes the largest upload base64-encoded within Lambda’s 6 MB payload, and gives it back the same way', async () => {
    const runtime = { engine: t.worker.deps, env: { LOGBOOK_TENANT_CLAIM: 'sub' }, logger: { info() {}, warn() {}, error() {} } } as unknown as Runtime;
    const handler = apiHandlerFor(async () => runtime);
    const png = pngBytes(MAX_ATTACHMENT_BYTES, 6);
    const upload = event('POST', '/attachments', {
      body: Buffer.from(png).toString('base64'),
      isBase64Encoded: true,
      contentType: 'image/png',
      query: 'name=big.png',
    });
    expect(JSON.stringify(upload).length).toBeLessThan(LAMBDA_PAYLOAD_LIMIT);
    const stored = (await handler(upload, lambdaContext('api', 30_000) as Context)) as { statusCode: number; body: string };
    expect(stored.statusCode).toBe(201);
    expect(JSON.parse(stored.body)).toEqual({
      ref: { kind: 'blob', sha256: sha256Hex(png), mediaType: 'image/png', bytes: MAX_ATTACHMENT_BYTES, name: 'big.png' },
    });
    const read = (await handler(event('GET', `/attachments/${sha256Hex(png)}`), lambdaContext('api', 30_000) as Context)) as {
      statusCode: number;
      body: string;
      isBase64Encoded: boolean;
    };
    expect(read.statusCode).toBe(200);
    expect(read.isBase64Encoded).toBe(true);
    expect(JSON.stringify(read).length).toBeLessThan(LAMBDA_PAYLOAD_LIMIT);
    expect(Buffer.from(read.body, 'base64').equals(Buffer.from(png))).toBe(true);
  });
});
