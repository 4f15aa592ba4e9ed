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
import { CryptoIds } from '../../../lib/adapters/system/crypto.js';
import { SystemClock } from '../../../lib/adapters/system/system-clock.js';
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
      const events = client.events.bind(client);
      client.events = async (id, after, limit, wait = 0) => {
        const page = await events(id, after, limit, wait);
        answers.push({ wait, events: page.events.length });
        return page;
      };
      return client;
    };
    const code = await runsCommand(['start', 'support', '--input', 'order arrived damaged', '--run-id', 'w-1', '--watch', '--api', api], io, counting);
    expect(code).toBe(0);
    // Long polls (20 s) that answered as events landed: several answers, each with a few events.
    expect(answers.every((a) => a.wait === 20)).toBe(true);
    expect(answers.filter((a) => a.events > 0).length).toBeGreaterThan(3);
    const seqs = io.stdout.map((line) => Number(line.trim().split(/\s+/)[0]));
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(io.stdout[0]).toMatch(/^ {4}1 run_started {8}support@1\.0\.0/);
    expect(io.stdout.at(-1)).toMatch(/run_completed\s+Refunded order/);
    // A turn's last result carries the next model call's reservation, and says so.
    expect(io.stdout.some((line) => /tool_result .* ok from tool: .*; step \d+, up to \d+ output tokens reserved$/.test(line))).toBe(true);
    expect(io.stderr.join('\n')).toMatch(/Status: completed after 4 turns, 4 tool calls/);
    const all = (await new LogbookClient(api).allEvents('w-1')).map(eventLine);
    expect(io.stdout).toEqual(all);
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
    expect(JSON.parse(json.stdout[0] ?? '{}')).toMatchObject({ seq: 1, type: 'run_started' });
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
      events: async (_id: string, after: number, _limit: number, wait: number) => {
        waits.push(wait);
        return { runId: 'p-1', events: events.filter((e) => e.seq > after) };
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
      events: async (_id: string, after: number) => ({ runId: 'p-1', events: events.slice(0, 2).filter((e) => e.seq > after) }),
    } as unknown as LogbookClient;
    const io = capture();
    expect(await followRun(client, 'p-1', io)).toBe(WATCH_EXIT_CODES.parked);
    expect(io.stderr.join('\n')).toContain('--action retry|fail');
  });

  it('when the events say completed before the head is projected, the summary waits for the head: final usage and the answer', async () => {
    const done = [...events.slice(0, 2), { seq: 3, type: 'tool_result', callId: '3-0', ok: true }, { seq: 4, type: 'run_completed', answer: { kind: 'inline', value: 'ok' } }];
    const heads = [view('running'), view('running'), view('completed', { usage: { steps: 2, inputTokens: 382, outputTokens: 80, costUsd: 0.0023 }, result: 'All done.' })];
    let reads = 0;
    const client = {
      getRun: async () => heads[Math.min(reads++, heads.length - 1)],
      events: async (_id: string, after: number) => ({ runId: 'p-1', events: done.filter((e) => e.seq > after) }),
    } as unknown as LogbookClient;
    const io = capture();
    expect(await followRun(client, 'p-1', io)).toBe(WATCH_EXIT_CODES.completed);
    const summary = io.stderr.join('\n');
    expect(summary).toContain('382 input + 80 output tokens');
    expect(summary).toContain('Answer: All done.');
  });
});
