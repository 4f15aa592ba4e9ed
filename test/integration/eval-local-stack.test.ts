/**
 * Evals against the local stack (the real adapters on the suite's emulators, worker processes):
 * a booking trip with the visa letter attached is booked through the API (the charge approved),
 * `logbook eval` reads it straight from the stack and replays it (served from the log, the letter
 * copied into the eval's world), `runs export` writes it, and `runs import` writes runs recorded
 * elsewhere (another tenant, a payload offloaded to S3) into the stack's table and bucket, where
 * the API serves them. Nothing of the eval touches the stack's fake services.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatRunFile, parseRunFile, type EvalReport, type ExportedRun } from 'logbook/testing';
import { LogbookClient } from '../../dev/cli/api-client.js';
import { main } from '../../dev/cli/main.js';
import type { Output } from '../../dev/cli/output.js';
import { watchRun } from '../../dev/local/run-watch.js';
import { startLocalStack, type LocalStack } from '../../dev/local/stack.js';
import { DEMO_TRIP, visaLetter } from '../../examples/booking-agent/booking-world.js';
import { recordTrips } from '../../examples/booking-agent/booking-evals.js';
import { JsonFileStore } from '../../examples/booking-agent/state-store.js';
import { emptyTravelState } from '../../examples/booking-agent/travel-services.js';
import { endpointsFor, uniquePrefix } from '../setup/emulator-context.js';

const endpoints = endpointsFor('dynalite') ?? endpointsFor('dynamodb-local');
const CANDIDATE = 'examples/booking-agent/booking-evals.ts';
const workDir = mkdtempSync(join(tmpdir(), 'logbook-eval-stack-'));
const stateFile = join(workDir, 'booking-services.json');
let stack: LocalStack | undefined;

function capture(): Output & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => stdout.push(t), err: (t) => stderr.push(t), tty: false };
}

beforeAll(async () => {
  if (!endpoints) return;
  stack = await startLocalStack({
    agentsModule: resolve('examples/booking-agent/agents.ts'),
    port: 0,
    endpoints,
    prefix: uniquePrefix('eval-stack'),
    workDir,
    concurrency: 1,
    env: { BOOKING_STATE_FILE: stateFile },
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  rmSync(workDir, { recursive: true, force: true });
});

describe.skipIf(!endpoints)('evals on the local stack', () => {
  it('evaluates a booked trip straight from the stack, its attachment included, and exports it', { timeout: 240_000 }, async () => {
    const client = new LogbookClient(stack!.apiUrl);
    const letter = visaLetter();
    const { ref } = await client.upload(letter.bytes, letter.mediaType, letter.name);
    await client.startRun({ agent: 'booking', runId: 'trip-doc', input: { ...DEMO_TRIP, document: ref } });
    const { view: waiting } = await watchRun(client, 'trip-doc', {
      until: new Set(['awaiting_approval', 'completed', 'failed', 'parked']),
      timeoutMs: 120_000,
    });
    const wait = waiting.waiting?.find((w) => w.kind === 'approval');
    expect(wait, waiting.status).toBeDefined();
    await client.approve('trip-doc', { callId: wait!.callId, decision: 'approve' });
    const { view } = await watchRun(client, 'trip-doc', { timeoutMs: 120_000 });
    expect(view.status).toBe('completed');
    const effectsBefore = new JsonFileStore(stateFile, emptyTravelState()).read().effects.length;

    const io = capture();
    const report = join(workDir, 'report.json');
    expect(
      await main(['eval', '--agents', CANDIDATE, '--api', stack!.apiUrl, '--agent', 'booking', '--min-score', '1', '--report', report], io),
      io.stderr.join('\n'),
    ).toBe(0);
    const written = JSON.parse(readFileSync(report, 'utf8')) as EvalReport;
    expect(written.counts).toMatchObject({ runs: 1, evaluated: 1, served: 4, notExecuted: 0, executed: 0 });
    expect(written.runs[0]?.candidate?.output).toMatchObject({ travelDocument: { sha256: ref.sha256 } });
    // The stack's services (their state is in a file its workers share) saw nothing of the eval.
    expect(new JsonFileStore(stateFile, emptyTravelState()).read().effects).toHaveLength(effectsBefore);

    const file = join(workDir, 'runs.jsonl');
    expect(await main(['runs', 'export', '--api', stack!.apiUrl, '--out', file], capture())).toBe(0);
    const [exported] = parseRunFile(readFileSync(file, 'utf8'));
    expect(exported).toMatchObject({ tenant: 'local', runId: 'trip-doc' });
    expect(exported!.attachments.map((a) => a.sha256)).toEqual([ref.sha256]);
  });

  it('imports runs recorded elsewhere into the stack under its tenant, payloads in its bucket, served by its API', { timeout: 120_000 }, async () => {
    const { runs } = await recordTrips(2);
    // One payload large enough to live in the blob store: its reference must resolve in S3 after the import.
    const big: ExportedRun = { ...runs[1]!, runId: 'trip-big', events: runs[1]!.events.map((e, i) => (i === 0 ? { ...e, runId: 'trip-big' } : e)) };
    const text = 'x'.repeat(20_000);
    const sha256 = createHash('sha256').update(`"${text}"`).digest('hex');
    const blob = { key: `blobs/acme/trip-big/${sha256}.json`, sha256, text: `"${text}"` };
    const last = big.events.length - 1;
    big.events[last] = {
      ...big.events[last],
      answer: { kind: 'blob', key: blob.key, sha256: blob.sha256, size: blob.text.length, summary: text.slice(0, 200) },
    };
    big.blobs = [blob];
    const file = join(workDir, 'elsewhere.jsonl');
    writeFileSync(file, formatRunFile([runs[0]!, big]));
    const io = capture();
    expect(await main(['runs', 'import', file, '--api', stack!.apiUrl], io), io.stderr.join('\n')).toBe(0);
    expect(io.stdout.at(-1)).toBe('2 of 2 run(s) imported');
    const client = new LogbookClient(stack!.apiUrl);
    expect((await client.getRun('trip-0001')).status).toBe('completed');
    const bytes = await client.blob('trip-big', blob.sha256);
    expect(new TextDecoder().decode(bytes)).toBe(blob.text);
    const again = capture();
    expect(await main(['runs', 'import', file, '--api', stack!.apiUrl], again)).toBe(0);
    expect(again.stdout.at(-1)).toBe('0 of 2 run(s) imported');
  });
});
