import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { LogbookClient } from '../../../dev/cli/api-client.js';
import { exampleInput, shellQuote, startRunHint } from '../../../dev/cli/example-input.js';
import { controlCommand } from '../../../dev/cli/control-command.js';
import type { Output } from '../../../dev/cli/output.js';
import { runsCommand } from '../../../dev/cli/runs-command.js';
import { defineAgent } from '../../../lib/authoring/define-agent.js';

const dir = mkdtempSync(join(tmpdir(), 'logbook-input-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function capture(): Output & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => stdout.push(t), err: (t) => stderr.push(t), tty: false };
}

function client(bodies: unknown[]) {
  return () => ({ startRun: async (body: unknown) => (bodies.push(body), { runId: 'r', status: 'running', created: true }) }) as unknown as LogbookClient;
}

describe('logbook runs start: --input and --input-file', () => {
  it('sends --input JSON as JSON, and text as text', async () => {
    const bodies: unknown[] = [];
    await runsCommand(['start', 'booker', '--input', '{"nights":2}'], capture(), client(bodies));
    await runsCommand(['start', 'booker', '--input', 'hello'], capture(), client(bodies));
    expect(bodies).toEqual([
      { agent: 'booker', input: { nights: 2 } },
      { agent: 'booker', input: 'hello' },
    ]);
  });

  it('reads --input-file; a .json file must hold JSON; not both flags; one of them', async () => {
    const file = join(dir, 'in.json');
    writeFileSync(file, JSON.stringify({ customer: { email: 'a@b.co' }, nights: 3 }, null, 2));
    const bodies: unknown[] = [];
    expect(await runsCommand(['start', 'booker', '--input-file', file], capture(), client(bodies))).toBe(0);
    expect(bodies).toEqual([{ agent: 'booker', input: { customer: { email: 'a@b.co' }, nights: 3 } }]);
    const text = join(dir, 'task.txt');
    writeFileSync(text, 'refund order 1001\n');
    await runsCommand(['start', 'booker', '--input-file', text], capture(), client(bodies));
    expect(bodies[1]).toEqual({ agent: 'booker', input: 'refund order 1001' });
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{nights: 2');
    await expect(runsCommand(['start', 'booker', '--input-file', broken], capture(), client(bodies))).rejects.toThrow(/--input-file must be JSON/);
    await expect(runsCommand(['start', 'booker', '--input-file', join(dir, 'missing.json')], capture(), client(bodies))).rejects.toThrow(/no such file/);
    await expect(runsCommand(['start', 'booker', '--input', 'x', '--input-file', file], capture(), client(bodies))).rejects.toThrow(/not both/);
    await expect(runsCommand(['start', 'booker'], capture(), client(bodies))).rejects.toThrow(/--input-file PATH/);
    expect(bodies).toHaveLength(2);
  });
});

/** A client recording the bodies of messages and forks. */
function controlClient(calls: [string, unknown][]) {
  return () =>
    ({
      message: async (_id: string, body: unknown) => (calls.push(['message', body]), { inboxId: 'message-m1' }),
      fork: async (id: string, body: unknown) => (calls.push(['fork', body]), { runId: 'g-2', status: 'running', created: true, forkedFrom: { runId: id, seq: 9 } }),
    }) as unknown as LogbookClient;
}

describe('logbook runs message and runs fork: --input and --input-file, as runs start', () => {
  it('send a .json file as JSON and any other file as its text (JSON if it parses)', async () => {
    const file = join(dir, 'follow-up.json');
    writeFileSync(file, JSON.stringify({ question: 'and the invoice?', orderId: 'o-1' }, null, 2));
    const text = join(dir, 'follow-up.txt');
    writeFileSync(text, 'and the invoice?\n');
    const calls: [string, unknown][] = [];
    expect(await controlCommand(['message', 'g-1', '--input-file', file, '--message-id', 'm1'], capture(), controlClient(calls))).toBe(0);
    expect(await controlCommand(['message', 'g-1', '--input-file', text], capture(), controlClient(calls))).toBe(0);
    expect(await controlCommand(['fork', 'g-1', '--at', '9', '--input-file', file], capture(), controlClient(calls))).toBe(0);
    expect(await controlCommand(['fork', 'g-1', '--at', '9', '--input', '{"nights":2}'], capture(), controlClient(calls))).toBe(0);
    // A fork without a new input keeps the source's: no input is sent.
    expect(await controlCommand(['fork', 'g-1', '--at', '9'], capture(), controlClient(calls))).toBe(0);
    expect(calls).toEqual([
      ['message', { input: { question: 'and the invoice?', orderId: 'o-1' }, messageId: 'm1' }],
      ['message', { input: 'and the invoice?' }],
      ['fork', { atSeq: 9, input: { question: 'and the invoice?', orderId: 'o-1' } }],
      ['fork', { atSeq: 9, input: { nights: 2 } }],
      ['fork', { atSeq: 9 }],
    ]);
  });

  it('refuse a broken .json file, a missing file, both flags, and a message with neither, sending nothing', async () => {
    const broken = join(dir, 'broken-follow-up.json');
    writeFileSync(broken, '{question: 1');
    const ok = join(dir, 'ok.json');
    writeFileSync(ok, '{}');
    const calls: [string, unknown][] = [];
    const run = (argv: string[]) => controlCommand(argv, capture(), controlClient(calls));
    for (const verb of [['message', 'g-1'], ['fork', 'g-1', '--at', '9']]) {
      await expect(run([...verb, '--input-file', broken])).rejects.toThrow(/--input-file must be JSON \(.*broken-follow-up\.json is not valid JSON\)/);
      await expect(run([...verb, '--input-file', join(dir, 'missing.json')])).rejects.toThrow(/--input-file .*missing\.json: no such file/);
      await expect(run([...verb, '--input', 'x', '--input-file', ok])).rejects.toThrow(/give --input or --input-file, not both/);
    }
    await expect(run(['message', 'g-1'])).rejects.toThrow(/message needs --input TEXT_OR_JSON or --input-file PATH/);
    expect(calls).toEqual([]);
  });
});

describe('the dev banner example input', () => {
  const agentOf = (input?: z.ZodType) =>
    defineAgent({ name: 'booker', version: '1', model: { id: 'scripted:test', maxOutputTokens: 10 }, ...(input ? { input } : {}), system: { version: 's', text: 'hi' }, tools: [] });

  it('fits the agent input schema (the example is checked by the schema itself)', () => {
    const schema = z.object({
      customer: z.object({ email: z.email(), name: z.string().min(12) }),
      nights: z.number().int().min(1),
      tier: z.enum(['basic', 'gold']),
      note: z.string().optional(),
    });
    const agent = agentOf(schema);
    const example = exampleInput(agent);
    expect(schema.safeParse(example).success).toBe(true);
    const hint = startRunHint(agent, '');
    expect(hint).toBe(`npx logbook runs start booker --input ${shellQuote(JSON.stringify(example))}`);
    // The shell gives the CLI exactly the JSON back.
    const quoted = /--input '(.*)'$/.exec(hint)?.[1] ?? '';
    expect(schema.safeParse(JSON.parse(quoted.replace(/'\\''/g, "'"))).success).toBe(true);
  });

  it("uses the schema's own example, says 'hello' without a schema, and points at the schema when it cannot build one", () => {
    const withExample = z.object({ city: z.string().regex(/^[A-Z]/) }).meta({ examples: [{ city: 'Oslo' }] });
    expect(exampleInput(agentOf(withExample))).toEqual({ city: 'Oslo' });
    expect(startRunHint(agentOf(), '')).toBe("npx logbook runs start booker --input 'hello'");
    const patterned = z.object({ code: z.string().regex(/^[A-Z]{3}-\d{4}$/) });
    expect(startRunHint(agentOf(patterned), ' --api http://x')).toBe('npx logbook runs start booker --input-file input.json --api http://x   (its input schema: GET /agents/booker/schema)');
  });

  it('quotes single quotes for the shell', () => {
    expect(shellQuote(`{"name":"O'Brien"}`)).toBe(`'{"name":"O'\\''Brien"}'`);
  });
});
