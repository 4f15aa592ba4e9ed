import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type JsonValue } from 'logbook';
import { startRun } from 'logbook/engine';
import { WorkerHalt, agentsWorld, driveRun, effectLog, spawnWorker } from 'logbook/testing';
import { createApiApp } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import type { LogbookClient } from '../../../dev/cli/api-client.js';
import { main } from '../../../dev/cli/main.js';
import type { Output } from '../../../dev/cli/output.js';
import { replayCommand } from '../../../dev/cli/replay-command.js';
import { shopAgents } from '../testing/shop-agent.js';

const V1 = 'test/unit/testing/shop-agent.ts';
const V2 = 'test/unit/testing/shop-agent-v2.ts';
const TOKEN = 't0k3n';
const AUTH = ['--header', `Authorization: Bearer ${TOKEN}`];

function capture(): Output & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => stdout.push(t), err: (t) => stderr.push(t), tty: false };
}

let api: string;
let close: () => Promise<void>;
let dir: string;

/**
 * The real HTTP API (the Hono app the Lambda handler runs) over an in-memory engine holding three
 * shop runs: one mid-run (its worker died before the second model call), one parked (its model
 * had gone when it started), one completed.
 */
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'logbook-replay-'));
  const world = agentsWorld(shopAgents(effectLog<JsonValue>()));
  const worker = spawnWorker(world);
  const tenant = 'acme';
  let modelCalls = 0;
  const dying = spawnWorker(world, {
    at(point) {
      if (point === 'before-model' && ++modelCalls === 2) throw new WorkerHalt('before the second model call');
    },
  });
  await startRun(worker.deps, { tenant, runId: 'mid-run', agent: 'shop', input: 'one mug' });
  await driveRun(world, { tenant, runId: 'mid-run' }, { worker: () => dying, maxIterations: 1 }).catch(() => undefined);
  await startRun(worker.deps, { tenant, runId: 'done-run', agent: 'shop', input: 'one mug' });
  await driveRun(world, { tenant, runId: 'done-run' }, { worker: () => worker });
  const bare = { ...world, models: { resolve: () => undefined } };
  const bareWorker = spawnWorker(bare);
  await startRun(bareWorker.deps, { tenant, runId: 'parked-run', agent: 'shop', input: 'one mug' });
  await driveRun(bare, { tenant, runId: 'parked-run' }, { worker: () => bareWorker });

  // Like a JWT-authorized API: no bearer token, no tenant (401).
  const app = createApiApp({
    service: engineRunService(worker.deps),
    caller: (c) => (c.req.header('authorization') === `Bearer ${TOKEN}` ? { tenant, principal: 'cli-test' } : undefined),
  });
  const server = await new Promise<ReturnType<typeof serve>>((ok, fail) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
    s.once('listening', () => ok(s));
    s.once('error', fail);
  });
  api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => new Promise<void>((r) => server.close(() => r()));
});

afterAll(async () => {
  await close?.();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('logbook replay-check', () => {
  it('fetches the unfinished runs from the API and passes them when the agents still serve them (exit 0)', async () => {
    const io = capture();
    expect(await main(['replay-check', '--agents', V1, '--api', api, ...AUTH], io)).toBe(0);
    const text = io.stdout.join('\n');
    expect(text).toMatch(/^RUN\s+AGENT\s+STATUS\s+VERDICT\s+REASONS/);
    expect(text).toMatch(/mid-run\s+shop@1\s+running\s+ok/);
    expect(text).toMatch(/parked-run\s+shop@1\s+parked\s+ok/);
    expect(text).not.toContain('done-run'); // finished runs are not fetched by default
    // The parked run waits for exactly what this deploy brings back.
    expect(text).toContain('note: parked for missing_model; this deploy serves it: resolve with {"action":"retry"}');
    expect(text).toMatch(/2 run\(s\): 2 ok, 0 stranded, 0 finished \(skipped\)$/);
    expect(io.stderr).toEqual(['fetched the logs of 2 run(s) in status running, waiting, parked']);
  });

  it('exits 1 and names the tool when the next version changed a pinned schema', async () => {
    const io = capture();
    expect(await main(['replay-check', '--agents', V2, '--api', api, ...AUTH], io)).toBe(1);
    const text = io.stdout.join('\n');
    expect(text).toMatch(/mid-run\s+shop@1\s+running\s+stranded\s+missing_tool charge_card/);
    expect(text).toMatch(/mid-run:\n {2}- tool charge_card@1 \(schema [0-9a-f]{12}\) has no implementation: charge_card is registered only with schema [0-9a-f]{12} \(adds required "currency"\)/);
    expect(text).toContain('note: agent shop@1 is no longer registered');
    expect(text).toMatch(/2 run\(s\): 0 ok, 2 stranded, 0 finished \(skipped\): deploying these agents would strand the runs above$/);
  });

  it('records the logs to a JSONL file with --out, and checks that file later with --file (JSON output)', async () => {
    const file = join(dir, 'runs.jsonl');
    const rec = capture();
    expect(await main(['replay-check', '--api', api, ...AUTH, '--status', 'running,parked,completed', '--out', file], rec)).toBe(0);
    expect(rec.stdout).toEqual([]);
    const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { runId: string; events: { seq: number }[] });
    expect(lines.map((l) => l.runId).sort()).toEqual(['done-run', 'mid-run', 'parked-run']);
    expect(lines.every((l) => l.events[0]?.seq === 1)).toBe(true);
    const io = capture();
    expect(await main(['replay-check', '--agents', V2, '--file', file, '--json'], io)).toBe(1);
    const report = JSON.parse(io.stdout.join('')) as { ok: number; stranded: number; finished: number; runs: { runId: string; verdict: string }[] };
    expect(report).toMatchObject({ ok: 0, stranded: 2, finished: 1 });
    expect(report.runs.find((r) => r.runId === 'done-run')?.verdict).toBe('finished');
    // `--out -` writes the JSONL to stdout, for `> runs.jsonl`.
    const piped = capture();
    expect(await main(['replay-check', '--api', api, ...AUTH, '--out', '-'], piped)).toBe(0);
    expect(piped.stdout.map((l) => (JSON.parse(l) as { runId: string }).runId).sort()).toEqual(['mid-run', 'parked-run']);
  });

  it('follows list pages and fetches each run once across statuses', async () => {
    const calls: unknown[][] = [];
    const client = {
      listRuns: async (q: { status?: string; cursor?: string }) => {
        calls.push(['list', q.status, q.cursor]);
        if (q.status === 'running' && !q.cursor) return { runs: [{ runId: 'a' }], cursor: 'p2' };
        if (q.status === 'running') return { runs: [{ runId: 'b' }] };
        return { runs: [{ runId: 'a' }] };
      },
      allEvents: async (runId: string) => (calls.push(['events', runId]), []),
    } as unknown as LogbookClient;
    const io = capture();
    const made: unknown[] = [];
    const makeClient = (url: string, headers: Record<string, string>) => (made.push([url, headers]), client);
    expect(await replayCommand(['--agents', V1, '--status', 'running,parked', '--header', 'X-Api-Key: k1'], io, { makeClient })).toBe(1);
    expect(made).toEqual([['http://127.0.0.1:8787', { 'x-api-key': 'k1' }]]);
    expect(calls).toEqual([
      ['list', 'running', undefined],
      ['list', 'running', 'p2'],
      ['list', 'parked', undefined],
      ['events', 'a'],
      ['events', 'b'],
    ]);
    // An empty log cannot be resumed: it is stranded, not skipped.
    expect(io.stdout.join('\n')).toMatch(/a\s+\?\s+unknown\s+stranded\s+corrupt_log/);
  });

  it('reports an API that refuses the caller with exit code 1', async () => {
    const io = capture();
    expect(await main(['replay-check', '--agents', V1, '--api', api], io)).toBe(1);
    expect(io.stderr[0]).toMatch(/^logbook: 401 /);
  });

  it('reports usage mistakes and unreadable files with exit code 2', async () => {
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"runId":"x","events":[]}\n\nnot json\n');
    const wrong = join(dir, 'wrong.jsonl');
    writeFileSync(wrong, '{"runId":"x","events":{}}\n');
    const good = join(dir, 'good.jsonl');
    writeFileSync(good, '{"runId":"x","events":[]}\n');
    for (const [argv, message] of [
      [['replay-check', '--api', api, ...AUTH], /--agents FILE is required/],
      [['replay-check', '--agents', V1, '--file', bad, '--api', api, ...AUTH], /use either --file, or --api/],
      [['replay-check', '--agents', V1, '--status', 'running,done'], /--status takes a comma-separated list of running, waiting, parked, completed, failed, cancelled; got "running,done"/],
      [['replay-check', '--agents', V1, '--file', bad], /bad\.jsonl line 3: not JSON/],
      [['replay-check', '--agents', V1, '--file', wrong], /wrong\.jsonl line 1: events: .*expected \{"runId"/],
      [['replay-check', '--agents', V1, '--file', join(dir, 'missing.jsonl')], /cannot read --file/],
      [['replay-check', '--agents', 'nope/agents.ts', '--file', good], /agents module nope\/agents\.ts not found/],
      [['replay-check', '--agents', V1, '--bogus'], /Unknown option '--bogus'/],
      [['replay-check', '--agents', V1, '--header', 'secret-token-without-name'], /^logbook: --header must look like "Name: value"$/],
    ] as const) {
      const io = capture();
      expect(await main([...argv], io), argv.join(' ')).toBe(2);
      expect(io.stderr[0]).toMatch(message);
    }
  });
});
