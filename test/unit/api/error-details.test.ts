/**
 * Issue 33, "internal details in errors": no error a client sees, from the API or the CLI, holds a
 * storage key (DynamoDB's `RUN#<tenant>#<id>`, the S3 keys of uploads, payloads and snapshots),
 * a secret it sent, or an unbounded echo of its own input. Driven through the Hono app.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { MAX_ERROR_MESSAGE_CHARS, MAX_ISSUES, publicErrorText } from '../../../lib/api/error-text.js';
import { main } from '../../../dev/cli/main.js';
import { secretWorld } from '../engine/secret-world.js';

const TOKEN = 'ghp_16C7e42F292c6912E7710c838347Ae178B4a';
const SHA = 'b'.repeat(64);
/** What an error body must never hold: storage keys of either store. */
const STORAGE_KEY = /RUN#|TENANT#|INBOX#|EVT#|STR#|attachments\/|blobs\/|snapshots\//;

async function started() {
  const w = secretWorld();
  w.state.secret = 'nothing secret';
  expect((await w.api('POST', '/runs', { agent: 'probe', runId: 'r1', input: { note: 'hello' } })).status).toBe(201);
  await w.drain();
  return w;
}

function errorOf(res: { status: number; text: string }) {
  return JSON.parse(res.text) as { error: { code: string; message: string; issues?: { path: string; message: string }[] } };
}

describe('what an error tells a client', () => {
  it('an unknown agent is named only when the name is harmless: a typo is repeated, a pasted token or a long value is not', async () => {
    const w = await started();
    const typo = errorOf(await w.api('POST', '/runs', { agent: 'prob', input: 'x' }));
    expect(typo.error.message).toBe('unknown agent "prob"');
    expect(JSON.stringify(typo)).toContain('known: ');
    const secret = await w.api('POST', '/runs', { agent: TOKEN, input: 'x' });
    expect(secret.status).toBe(400);
    expect(secret.text).not.toContain(TOKEN);
    expect(errorOf(secret).error.message).toBe(`unknown agent (${TOKEN.length} characters, not repeated)`);
    const long = await w.api('POST', '/runs', { agent: 'a'.repeat(128), input: 'x' });
    expect(long.text).not.toContain('a'.repeat(65));
    const version = await w.api('POST', '/runs', { agent: 'probe', version: TOKEN, input: 'x' });
    expect(version.text).not.toContain(TOKEN);
    const workflow = await w.api('POST', '/runs', { workflow: TOKEN, input: 'x' });
    expect(workflow.status).toBe(400);
    expect(workflow.text).not.toContain(TOKEN);
    const schema = await w.api('GET', `/agents/${TOKEN}/schema`);
    expect(schema.status).toBe(404);
    expect(schema.text).not.toContain(TOKEN);
  });

  it('no storage key: a missing payload, a missing upload, a start or fork that conflicts, a run of no one', async () => {
    const w = await started();
    const answers = [
      await w.api('GET', `/runs/r1/blobs/${SHA}`),
      await w.api('GET', `/attachments/${SHA}`),
      await w.api('POST', '/runs', { agent: 'probe', runId: 'r1', input: { note: 'another request' } }),
      await w.api('POST', '/runs', { agent: 'probe', input: { doc: { kind: 'blob', sha256: SHA, mediaType: 'image/png', bytes: 10 } } }),
      await w.api('POST', '/runs/r1/fork', { atSeq: 1, runId: 'f1', input: { note: 'one' } }),
      await w.api('POST', '/runs/r1/fork', { atSeq: 1, runId: 'f1', input: { note: 'two' } }),
      await w.api('GET', '/runs/nobody'),
      await w.api('POST', '/runs/nobody/cancel', {}),
    ];
    expect(answers.map((a) => a.status)).toEqual([404, 404, 409, 400, 201, 409, 404, 404]);
    for (const a of answers.filter((x) => x.status >= 400)) {
      expect(a.text, a.text).not.toMatch(STORAGE_KEY);
      expect(a.text).not.toContain('#t#');
    }
    // Still useful: the caller's own names for things.
    expect(errorOf(answers[0]!).error.message).toContain(SHA.slice(0, 12));
    expect(errorOf(answers[5]!).error.message).toContain('f1');
  });

  it('what a request echoes is redacted and bounded: a path, unknown fields, a signal name', async () => {
    const w = await started();
    const route = await w.api('GET', `/nothing/here/${TOKEN}`);
    expect(route.status).toBe(404);
    expect(route.text).not.toContain(TOKEN);
    const longPath = await w.api('GET', `/nothing/${'x'.repeat(20_000)}`);
    expect(longPath.status).toBe(404);
    expect(errorOf(longPath).error.message.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS);
    // Unknown fields are named in the issues' paths: a secret as a key is redacted, thousands are capped.
    const fields = await w.api('POST', '/runs', { agent: 'probe', input: 'x', [TOKEN]: 1 });
    expect(fields.status).toBe(400);
    expect(fields.text).not.toContain(TOKEN);
    expect(errorOf(fields).error.issues!.map((i) => i.path)).toEqual(['body.[REDACTED:github_token]']);
    const many = await w.api('POST', '/runs', { agent: 'probe', input: 'x', ...Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`k${i}`, i])) });
    const issues = errorOf(many).error.issues!;
    expect(issues).toHaveLength(MAX_ISSUES + 1);
    expect(issues.at(-1)!.message).toBe(`and ${3000 - MAX_ISSUES} more issues`);
    expect(many.text.length).toBeLessThan(10_000);
    const signal = await w.api('POST', '/runs/r1/signals', { signal: TOKEN, payload: {} });
    expect(signal.status).toBe(409);
    expect(signal.text).not.toContain(TOKEN);
    expect(errorOf(signal).error.message).toContain('not repeated');
  });

  it("publicErrorText: every storage key format in a message, in the caller's terms", () => {
    const text = `seq 5 of RUN#acme#r-1 was written; TENANT#acme#running; blob attachments/acme/${SHA} and blobs/acme/r-1/${SHA}.json and snapshots/acme/r-1/0000000005-abc.json; key ${TOKEN}`;
    const out = publicErrorText(text);
    expect(out).not.toMatch(STORAGE_KEY);
    expect(out).not.toContain(TOKEN);
    expect(out).toBe(
      `seq 5 of r-1 was written; (an internal key); blob attachment ${SHA} and payload ${SHA} and (a stored object); key [REDACTED:github_token]`,
    );
    expect(publicErrorText('x'.repeat(10_000))).toHaveLength(MAX_ERROR_MESSAGE_CHARS);
  });

  it('the CLI prints no storage key, secret or unbounded echo: a usage error, an API answer that is not JSON', async () => {
    const lines: string[] = [];
    const io = { out: (t: string) => void lines.push(t), err: (t: string) => void lines.push(t), tty: false };
    expect(await main([`frob-${TOKEN}`], io)).toBe(2);
    expect(await main(['runs', `${'y'.repeat(5000)}`], io)).toBe(2);
    // A proxy or a broken stage answering text that names storage keys.
    const server = createServer((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`upstream failed reading RUN#acme#r-1 and attachments/acme/${SHA} with ${TOKEN}`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      expect(await main(['runs', 'show', 'r-1', '--api', url], io)).toBe(1);
    } finally {
      server.close();
    }
    const printed = lines.join('\n');
    expect(printed).not.toContain(TOKEN);
    expect(printed).not.toMatch(STORAGE_KEY);
    expect(printed).not.toContain('y'.repeat(600));
    expect(printed).toContain('502');
  });
});
