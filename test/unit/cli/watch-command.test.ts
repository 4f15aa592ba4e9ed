// `logbook runs watch` against the real API app on the memory engine, served over HTTP: each event
// is printed as it lands (the long poll, not a 1.5 s polling loop), a live progress line on a
// terminal, and the exit code says how the run ended. A fake client covers the head-lag cases.
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LogbookClient } from '../../../dev/cli/api-client.js';
import type { Output } from '../../../dev/cli/output.js';
import { runsCommand } from '../../../dev/cli/runs-command.js';
import { WATCH_EXIT_CODES, eventLine, followRun } from '../../../dev/cli/watch-command.js';
import { MemoryBlobStore, MemoryStepQueue, MemoryStore } from '../../../lib/adapters/memory/index.js';
import { CryptoIds } from '../../../lib/adapters/system/crypto-ids.js';
import { SystemClock } from '../../../lib/support/system-clock.js';
import { createApiApp } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import { LOCAL_CALLER } from '../../../lib/api/tenant.js';
import { AgentRegistry } from '../../../lib/authoring/registry.js';
import { createEngine, type EngineDeps } from '../../../lib/engine/engine.js';
import { runStep } from '../../../lib/engine/step-runner.js';
import { StaticModelResolver } from '../../../lib/models/scripted-model.js';
import { SUPPORT_MODEL_ID, supportAgent, supportModel } from '../../../examples/support-agent/agent.js';
import { MemoryLedger } from '../../../examples/support-agent/ledger.js';
import { SupportServices } from '../../../examples/support-agent/services.js';

function capture(tty = false): Output & { stdout: string[]; stderr: string[]; live: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const live: string[] = [];
  return { stdout, stderr, live, out: (t) => stdout.push(t), err: (t) => stderr.push(t), tty };
}

describe('runs watch on the API over HTTP', () => {
  let deps: EngineDeps;
  let queue: MemoryStepQueue;
  let server: ReturnType<typeof serve>;
  let api: string;
  let worker: { stop: boolean; done: Promise<void> };

  beforeEach(async () => {
    const store = new MemoryStore();
    queue = new MemoryStepQueue();
    deps = createEngine({
      log: store,
      heads: store,
      inbox: store,
      blobs: new MemoryBlobStore(),
      queue,
      models: new StaticModelResolver({ [SUPPORT_MODEL_ID]: supportModel() }),
      // Tools that take a moment, so events land while the watch is waiting.
      registry: new AgentRegistry().register(supportAgent(new SupportServices(new MemoryLedger()), { toolDelayMs: 300 })),
      clock: new SystemClock(),
      ids: new CryptoIds(),
    });
    const app = createApiApp({ service: engineRunService(deps), caller: () => LOCAL_CALLER });
    server = await new Promise((ok) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => ok(s));
    });
    api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // The worker: takes ticks as they are queued, as the local runner would.
    const state = { stop: false, done: Promise.resolve() };
    state.done = (async () => {
      while (!state.stop) {
        const next = queue.take();
        if (next) await runStep(deps, next.tick, { owner: 'w', deadlineAt: Date.now() + 300_000 });
        else await new Promise((r) => setTimeout(r, 20));
      }
    })();
    worker = state;
  });
  afterEach(async () => {
    worker.stop = true;
    await worker.done;
    (server as { closeAllConnections?: () => void }).closeAllConnections?.();
    await new Promise((r) => server.close(r));
  });

  it('runs start --watch prints every event once, in order, and exits 0 when the run completes', async () => {
    const io = capture();
    const answers: { wait: number; events: number }[] = [];
    const counting = (base: string) => {
      const client = new LogbookClient(base);
      const stream = client.stream.bind(client);
      client.stream = async (id, after, limit, wait = 0) => {
        const page = await stream(id, after, limit, wait);
        answers.push({ wait, events: page.items.length });
        return page;
      };
      return client;
    };
    const code = await runsCommand(['start', 'support', '--input', 'order arrived damaged', '--run-id', 'w-1', '--watch', '--api', api], io, counting);
    expect(code).toBe(0);
    // Long polls (20 s) that answered as events landed: several answers, each with a few events.
    expect(answers.every((a) => a.wait === 20)).toBe(true);
    expect(answers.filter((a) => a.events > 0).length).toBeGreaterThan(3);
    const seqs = io.stdout.filter((line) => !line.startsWith('      > ')).map((line) => Number(line.trim().split(/\s+/)[0]));
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(io.stdout[0]).toMatch(/^ {4}1 run_started {8}support@1\.0\.0/);
    expect(io.stdout.at(-1)).toMatch(/run_completed\s+Refunded order/);
    // A turn's last result carries the next model call's reservation, and says so.
    expect(io.stdout.some((line) => /tool_result .* ok from tool: .*; step \d+, up to \d+ output tokens reserved$/.test(line))).toBe(true);
    expect(io.stderr.join('\n')).toMatch(/Status: completed after 4 turns, 4 tool calls/);
    const all = (await new LogbookClient(api).allEvents('w-1')).map(eventLine);
    expect(io.stdout.filter((line) => !line.startsWith('      > '))).toEqual(all);
  });

  it('keeps one live progress line on a terminal and prints JSON lines with --json', async () => {
    const io = capture(true);
    await new LogbookClient(api).startRun({ agent: 'support', input: 'x', runId: 'w-2' });
    expect(await followRun(new LogbookClient(api), 'w-2', io, { live: (t) => io.live.push(t) })).toBe(0);
    expect(io.live.some((t) => /\r\x1b\[2Kw-2 +\w+ +turn \d+ +tools \d+\/\d+/.test(t))).toBe(true);
    // The line is cleared before every event line and at the end.
    expect(io.live.at(-1)).toBe('\r\x1b[2K');

    const json = capture(true);
    expect(await runsCommand(['watch', 'w-2', '--json', '--api', api], json)).toBe(0);
    const last = JSON.parse(json.stdout.at(-1) ?? '{}') as { status: string; exitCode: number };
    expect(last).toMatchObject({ status: 'completed', exitCode: 0 });
    // One line per stream item: the events as GET /runs/{id}/events gives them, each with its cursor.
    expect(JSON.parse(json.stdout[0] ?? '{}')).toMatchObject({ type: 'event', cursor: '1.0.0.-1', event: { seq: 1, type: 'run_started' } });
  });

  it('exits 4 for a cancelled run and 1 for an unknown one', async () => {
    const client = new LogbookClient(api);
    worker.stop = true;
    await worker.done;
    await client.startRun({ agent: 'support', input: 'x', runId: 'w-3' });
    await client.cancel('w-3', 'changed my mind');
    worker.stop = false;
    worker.done = (async () => {
      for (let next = queue.take(); next; next = queue.take()) await runStep(deps, next.tick, { owner: 'w', deadlineAt: Date.now() + 300_000 });
    })();
    expect(await runsCommand(['watch', 'w-3', '--api', api], capture())).toBe(WATCH_EXIT_CODES.cancelled);
    const io = capture();
    expect(await runsCommand(['watch', 'nope', '--api', api], io).catch((e: Error) => e.message)).toMatch(/404 run_not_found/);
  });
});

/** A stream page of the events after a cursor, as the API gives it (no model call open in these logs). */
function pageOf(events: { seq: number }[], after: string | undefined) {
  const from = Number((after ?? '0').split('.')[0]);
  const items = events.filter((e) => e.seq > from).map((e) => ({ type: 'event' as const, cursor: `${e.seq}.0.0.-1`, event: e }));
  return { items, next: items.at(-1)?.cursor ?? after ?? '0.0.0.-1', done: false };
}

describe('runs watch when the head lags the log', () => {
  const view = (status: string, extra: Record<string, unknown> = {}) => ({
    runId: 'p-1',
    status,
    agent: { name: 'a', version: '1' },
    usage: { steps: 1, inputTokens: 1, outputTokens: 1, costUsd: 0 },
    attention: status === 'parked' ? [{ seq: 4, reason: 'unknown_outcome', callId: '3-0', detail: 'charge (3-0) started with no result' }] : [],
    ...extra,
  });
  const events = [
    { seq: 1, type: 'run_started', agent: { name: 'a', version: '1' }, model: { id: 'm' }, input: { kind: 'inline', value: 'x' } },
    { seq: 2, type: 'tool_started', callId: '3-0', attempt: 1 },
    { seq: 3, type: 'attention_required', reason: 'unknown_outcome', callId: '3-0', detail: 'charge (3-0) started with no result' },
  ];

  it('exits 5 for a parked run as soon as the head says so, asking again after 1 s, not 20', async () => {
    const waits: number[] = [];
    const heads = ['running', 'running', 'parked'];
    const client = {
      getRun: async () => view(heads.shift() ?? 'parked'),
      stream: async (_id: string, after: string | undefined, _limit: number, wait: number) => {
        waits.push(wait);
        return pageOf(events, after);
      },
    } as unknown as LogbookClient;
    const io = capture();
    expect(await followRun(client, 'p-1', io)).toBe(WATCH_EXIT_CODES.parked);
    expect(waits).toEqual([20, 1]);
    expect(io.stderr.join('\n')).toContain('Resolve with: logbook runs resolve p-1 --call 3-0 --outcome succeeded|failed|rerun');
  });

  it('finds a park that lives on the head only (poisoned) once caught up with the log', async () => {
    const client = {
      getRun: async () => view('parked', { attention: [], park: { reason: 'poisoned', detail: 'kept failing' } }),
      stream: async (_id: string, after: string | undefined) => pageOf(events.slice(0, 2), after),
    } as unknown as LogbookClient;
    const io = capture();
    expect(await followRun(client, 'p-1', io)).toBe(WATCH_EXIT_CODES.parked);
    expect(io.stderr.join('\n')).toContain('--action retry|fail');
  });

  it('when the events say completed before the head is projected, the summary waits for the head: final usage and the answer', async () => {
    const done = [
      ...events.slice(0, 2),
      { seq: 3, type: 'tool_result', callId: '3-0', ok: true },
      { seq: 4, type: 'run_completed', answer: { kind: 'inline', value: 'ok' } },
    ];
    const heads = [
      view('running'),
      view('running'),
      view('completed', { usage: { steps: 2, inputTokens: 382, outputTokens: 80, costUsd: 0.0023 }, result: 'All done.' }),
    ];
    let reads = 0;
    const client = {
      getRun: async () => heads[Math.min(reads++, heads.length - 1)],
      stream: async (_id: string, after: string | undefined) => pageOf(done, after),
    } as unknown as LogbookClient;
    const io = capture();
    expect(await followRun(client, 'p-1', io)).toBe(WATCH_EXIT_CODES.completed);
    const summary = io.stderr.join('\n');
    expect(summary).toContain('382 input + 80 output tokens');
    expect(summary).toContain('Answer: All done.');
  });
});

describe('runs watch prints the answer as it streams', () => {
  const view = (status: string) => ({
    runId: 's-1',
    status,
    agent: { name: 'a', version: '1' },
    usage: { steps: 2, inputTokens: 10, outputTokens: 5, costUsd: 0 },
    attention: [],
    result: 'Hello world',
  });
  const event = (seq: number, type: string, extra: Record<string, unknown> = {}) => ({
    type: 'event' as const,
    cursor: `${seq}.x`,
    event: { seq, type, ...extra },
  });
  const text = (callSeq: number, index: number, t: string) => ({ type: 'text' as const, cursor: `t${callSeq}.${index}`, callSeq, attempt: 1, index, text: t });
  // Attempt at 2 dies mid-stream (discard), the retry at 3 streams and is answered.
  const pages = [
    {
      items: [
        event(1, 'run_started', { agent: { name: 'a', version: '1' }, model: { id: 'm' }, input: { kind: 'inline', value: 'x' } }),
        event(2, 'model_started', { step: 1, maxOutputTokens: 10, reserved: {} }),
        text(2, 0, 'Hel'),
      ],
    },
    {
      items: [
        text(2, 1, 'lo\nwor'),
        { type: 'discard' as const, cursor: 'd2', callSeq: 2 },
        event(3, 'model_started', { step: 2, maxOutputTokens: 10, reserved: {} }),
      ],
    },
    { items: [text(3, 0, 'Hello '), text(3, 1, 'world \u001b[31mred')] },
    {
      items: [
        event(4, 'model_response', {
          text: { kind: 'inline', value: 'Hello world' },
          calls: [],
          usage: { inputTokens: 1, outputTokens: 1 },
          costUsd: 0,
          stopReason: 'end_turn',
        }),
        event(5, 'run_completed', { answer: { kind: 'inline', value: 'Hello world' } }),
      ],
    },
  ];
  const client = (afters: (string | undefined)[]) =>
    ({
      getRun: async () => view(afters.length >= pages.length ? 'completed' : 'running'),
      stream: async (_id: string, after: string | undefined) => {
        afters.push(after);
        const page = pages[afters.length - 1] ?? { items: [] };
        return { ...page, next: page.items.at(-1)?.cursor ?? after ?? '', done: afters.length >= pages.length };
      },
    }) as unknown as LogbookClient;

  it('writes each piece as it comes on a real stdout, and marks an abandoned attempt', async () => {
    const io = { ...capture(), raw: [] as string[] };
    const withWrite: Output = { ...io, write: (t) => io.raw.push(`out:${t}`), out: (t) => io.raw.push(`line:${t}`) };
    const afters: (string | undefined)[] = [];
    expect(await followRun(client(afters), 's-1', withWrite)).toBe(0);
    // Each page resumed from the cursor of the last item of the page before.
    expect(afters).toEqual([undefined, 't2.0', '3.x', 't3.1']);
    expect(io.raw).toEqual([
      expect.stringMatching(/^line: +1 run_started/),
      expect.stringMatching(/^line: +2 model_started/),
      'out:      > ',
      'out:Hel',
      'out:lo\nwor',
      'out: [attempt abandoned: the call is retried]',
      'out:\n',
      expect.stringMatching(/^line: +3 model_started/),
      'out:      > ',
      'out:Hello ',
      // A terminal escape in streamed text is shown, not obeyed.
      'out:world \\x1b[31mred',
      'out:\n',
      expect.stringMatching(/^line: +4 model_response/),
      expect.stringMatching(/^line: +5 run_completed/),
    ]);
  });

  it('without a raw writer prints whole lines; --json prints one line per item', async () => {
    const io = capture();
    expect(await followRun(client([]), 's-1', io)).toBe(0);
    expect(io.stdout.filter((l) => l.startsWith('      > ') || !/^ +\d/.test(l))).toEqual([
      '      > Hello',
      'wor [attempt abandoned: the call is retried]',
      '      > Hello world \\x1b[31mred',
    ]);
    const json = capture();
    expect(await followRun(client([]), 's-1', json, { json: true })).toBe(0);
    const lines = json.stdout.slice(0, -1).map((l) => JSON.parse(l) as { type: string });
    expect(lines.map((l) => l.type)).toEqual(['event', 'event', 'text', 'text', 'discard', 'event', 'text', 'text', 'event', 'event']);
    expect(lines[2]).toEqual(text(2, 0, 'Hel'));
  });
});
