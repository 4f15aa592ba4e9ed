/**
 * `logbook runs export`, `runs import` and `logbook eval` against the real HTTP API (the Hono app
 * the Lambda handler runs) over a memory world holding recorded booking trips: export through a
 * token or a signer, eval from the file or straight from the API with filters, a report file, and
 * the exit code a CI gate reads (0 at or above the threshold, 1 under it, 2 for a usage mistake).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryStorage, parseRunFile, type EvalReport } from 'logbook/testing';
import { createApiApp } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import { main } from '../../../dev/cli/main.js';
import { apiClient } from '../../../dev/cli/api-access.js';
import type { Output } from '../../../dev/cli/output.js';
import { withImportRoute } from '../../../dev/local/import-route.js';
import { recordTrips } from '../../../examples/booking-agent/booking-evals.js';
import { bookingWorld } from '../../../examples/booking-agent/booking-world.js';
import { createEngine } from '../../../lib/engine/engine.js';
import { ManualClock, SequentialIds } from '../../../lib/adapters/memory/manual-clock.js';

const CANDIDATE = 'examples/booking-agent/booking-evals.ts';
const TOKEN = 't0k3n';
const AUTH = ['--header', `Authorization: Bearer ${TOKEN}`];
const SIGNED = 'AWS4-HMAC-SHA256 Credential=test';

function capture(): Output & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => stdout.push(t), err: (t) => stderr.push(t), tty: false };
}

async function listen(fetch: (request: Request) => Response | Promise<Response>): Promise<{ url: string; close: () => Promise<void> }> {
  const server = await new Promise<ReturnType<typeof serve>>((ok, fail) => {
    const s = serve({ fetch, port: 0, hostname: '127.0.0.1' });
    s.once('listening', () => ok(s));
    s.once('error', fail);
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

let api: { url: string; close: () => Promise<void> };
let local: { url: string; close: () => Promise<void> };
let localStorage: ReturnType<typeof memoryStorage>;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'logbook-eval-'));
  const world = bookingWorld();
  await recordTrips(5, world);
  const deps = createEngine({ ...world.storage, models: world.models, registry: world.registry, clock: world.clock, ids: new SequentialIds('api') });
  // Like a deployed API: a bearer token (JWT authorizer) or a SigV4 signature (IAM), else 401.
  const app = createApiApp({
    service: engineRunService(deps),
    caller: (c) => ([`Bearer ${TOKEN}`, SIGNED].includes(c.req.header('authorization') ?? '') ? { tenant: 'acme', principal: 'cli-test' } : undefined),
  });
  api = await listen(app.fetch);
  // The local stack's shape: the API for tenant `local`, with the import route in front.
  localStorage = memoryStorage();
  const localDeps = createEngine({
    ...localStorage,
    models: world.models,
    registry: world.registry,
    clock: new ManualClock(),
    ids: new SequentialIds('local'),
  });
  const localApp = createApiApp({ service: engineRunService(localDeps), caller: () => ({ tenant: 'local', principal: 'local-user' }) });
  local = await listen(withImportRoute(localApp.fetch, localStorage, 'local'));
});

afterAll(async () => {
  await api?.close();
  await local?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function withEnv<T>(env: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

describe('logbook runs export / import', () => {
  it('exports the recorded runs through the API as a run file, filtered by agent, version and limit', async () => {
    const io = capture();
    const file = join(dir, 'runs.jsonl');
    expect(await main(['runs', 'export', '--api', api.url, ...AUTH, '--agent', 'booking', '--agent-version', '1.0.0', '--out', file], io)).toBe(0);
    const runs = parseRunFile(readFileSync(file, 'utf8'));
    expect(runs.map((r) => r.runId).sort()).toEqual(['trip-0001', 'trip-0002', 'trip-0003', 'trip-0004', 'trip-0005']);
    expect(runs.every((r) => r.tenant === 'acme' && r.events[0]?.type === 'run_started')).toBe(true);
    const limited = capture();
    expect(await main(['runs', 'export', '--api', api.url, ...AUTH, '--limit', '2', '--since', '3650d'], limited)).toBe(0);
    expect(parseRunFile(limited.stdout.join('\n'))).toHaveLength(2);
    const none = capture();
    expect(await main(['runs', 'export', '--api', api.url, ...AUTH, '--agent-version', '9'], none)).toBe(0);
    expect(none.stdout).toEqual([]);
  });

  it('signs every request when a signer is in use (SigV4 for a deployed API), and is refused without credentials', async () => {
    const signed = await apiClient(
      { api: api.url, sigv4: true, region: 'eu-west-1' },
      { env: {}, signer: async () => async () => ({ authorization: SIGNED }) },
    );
    expect((await signed.listRuns({ status: 'completed' })).runs).toHaveLength(5);
    const io = capture();
    expect(await main(['runs', 'export', '--api', api.url], io)).toBe(1);
    expect(io.stderr.join('\n')).toMatch(/401 unauthorized/);
    await expect(
      apiClient({ api: 'https://abc.execute-api.eu-west-1.amazonaws.com/', header: ['Authorization: Bearer x'] }, { env: {} }),
    ).resolves.toMatchObject({ baseUrl: 'https://abc.execute-api.eu-west-1.amazonaws.com/' });
    await expect(apiClient({ api: 'https://api.example.com/', sigv4: true }, { env: {} })).rejects.toThrow(/--region R/);
  });

  it('imports a run file into the local stack under its tenant, then lists them; a second import skips them', async () => {
    const file = join(dir, 'to-import.jsonl');
    expect(await main(['runs', 'export', '--api', api.url, ...AUTH, '--out', file], capture())).toBe(0);
    const io = capture();
    expect(await main(['runs', 'import', file, '--api', local.url], io)).toBe(0);
    expect(io.stdout.at(-1)).toBe('5 of 5 run(s) imported');
    const listed = capture();
    expect(await main(['runs', 'list', '--api', local.url, '--json'], listed)).toBe(0);
    expect((JSON.parse(listed.stdout[0]!) as { runs: unknown[] }).runs).toHaveLength(5);
    const again = capture();
    expect(await main(['runs', 'import', file, '--api', local.url, '--json'], again)).toBe(0);
    const second = JSON.parse(again.stdout[0]!) as { imported: string[]; skipped: { reason: string }[] };
    expect(second.imported).toEqual([]);
    expect(second.skipped.map((s) => s.reason)).toEqual(Array(5).fill('a run with this id exists here'));
    const deployed = capture();
    expect(await main(['runs', 'import', file, '--api', api.url], deployed)).toBe(2);
    expect(deployed.stderr[0]).toMatch(/has no import route: runs import into the local stack/);
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"format":"logbook.run"}\n');
    const refused = capture();
    expect(await main(['runs', 'import', bad, '--api', local.url], refused)).toBe(1);
    expect(refused.stderr[0]).toMatch(/line 1: /);
  });
});

describe('logbook eval', () => {
  it('passes an unchanged candidate over an exported file: exit 0, the report file written', async () => {
    const file = join(dir, 'eval-runs.jsonl');
    expect(await main(['runs', 'export', '--api', api.url, ...AUTH, '--out', file], capture())).toBe(0);
    const report = join(dir, 'report.json');
    const io = capture();
    expect(await main(['eval', '--agents', CANDIDATE, '--file', file, '--min-score', '1', '--report', report], io)).toBe(0);
    expect(io.stdout.join('\n')).toMatch(
      /every run scored 1\.00[\s\S]*5 run\(s\): 5 evaluated, 0 skipped, 0 error\(s\); calls: 20 served from the log, 0 not executed[\s\S]*PASSED \(score ≥ 1\)/,
    );
    const written = JSON.parse(readFileSync(report, 'utf8')) as EvalReport;
    expect(written).toMatchObject({ format: 'logbook.eval-report', v: 1, passed: true, score: 1, candidate: { booking: '1.1.0' } });
    expect(io.stderr.join('\n')).toMatch(/evaluated 5 run\(s\) in [\d.]+ s \([\d.]+ runs\/s\); report: /);
  });

  it('fails the gate on the planted prompt change, straight from the API: exit 1, the table names what it would have charged', async () => {
    const io = capture();
    const report = join(dir, 'reworded.json');
    const code = await withEnv({ BOOKING_EVAL_REWORD: '1' }, () =>
      main(['eval', '--agents', CANDIDATE, '--api', api.url, ...AUTH, '--agent', 'booking', '--min-score', '0.9', '--report', report], io),
    );
    expect(code).toBe(1);
    const text = io.stdout.join('\n');
    expect(text).toMatch(/^RUN +CANDIDATE +SCORE +OUTPUT +CALLS +SCHEMA +ΔTOKENS +ΔCOST +WOULD CALL$/m);
    expect(text).toMatch(
      /^trip-000\d +failed +0\.\d\d +0\.00 +0\.50 +0\.00 +\+\d+ +\+\$0\.\d{4} +charge_card\(\{"amountEur":\d+,"card":"\?","locator":"PNR\d{4}"\}\) \+1$/m,
    );
    expect(text).toMatch(/FAILED: score 0\.\d+ is under 0\.9$/);
    expect((JSON.parse(readFileSync(report, 'utf8')) as EvalReport).counts).toMatchObject({ evaluated: 5, notExecuted: 10, executed: 0 });
    const short = capture();
    await withEnv({ BOOKING_EVAL_REWORD: '1' }, () =>
      main(['eval', '--agents', CANDIDATE, '--api', api.url, ...AUTH, '--rows', '2', '--report', report], short),
    );
    expect(
      short.stdout
        .join('\n')
        .split('\n')
        .filter((l) => l.startsWith('trip-000') && !l.includes(': ')),
    ).toHaveLength(2);
    expect(short.stdout.join('\n')).toContain('… 3 more below 1 (--all lists every run; the report file has them all)');
    // The same with a per-scorer threshold only, and --json for scripts.
    const json = capture();
    const byScorer = await withEnv({ BOOKING_EVAL_REWORD: '1' }, () =>
      main(['eval', '--agents', CANDIDATE, '--api', api.url, ...AUTH, '--threshold', 'same_tool_calls=0.5', '--json', '--report', report], json),
    );
    expect(byScorer).toBe(0);
    expect((JSON.parse(json.stdout[0]!) as EvalReport).thresholds).toEqual([{ name: 'same_tool_calls', min: 0.5, actual: 0.5, passed: true }]);
  });

  it('takes the application scorers from --scorers; a usage mistake exits 2 before anything runs', async () => {
    const scorers = join(dir, 'scorers.mjs');
    writeFileSync(
      scorers,
      `export default [{ name: 'same_total', score: ({ recorded, candidate }) => (recorded.output?.totalEur === candidate.output?.totalEur ? 1 : 0) }];\n`,
    );
    const file = join(dir, 'scored-runs.jsonl');
    expect(await main(['runs', 'export', '--api', api.url, ...AUTH, '--limit', '1', '--out', file], capture())).toBe(0);
    const json = capture();
    expect(
      await main(
        ['eval', '--agents', CANDIDATE, '--file', file, '--scorers', scorers, '--threshold', 'same_total=1', '--json', '--report', join(dir, 's.json')],
        json,
      ),
    ).toBe(0);
    expect((JSON.parse(json.stdout[0]!) as EvalReport).scorers.map((s) => s.name)).toContain('same_total');
    const cases: [string[], RegExp][] = [
      [['eval', '--file', file], /needs --agents FILE/],
      [['eval', '--agents', CANDIDATE, '--file', file, '--status', 'completed'], /--file takes the runs from a file: drop --status/],
      [['eval', '--agents', CANDIDATE, '--file', file, '--min-score', '2'], /--min-score must be a number from 0 to 1/],
      [['eval', '--agents', CANDIDATE, '--file', file, '--threshold', 'nope=1', '--report', join(dir, 'x.json')], /threshold for nope: no such scorer/],
      [['eval', '--agents', 'missing.ts', '--file', file], /--agents missing.ts not found/],
      [['eval', '--agents', CANDIDATE, '--file', join(dir, 'absent.jsonl')], /cannot read --file/],
    ];
    for (const [argv, message] of cases) {
      const io = capture();
      expect(await main(argv, io), argv.join(' ')).toBe(2);
      expect(io.stderr[0]).toMatch(message);
    }
    expect(existsSync(join(dir, 'x.json'))).toBe(false);
  });
});
