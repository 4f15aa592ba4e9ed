// Request bodies on the local server (serveLoopback over the API app), with real sockets: a client
// still sending a large body when the API answers early (413 from Content-Length, 404 or 401 from
// the headers) reads that answer, whether it reads while it writes, writes everything first (a
// plain socket), or is fetch (undici), node:http, curl or the AWS SDK; a body that trickles in
// gets a 408; a client that gives up mid-upload is logged as a client abort, not as a 500.
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp, type ApiLogger } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { loopbackOnly, serveLoopback, type LoopbackServer } from '../../../dev/ui/loopback.js';
import { DEFAULT_BODY_TIMINGS } from '../../../dev/ui/request-body.js';

const run = promisify(execFile);
const MB = 1024 * 1024;
const ROUNDS = 20;
const logs: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
const logger: ApiLogger = {
  info: (message, fields) => logs.push({ level: 'info', message, ...(fields ? { fields } : {}) }),
  warn: (message, fields) => logs.push({ level: 'warn', message, ...(fields ? { fields } : {}) }),
  error: (message, fields) => logs.push({ level: 'error', message, ...(fields ? { fields } : {}) }),
};
let server: LoopbackServer;
let base: string;

beforeAll(async () => {
  const t = scriptedWorld({ tools: [], script: [{ text: 'x' }] });
  // A caller only with the test header: a request without it is a 401 decided from the headers.
  const app = createApiApp({
    service: engineRunService(t.worker.deps),
    caller: (c) => (c.req.header('x-test-tenant') === undefined ? undefined : { tenant: 'local', principal: 'p' }),
    logger,
  });
  // A short body deadline so the trickle test is quick; the drain bounds as shipped.
  server = await serveLoopback(loopbackOnly(app.fetch), 0, { ...DEFAULT_BODY_TIMINGS, bodyTimeoutMs: 1_500 });
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(() => server?.close());

interface Raw {
  status: number | undefined;
  code: string | undefined;
  error: string | undefined;
}

/** The status line and error code of an HTTP/1.1 answer as raw text (undefined when none came). */
function parse(text: string, error?: string): Raw {
  const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
  const code = /"code":"([a-z_]+)"/.exec(text)?.[1];
  return { status: status ? Number(status) : undefined, code, error };
}

/**
 * One request on a plain socket: the headers, then `size` bytes of body. `readFirst: false` is a
 * client that writes its whole body before it reads anything (as the AWS SDK and simple clients
 * do): the one that got EPIPE or a reset instead of the answer when the server closed early.
 */
function rawPost(
  path: string,
  size: number,
  options: { headers?: Record<string, string>; readFirst?: boolean; chunked?: boolean; tenant?: false } = {},
): Promise<Raw> {
  return new Promise((resolve) => {
    const socket = connect(server.port, '127.0.0.1');
    let text = '';
    let error: string | undefined;
    const read = () => socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    if (options.readFirst !== false) read();
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    socket.on('close', () => resolve(parse(text, error)));
    const headers = {
      host: `127.0.0.1:${server.port}`,
      'content-type': 'application/json',
      ...(options.tenant === false ? {} : { 'x-test-tenant': 'local' }),
      ...options.headers,
    };
    const framing = options.chunked ? 'transfer-encoding: chunked\r\n' : `content-length: ${size}\r\n`;
    socket.write(
      `POST ${path} HTTP/1.1\r\n${Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('')}${framing}\r\n`,
    );
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const pump = () => {
      while (sent < size && !socket.destroyed) {
        sent += chunk.length;
        const piece = options.chunked ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]) : chunk;
        if (!socket.write(piece)) return void socket.once('drain', pump);
      }
      if (options.chunked && !socket.destroyed) socket.write('0\r\n\r\n');
      if (options.readFirst === false) read();
    };
    pump();
  });
}

/** Run `one` ROUNDS times in a row; how many answers of each kind came. */
async function tally(one: () => Promise<string>): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < ROUNDS; i++) {
    const got = await one();
    counts[got] = (counts[got] ?? 0) + 1;
  }
  return counts;
}

const label = (r: Raw) => (r.status !== undefined ? `${r.status} ${r.code ?? ''}`.trim() : `no answer (${r.error ?? 'closed'})`);

describe('an answer given before the body was all in reaches the client', () => {
  it('a plain socket that writes its whole body first (6 MB, 3.5 MB, 1 MB) reads every 413, 401, 404 and 415', async () => {
    const cases: [string, Parameters<typeof rawPost>[2], string][] = [
      ['/runs', {}, '413 payload_too_large'],
      ['/attachments', { headers: { 'content-type': 'image/png' } }, '413 attachment_too_large'],
      ['/runs', { chunked: true }, '413 payload_too_large'],
    ];
    for (const [path, options, expected] of cases) {
      expect(await tally(async () => label(await rawPost(path, 6 * MB, { ...options, readFirst: false }))), `${path} ${JSON.stringify(options)}`).toEqual({
        [expected]: ROUNDS,
      });
    }
    // Decided from the headers alone, the body under the limit: no caller (401), no such route (404).
    expect(
      await tally(async () => label(await rawPost('/attachments', 3.5 * MB, { headers: { 'content-type': 'image/png' }, tenant: false, readFirst: false }))),
    ).toEqual({
      '401 unauthorized': ROUNDS,
    });
    expect(await tally(async () => label(await rawPost('/no-such-route', 1000 * 1024, { readFirst: false })))).toEqual({ '404 not_found': ROUNDS });
    // A media type the route does not take, refused from the Content-Type.
    expect(await tally(async () => label(await rawPost('/runs', 1000 * 1024, { headers: { 'content-type': 'text/plain' }, readFirst: false })))).toEqual({
      '415 unsupported_media_type': ROUNDS,
    });
  });

  it('a socket that reads while it writes, and a chunked body refused once it passes the limit, read every 413', async () => {
    expect(await tally(async () => label(await rawPost('/runs', 6 * MB)))).toEqual({ '413 payload_too_large': ROUNDS });
    expect(await tally(async () => label(await rawPost('/runs', 6 * MB, { chunked: true })))).toEqual({ '413 payload_too_large': ROUNDS });
  });

  it('fetch (undici) and node:http read every 413 of a 6 MB body', async () => {
    const body = Buffer.alloc(6 * MB, 0x20);
    const viaFetch = async () => {
      try {
        const res = await fetch(`${base}/runs`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-test-tenant': 'local' }, body });
        return `${res.status} ${((await res.json()) as { error: { code: string } }).error.code}`;
      } catch (error) {
        return `no answer (${String((error as { cause?: { code?: string } }).cause?.code ?? error)})`;
      }
    };
    const viaHttp = () =>
      new Promise<string>((resolve) => {
        const req = request(
          `${base}/runs`,
          { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'x-test-tenant': 'local', 'content-length': body.length } },
          (res) => {
            let text = '';
            res.on('data', (d: Buffer) => (text += d.toString()));
            res.on('end', () => resolve(`${res.statusCode} ${parse(`HTTP/1.1 ${res.statusCode}\n${text}`).code}`));
          },
        );
        req.on('error', (e: NodeJS.ErrnoException) => resolve(`no answer (${e.code})`));
        req.end(body);
      });
    expect(await tally(viaFetch)).toEqual({ '413 payload_too_large': ROUNDS });
    expect(await tally(viaHttp)).toEqual({ '413 payload_too_large': ROUNDS });
  });

  it('the AWS SDK reads the 413 of a 6 MB request (its error carries the status)', async () => {
    const client = new DynamoDBClient({ endpoint: base, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 });
    try {
      const statuses = await tally(async () => {
        try {
          await client.send(new PutItemCommand({ TableName: 't', Item: { pk: { S: 'x' }, blob: { S: 'a'.repeat(6 * MB) } } }));
          return 'accepted';
        } catch (error) {
          const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
          return status !== undefined ? String(status) : `no answer (${(error as NodeJS.ErrnoException).code ?? (error as Error).name})`;
        }
      });
      expect(statuses).toEqual({ '413': ROUNDS });
    } finally {
      client.destroy();
    }
  });

  it.runIf(spawnSync('curl', ['--version']).status === 0)('curl reads every 413 of a 6 MB upload, with and without Expect: 100-continue', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logbook-413-'));
    try {
      const file = join(dir, 'body.json');
      writeFileSync(file, Buffer.alloc(6 * MB, 0x20));
      for (const expect100 of [[], ['-H', 'Expect:']]) {
        const codes: Record<string, number> = {};
        for (let i = 0; i < 5; i++) {
          // Not spawnSync: the server answering curl runs in this process.
          const args = [
            '-s',
            '-o',
            '/dev/null',
            '-w',
            '%{http_code}',
            '-H',
            'content-type: application/json',
            '-H',
            'x-test-tenant: local',
            ...expect100,
            '--data-binary',
            `@${file}`,
            `${base}/runs`,
          ];
          const { stdout } = await run('curl', args, { encoding: 'utf8', timeout: 30_000 }).catch((error: { stdout?: string }) => ({
            stdout: `failed ${error.stdout ?? ''}`,
          }));
          codes[stdout] = (codes[stdout] ?? 0) + 1;
        }
        expect(codes, JSON.stringify(expect100)).toEqual({ '413': 5 });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('past the drain bound the server stops reading: a 40 MB body is answered and its connection closed', async () => {
    const answer = await rawPost('/runs', 40 * MB);
    expect(label(answer)).toBe('413 payload_too_large');
  });

  it('a keep-alive client gets Connection: close on an early answer, and keep-alive on a normal one', async () => {
    const early = await new Promise<string | undefined>((resolve) => {
      const socket = connect(server.port, '127.0.0.1');
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(/\r\nconnection: (\w+)/i.exec(text)?.[1]));
      socket.write(`POST /runs HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nx-test-tenant: local\r\ncontent-length: ${2 * MB}\r\n\r\n`);
    });
    expect(early).toBe('close');
    const normal = await fetch(`${base}/runs?limit=1`, { headers: { 'x-test-tenant': 'local' } });
    await normal.text();
    expect(normal.headers.get('connection')).toBe('keep-alive');
  });
});

describe('slow and abandoned bodies', () => {
  it('answers a body sent one byte at a time with a 408 once the body deadline passes, and closes the connection', async () => {
    const answer = await new Promise<{ raw: Raw; sent: number }>((resolve) => {
      const socket = connect(server.port, '127.0.0.1');
      let text = '';
      let sent = 0;
      socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
      socket.on('error', () => undefined);
      socket.write(`POST /runs HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nx-test-tenant: local\r\ncontent-length: 1000\r\n\r\n`);
      const timer = setInterval(() => {
        if (socket.writable && sent < 1000) socket.write('{', () => sent++);
      }, 100);
      socket.on('close', () => {
        clearInterval(timer);
        resolve({ raw: parse(text), sent });
      });
    });
    expect(label(answer.raw)).toBe('408 request_timeout');
    // Closed long before the 1,000 bytes could have trickled in.
    expect(answer.sent).toBeLessThan(200);
    expect(logs.filter((l) => l.level === 'error')).toEqual([]);
  });

  it('logs an upload abandoned half-way as a client abort (info), never as a 500 error', async () => {
    const before = logs.length;
    await new Promise<void>((resolve) => {
      const socket = connect(server.port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write(`POST /attachments HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: image/png\r\nx-test-tenant: local\r\ncontent-length: 1000000\r\n\r\n`);
      socket.write(Buffer.alloc(200_000), () => {
        socket.destroy();
        resolve();
      });
    });
    for (let i = 0; i < 100 && logs.length === before; i++) await new Promise((r) => setTimeout(r, 20));
    expect(logs.slice(before)).toEqual([
      { level: 'info', message: 'request abandoned by the client', fields: { method: 'POST', path: '/attachments', code: 'client_closed' } },
    ]);
  });
});
