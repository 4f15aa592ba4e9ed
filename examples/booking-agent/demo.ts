/**
 * `npm run demo:booking`: the booking agent on the local stack (emulators, the API, worker
 * processes), as its users would drive it over HTTP:
 * 1. a trip that does not fit the input schema is refused with a 400 naming the fields;
 * 2. a good trip runs until the charge, which waits for a person (`GET /runs/{id}` lists it);
 * 3. the travel manager approves it (`POST /runs/{id}/approve`), a worker process is SIGKILLed
 *    while the run goes on, and the run completes with the booking confirmation as `output`;
 * 4. the fake services' state file shows one hold, one charge and one ticketing.
 */
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ApiError, LogbookClient, UsageError, processOutput, startLocalStack, watchRun, type Output } from 'logbook/local';
import { DEMO_TRIP } from './booking-world.js';
import { JsonFileStore } from './state-store.js';
import { emptyTravelState } from './travel-services.js';

const AGENTS_MODULE = fileURLToPath(new URL('./agents.ts', import.meta.url));

export async function bookingDemo(argv: string[], io: Output): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { port: { type: 'string', default: '0' }, dynamo: { type: 'string', default: 'auto' } }, strict: true });
  const dynamo = values.dynamo;
  if (dynamo !== 'auto' && dynamo !== 'dynalite' && dynamo !== 'dynamodb-local') throw new UsageError('--dynamo must be auto, dynalite or dynamodb-local');
  const workDir = resolve('.logbook');
  const stateFile = join(workDir, 'booking-services.json');
  // A fresh stack is a fresh world: the fake airline forgets the last demo's bookings.
  rmSync(stateFile, { force: true });
  io.out('Starting the local stack with examples/booking-agent/agents.ts ...');
  const stack = await startLocalStack({
    agentsModule: AGENTS_MODULE,
    workDir,
    port: Number(values.port),
    dynamo,
    env: { BOOKING_STATE_FILE: stateFile },
  });
  try {
    io.out(`API: ${stack.apiUrl}   Inspector: ${stack.uiUrl}`);
    const client = new LogbookClient(stack.apiUrl);

    const bad = { ...DEMO_TRIP, to: 'Oslo', date: 'next Friday' };
    io.out(`\n1. POST /runs with ${JSON.stringify(bad)}`);
    try {
      await client.startRun({ agent: 'booking', input: bad });
      io.err('   accepted: the input schema did not hold');
      return 1;
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 400) throw error;
      const issues = (error.body as { error?: { issues?: { path: string; message: string }[] } } | undefined)?.error?.issues ?? [];
      io.out(`   ${error.status}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
    }

    const runId = `trip-${Date.now().toString(36)}`;
    io.out(`\n2. POST /runs with ${JSON.stringify(DEMO_TRIP)} (run ${runId})`);
    await client.startRun({ agent: 'booking', input: DEMO_TRIP, runId });
    const { view: waiting } = await watchRun(client, runId, {
      until: new Set(['awaiting_approval', 'completed', 'failed', 'parked', 'cancelled']),
      timeoutMs: 120_000,
    });
    const wait = waiting.waiting?.find((w) => w.kind === 'approval');
    if (!wait) {
      io.err(`   the run is ${waiting.status}, not waiting for an approval`);
      return 1;
    }
    io.out(`   ${waiting.status}: ${wait.tool} ${JSON.stringify(wait.args)}`);

    io.out(`\n3. POST /runs/${runId}/approve { callId: "${wait.callId}", decision: "approve" }, then SIGKILL a busy worker`);
    await client.approve(runId, { callId: wait.callId, decision: 'approve', comment: 'within policy' });
    // Kill the first worker seen busy on this run: its successor resumes from the log, and the
    // services, whose state is in a file, dedupe whatever it repeats.
    let killed = false;
    for (let i = 0; i < 100 && !(killed = stack.runner.killBusyWorker()); i++) await new Promise((r) => setTimeout(r, 20));
    io.out(
      killed ? '   killed a busy worker (SIGKILL); the next one resumes the run from its log' : '   no worker was busy to kill: the run went on undisturbed',
    );
    const { view } = await watchRun(client, runId, { timeoutMs: 180_000 });
    io.out(`   ${view.status} after ${view.usage.steps} model calls ($${view.usage.costUsd.toFixed(4)}); output:`);
    io.out(JSON.stringify(view.output, null, 2).replace(/^/gm, '   '));

    const effects = new JsonFileStore(stateFile, emptyTravelState()).read().effects;
    const applied = effects.filter((e) => e.applied && !e.readOnly).map((e) => `${e.service}:${e.op}`);
    const deduped = effects.filter((e) => !e.applied).length;
    io.out(`\n4. The services applied ${applied.join(', ')}${deduped ? ` and deduplicated ${deduped} repeated request(s)` : ''}.`);
    const once = applied.length === 3 && new Set(applied).size === 3;
    return view.status === 'completed' && once ? 0 : 1;
  } finally {
    await stack.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exitCode = await bookingDemo(process.argv.slice(2), processOutput).catch((error: unknown) => {
    processOutput.err(`booking demo: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return 1;
  });
}
