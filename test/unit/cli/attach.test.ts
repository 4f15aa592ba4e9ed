import { serve } from '@hono/node-server';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogbookClient } from '../../../dev/cli/api-client.js';
import { controlCommand } from '../../../dev/cli/control-command.js';
import type { Output } from '../../../dev/cli/output.js';
import { runsCommand } from '../../../dev/cli/runs-command.js';
import { createApiApp } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import { sha256Hex } from '../../../lib/support/hash.js';
import { ScriptedModel } from '../../../lib/models/scripted-model.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { drain } from '../control/helpers.js';
import { pngBytes, textBytes } from '../attachments/fixtures.js';

/** `--attach` against the real API app over HTTP on 127.0.0.1: the files are uploaded, then referred to. */

const dir = mkdtempSync(join(tmpdir(), 'logbook-attach-'));
const model = new ScriptedModel([{ text: 'seen' }, { text: 'seen again' }]);
const t = scriptedWorld({ tools: [], script: [], model });
let server: Server;
let makeClient: () => LogbookClient;

beforeAll(async () => {
  const app = createApiApp({ service: engineRunService(t.worker.deps), caller: () => ({ tenant: 't', principal: 'cli' }) });
  server = await new Promise<Server>((ok, fail) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
    s.once('listening', () => ok(s));
    s.once('error', fail);
  });
  const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  makeClient = () => new LogbookClient(api);
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

function capture(): Output & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (x) => stdout.push(x), err: (x) => stderr.push(x), tty: false };
}

describe('logbook runs start|message --attach', () => {
  it('uploads each file and puts its reference in the input: in a named field, or in "attachments"; --json prints the references', async () => {
    const png = pngBytes(120, 7);
    writeFileSync(join(dir, 'mug.png'), png);
    writeFileSync(join(dir, 'orders.csv'), textBytes());
    const io = capture();
    const code = await runsCommand(
      [
        'start',
        'agent',
        '--input',
        '{"task":"look"}',
        '--attach',
        `photo=${join(dir, 'mug.png')}`,
        '--attach',
        join(dir, 'orders.csv'),
        '--run-id',
        'cli-1',
        '--json',
      ],
      io,
      makeClient,
    );
    expect(code).toBe(0);
    const out = JSON.parse(io.stdout[0]!) as { runId: string; attachments: { sha256: string; name: string }[] };
    expect(out).toMatchObject({ runId: 'cli-1', created: true });
    expect(out.attachments.map((a) => [a.name, a.sha256])).toEqual([
      ['mug.png', sha256Hex(png)],
      ['orders.csv', sha256Hex(textBytes())],
    ]);
    await drain(t.world, t.worker);
    expect(model.attachments[0]?.map((a) => [a.name, a.mediaType, a.data])).toEqual([
      ['mug.png', 'image/png', Buffer.from(png).toString('base64')],
      ['orders.csv', 'text/csv', Buffer.from(textBytes()).toString('base64')],
    ]);
    const started = (await t.storage.log.read({ tenant: 't', runId: 'cli-1' }, { afterSeq: 0 })).events[0] as { input: { value: Record<string, unknown> } };
    expect(Object.keys(started.input.value)).toEqual(['task', 'photo', 'attachments']);

    // A text message with a file becomes { text, attachments }.
    const second = pngBytes(100, 8);
    writeFileSync(join(dir, 'crack.png'), second);
    const msg = capture();
    expect(await controlCommand(['message', 'cli-1', '--input', 'and this one?', '--attach', join(dir, 'crack.png')], msg, makeClient)).toBe(0);
    expect(msg.stdout[0]).toMatch(/^message queued for cli-1 \(inbox .+, attached crack\.png\)$/);
    await drain(t.world, t.worker);
    expect(model.attachments[1]?.map((a) => a.name)).toEqual(['mug.png', 'orders.csv', 'crack.png']);
  });

  it('refuses an unknown file type, a missing file, a clash with the input, and says the server refusal', async () => {
    writeFileSync(join(dir, 'x.svg'), '<svg/>');
    await expect(runsCommand(['start', 'agent', '--input', 'hi', '--attach', join(dir, 'x.svg')], capture(), makeClient)).rejects.toThrow(/unknown file type/);
    await expect(runsCommand(['start', 'agent', '--input', 'hi', '--attach', join(dir, 'nope.png')], capture(), makeClient)).rejects.toThrow(/no such file/);
    await expect(runsCommand(['start', 'agent', '--input', '{"photo":1}', '--attach', `photo=${join(dir, 'mug.png')}`], capture(), makeClient)).rejects.toThrow(
      /already has a "photo" field/,
    );
    await expect(runsCommand(['start', 'agent', '--input', '[1]', '--attach', join(dir, 'mug.png')], capture(), makeClient)).rejects.toThrow(
      /text or JSON object/,
    );
    // A text file named .png: the server sniffs it and says what it is.
    writeFileSync(join(dir, 'fake.png'), 'not an image');
    await expect(runsCommand(['start', 'agent', '--input', 'hi', '--attach', join(dir, 'fake.png')], capture(), makeClient)).rejects.toThrow(
      /415 unsupported_media_type: the bytes are text, not image\/png/,
    );
  });
});
