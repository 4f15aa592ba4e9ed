/**
 * `npm run demo:booking`: the booking agent on the local stack (emulators, the API, worker
 * processes), as its users would drive it over HTTP:
 * 1. a trip that does not fit the input schema is refused with a 400 naming the fields;
 * 2. the traveller's visa letter is uploaded (`POST /attachments`) and a good trip carrying its
 *    reference runs until the charge, which waits for a person (`GET /runs/{id}` lists it);
 * 3. the travel manager approves it (`POST /runs/{id}/approve`), a worker process is SIGKILLed
 *    while the run goes on, and the run completes with the booking confirmation as `output`,
 *    which names the visa letter by the sha256 of the bytes the model was sent;
 * 4. the fake services' state file shows one hold, one charge and one ticketing.
 */
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { AttachmentRef } from 'logbook';
import { ApiError, LogbookClient, UsageError, processOutput, startLocalStack, watchRun, type EmulatorEndpoints } from 'logbook/local';
import { DEMO_TRIP, visaLetter } from './booking-world.js';
import { JsonFileStore } from './state-store.js';
import { emptyTravelState } from './travel-services.js';

const AGENTS_MODULE = fileURLToPath(new URL('./agents.ts', import.meta.url));

export interface BookingDemoOptions {
  /** API port; 0 (the default) picks a free one. */
  port?: number;
  dynamo?: 'auto' | 'dynalite' | 'dynamodb-local';
  /** Running emulators to use (tests) instead of starting them. */
  endpoints?: EmulatorEndpoints;
  /** Resource name prefix (tests give each their own). */
  prefix?: string;
  /** The worker log and the services' state file go here. Default ./.logbook. */
  workDir?: string;
  log?: (line: string) => void;
}

export interface BookingDemoReport {
  /** The paths the 400 named for the misfit trip. */
  refused: string[];
  /** The tool the run waited on for approval, with its arguments. */
  approval?: { tool: string; args: unknown };
  /** The reference POST /attachments answered for the visa letter the trip carries. */
  document: AttachmentRef;
  killedWorker: boolean;
  status: string;
  output: unknown;
  /** The writes the services applied (`service:op`), and how many repeats they deduplicated. */
  applied: string[];
  deduplicated: number;
  ok: boolean;
}

export async function bookingDemo(options: BookingDemoOptions = {}): Promise<BookingDemoReport> {
  const log = options.log ?? (() => {});
  const workDir = resolve(options.workDir ?? '.logbook');
  const stateFile = join(workDir, 'booking-services.json');
  // A fresh stack is a fresh world: the fake airline forgets the last demo's bookings.
  rmSync(stateFile, { force: true });
  log('Starting the local stack with examples/booking-agent/agents.ts ...');
  const stack = await startLocalStack({
    agentsModule: AGENTS_MODULE,
    workDir,
    port: options.port ?? 0,
    ...(options.endpoints ? { endpoints: options.endpoints } : { dynamo: options.dynamo ?? 'auto' }),
    ...(options.prefix ? { prefix: options.prefix } : {}),
    env: { BOOKING_STATE_FILE: stateFile },
  });
  try {
    log(`API: ${stack.apiUrl}   Inspector: ${stack.uiUrl}`);
    const client = new LogbookClient(stack.apiUrl);

    const bad = { ...DEMO_TRIP, to: 'Oslo', date: 'next Friday' };
    log(`\n1. POST /runs with ${JSON.stringify(bad)}`);
    let refused: string[] = [];
    try {
      await client.startRun({ agent: 'booking', input: bad });
      log('   accepted: the input schema did not hold');
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 400) throw error;
      const issues = (error.body as { error?: { issues?: { path: string; message: string }[] } } | undefined)?.error?.issues ?? [];
      refused = issues.map((i) => i.path);
      log(`   ${error.status}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
    }

    const letter = visaLetter();
    log(`\n2. POST /attachments?name=${letter.name} (${letter.bytes.byteLength} bytes, ${letter.mediaType})`);
    const { ref: document } = await client.upload(letter.bytes, letter.mediaType, letter.name);
    log(`   201 ${JSON.stringify(document)}`);
    const runId = `trip-${Date.now().toString(36)}`;
    const trip = { ...DEMO_TRIP, document };
    log(`   POST /runs with ${JSON.stringify(DEMO_TRIP).slice(0, -1)},"document":<that reference>} (run ${runId})`);
    await client.startRun({ agent: 'booking', input: trip, runId });
    const { view: waiting } = await watchRun(client, runId, {
      until: new Set(['awaiting_approval', 'completed', 'failed', 'parked', 'cancelled']),
      timeoutMs: 120_000,
    });
    const wait = waiting.waiting?.find((w) => w.kind === 'approval');
    let killedWorker = false;
    if (wait) {
      log(`   ${waiting.status}: ${wait.tool} ${JSON.stringify(wait.args)}`);
      log(`\n3. POST /runs/${runId}/approve { callId: "${wait.callId}", decision: "approve" }, then SIGKILL a busy worker`);
      await client.approve(runId, { callId: wait.callId, decision: 'approve', comment: 'within policy' });
      // Kill the first worker seen busy: its successor resumes the run from its log, and the
      // services, whose state is in a file, dedupe whatever it repeats.
      for (let i = 0; i < 100 && !(killedWorker = stack.runner.killBusyWorker()); i++) await new Promise((r) => setTimeout(r, 20));
      log(
        killedWorker
          ? '   killed a busy worker (SIGKILL); the next one resumes the run from its log'
          : '   no worker was busy to kill: the run went on undisturbed',
      );
    } else {
      log(`   the run is ${waiting.status}, not waiting for an approval`);
    }
    const { view } = await watchRun(client, runId, { timeoutMs: 180_000 });
    log(`   ${view.status} after ${view.usage.steps} model calls ($${view.usage.costUsd.toFixed(4)}); output:`);
    log(JSON.stringify(view.output, null, 2).replace(/^/gm, '   '));

    const effects = new JsonFileStore(stateFile, emptyTravelState()).read().effects;
    const applied = effects.filter((e) => e.applied && !e.readOnly).map((e) => `${e.service}:${e.op}`);
    const deduplicated = effects.filter((e) => !e.applied).length;
    log(`\n4. The services applied ${applied.join(', ')}${deduplicated ? ` and deduplicated ${deduplicated} repeated request(s)` : ''}.`);
    // The model named the file by the hash of the bytes it received: the upload reached it.
    const named = (view.output as { travelDocument?: { sha256?: string } } | undefined)?.travelDocument?.sha256 === document.sha256;
    const ok = refused.length > 0 && wait !== undefined && view.status === 'completed' && applied.length === 3 && new Set(applied).size === 3 && named;
    return {
      refused,
      ...(wait ? { approval: { tool: wait.tool, args: wait.args } } : {}),
      document,
      killedWorker,
      status: view.status,
      output: view.output,
      applied,
      deduplicated,
      ok,
    };
  } finally {
    await stack.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    const { values } = parseArgs({
      args: process.argv.slice(2),
      options: { port: { type: 'string', default: '0' }, dynamo: { type: 'string', default: 'auto' } },
      strict: true,
    });
    const dynamo = values.dynamo;
    if (dynamo !== 'auto' && dynamo !== 'dynalite' && dynamo !== 'dynamodb-local') throw new UsageError('--dynamo must be auto, dynalite or dynamodb-local');
    const report = await bookingDemo({ port: Number(values.port), dynamo, log: (line) => processOutput.out(line) });
    process.exitCode = report.ok ? 0 : 1;
  } catch (error) {
    processOutput.err(`booking demo: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exitCode = error instanceof UsageError ? 2 : 1;
  }
}
