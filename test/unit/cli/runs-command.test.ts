import { describe, expect, it } from 'vitest';
import type { LogbookClient } from '../../../dev/cli/api-client.js';
import { ApiError } from '../../../dev/cli/api-client.js';
import { main } from '../../../dev/cli/main.js';
import type { Output } from '../../../dev/cli/output.js';
import { runsCommand } from '../../../dev/cli/runs-command.js';
import { table } from '../../../dev/cli/table.js';

function capture(): Output & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => stdout.push(t), err: (t) => stderr.push(t), tty: false };
}

const run = {
  runId: 'r-1',
  status: 'parked' as const,
  agent: { name: 'support', version: '1.0.0' },
  createdAt: '2026-11-01T00:00:00.000Z',
  updatedAt: '2026-11-01T00:01:00.000Z',
  lastSeq: 15,
  usage: { steps: 3, inputTokens: 500, outputTokens: 100, costUsd: 0.003 },
  summary: 'issue_refund (13-0) started with no result',
  attention: [{ seq: 15, reason: 'unknown_outcome', callId: '13-0', detail: 'issue_refund (13-0) started with no result' }],
  budgets: { maxSteps: 50, maxInputTokens: 2_000_000, maxOutputTokens: 200_000, maxCostUsd: 10, deadlineAt: Date.UTC(2099, 0, 1) },
};

/** A client whose calls are recorded instead of sent. */
function fakeClient(calls: unknown[][]) {
  return () =>
    ({
      listRuns: async (q: unknown) => (calls.push(['list', q]), { runs: [run], cursor: 'next-page' }),
      getRun: async (id: string) => (calls.push(['get', id]), run),
      events: async (id: string, after: number, limit: number) => (
        calls.push(['events', id, after, limit]),
        { runId: id, events: [{ seq: 1, type: 'tool_started', at: 0, by: { epoch: 2 }, callId: '3-0', attempt: 1 }] }
      ),
      cancel: async (id: string, reason?: string) => (calls.push(['cancel', id, reason]), { inboxId: 'i-1' }),
      resolve: async (id: string, body: unknown) => (calls.push(['resolve', id, body]), { inboxId: 'i-2' }),
      startRun: async (body: unknown) => (calls.push(['start', body]), { runId: 'r-new', status: 'running', created: true }),
    }) as unknown as LogbookClient;
}

describe('logbook runs', () => {
  it('lists runs as a table, or as JSON with --json', async () => {
    const io = capture();
    const calls: unknown[][] = [];
    expect(await runsCommand(['list', '--status', 'parked', '--limit', '5'], io, fakeClient(calls))).toBe(0);
    expect(calls[0]).toEqual(['list', { status: 'parked', limit: 5 }]);
    expect(io.stdout[0]).toMatch(/^RUN\s+STATUS\s+AGENT/);
    expect(io.stdout[0]).toContain('r-1  parked');
    expect(io.stdout[1]).toBe('more: --cursor next-page');
    const json = capture();
    await runsCommand(['list', '--json'], json, fakeClient([]));
    expect(JSON.parse(json.stdout[0] ?? '')).toMatchObject({ runs: [{ runId: 'r-1' }], cursor: 'next-page' });
  });

  it('exits 0 after --json output, whatever the writer returns (process.stdout.write answers true)', async () => {
    // process.exit(true) throws ERR_INVALID_ARG_TYPE after the output was printed: exit 1, a stack trace.
    for (const verb of [['list'], ['events', 'r-1'], ['show', 'r-1'], ['cancel', 'r-1']]) {
      const printed: string[] = [];
      const io: Output = { out: (t) => (printed.push(t), true) as unknown as void, err: () => true as unknown as void, tty: false };
      const code = await runsCommand([...verb, '--json'], io, fakeClient([]));
      expect(code, verb.join(' ')).toBe(0);
      expect(typeof code).toBe('number');
      expect(printed).toHaveLength(1);
      expect(() => JSON.parse(printed[0] ?? '') as unknown).not.toThrow();
    }
  });

  it('shows a run with its open attention and how to resolve it', async () => {
    const io = capture();
    await runsCommand(['show', 'r-1'], io, fakeClient([]));
    const text = io.stdout.join('\n');
    expect(text).toContain('needs attention');
    expect(text).toContain('logbook runs resolve r-1 --call 13-0 --outcome succeeded|failed|rerun');
  });

  it('shows each budget as used of its limit, and the deadline', async () => {
    const io = capture();
    await runsCommand(['show', 'r-1'], io, fakeClient([]));
    const lines = io.stdout.join('\n').split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^steps\s+3 of 50$/),
        expect.stringMatching(/^input tokens\s+500 of 2,000,000$/),
        expect.stringMatching(/^output tokens\s+100 of 200,000$/),
        expect.stringMatching(/^cost\s+\$0\.0030 of \$10\.00$/),
        expect.stringMatching(/^deadline\s+2099-01-01 00:00:00Z \(in \d+d \d+h\)$/),
      ]),
    );
  });

  it('prints events and passes --after/--limit', async () => {
    const io = capture();
    const calls: unknown[][] = [];
    await runsCommand(['events', 'r-1', '--after', '10', '--limit', '20'], io, fakeClient(calls));
    expect(calls[0]).toEqual(['events', 'r-1', 10, 20]);
    expect(io.stdout[0]).toContain('tool_started');
    expect(io.stdout[0]).toContain('3-0 attempt 1');
  });

  it('sends resolutions with a parsed --result, and run actions', async () => {
    const calls: unknown[][] = [];
    await runsCommand(['resolve', 'r-1', '--call', '13-0', '--outcome', 'succeeded', '--result', '{"refundId":"r-9"}'], capture(), fakeClient(calls));
    await runsCommand(['resolve', 'r-1', '--action', 'retry', '--json'], capture(), fakeClient(calls));
    await runsCommand(['cancel', 'r-1', '--reason', 'customer left'], capture(), fakeClient(calls));
    expect(calls).toEqual([
      ['resolve', 'r-1', { callId: '13-0', outcome: 'succeeded', result: { refundId: 'r-9' } }],
      ['resolve', 'r-1', { action: 'retry' }],
      ['cancel', 'r-1', 'customer left'],
    ]);
  });

  it('starts a run: JSON input parsed, plain text kept as text', async () => {
    const calls: unknown[][] = [];
    const io = capture();
    expect(await runsCommand(['start', 'support', '--input', 'my order is damaged', '--run-id', 'order-1'], io, fakeClient(calls))).toBe(0);
    await runsCommand(['start', 'support', '--input', '{"customer":"c_77"}', '--budgets', '{"maxSteps":5}', '--json'], capture(), fakeClient(calls));
    expect(calls).toEqual([
      ['start', { agent: 'support', input: 'my order is damaged', runId: 'order-1' }],
      ['start', { agent: 'support', input: { customer: 'c_77' }, budgets: { maxSteps: 5 } }],
    ]);
    expect(io.stdout.join('\n')).toMatch(/run\s+r-new/);
  });

  it('reports usage mistakes with exit code 2', async () => {
    for (const argv of [
      ['runs', 'show'],
      ['runs', 'resolve', 'r-1', '--outcome', 'succeeded'],
      ['runs', 'resolve', 'r-1', '--call', '1-0', '--outcome', 'maybe'],
      ['runs', 'resolve', 'r-1', '--call', '1-0', '--outcome', 'succeeded', '--result', '{nope'],
      ['runs', 'list', '--bogus'],
      ['runs', 'start', 'support'],
      ['runs', 'start', 'support', '--input', 'x', '--budgets', '{bad'],
      ['runs', 'frobnicate'],
      ['nope'],
    ]) {
      const io = capture();
      expect(await main(argv, io), argv.join(' ')).toBe(2);
      expect(io.stderr[0]).toMatch(/^logbook: /);
    }
  });

  it('names an unknown flag and lists the flags that command takes', async () => {
    const list = capture();
    expect(await main(['runs', 'list', '--bogus', '--limit', '5'], list)).toBe(2);
    expect(list.stderr[0]).toBe('logbook: unknown option --bogus for `logbook runs list`; it takes: --status S, --parent RUN_ID, --limit N, --cursor C, --api URL, --json, --help');
    // A flag of another command is just as unknown here: `show` takes only the shared ones.
    const show = capture();
    expect(await main(['runs', 'show', 'r-1', '--limit', '5', '-x'], show)).toBe(2);
    expect(show.stderr[0]).toBe('logbook: unknown options --limit, -x for `logbook runs show`; it takes: --api URL, --json, --help');
    const dev = capture();
    expect(await main(['dev', '--agents', 'a.ts', '--agent', 'b.ts'], dev)).toBe(2);
    expect(dev.stderr[0]).toBe(
      'logbook: unknown option --agent for `logbook dev`; it takes: --agents FILE, --port N, --dynamo auto|dynalite|dynamodb-local, --work-dir DIR, --workers N, --max-active-runs N, --otlp URL, --json',
    );
    const missing = capture();
    expect(await main(['runs', 'events', 'r-1', '--after'], missing)).toBe(2);
    expect(missing.stderr[0]).toMatch(/^logbook: .*'--after <value>'.* \(`logbook runs events`\)$/);
  });

  it('finds the command word after the shared flags', async () => {
    const calls: unknown[][] = [];
    expect(await runsCommand(['--api', 'http://127.0.0.1:1', 'list', '--status', 'parked'], capture(), fakeClient(calls))).toBe(0);
    expect(calls[0]).toEqual(['list', { status: 'parked' }]);
  });

  it('reports an unreachable API with exit code 1', async () => {
    const io = capture();
    expect(await main(['runs', 'list', '--api', 'http://127.0.0.1:9'], io)).toBe(1);
    expect(io.stderr[0]).toContain('cannot reach the Logbook API');
  });

  it('formats API errors with their issues', () => {
    const error = new ApiError(400, { error: { code: 'validation_error', message: 'invalid request', issues: [{ path: 'body.x', message: 'bad' }] } }, 'x');
    expect(error.status).toBe(400);
  });
});

describe('table', () => {
  it('pads columns and keeps cells on one line', () => {
    expect(table(['A', 'BB'], [['x\ny', 1], ['long', 22]])).toBe('A     BB\n----  --\nx y   1\nlong  22');
  });
});
