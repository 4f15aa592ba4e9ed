/**
 * `npm run demo:workflow -- [--runs N] [--chaos] [--seed S] [--json]`: refund-review workflow runs
 * on the local stack (emulators, the API, worker processes). Runs start and the manager's
 * signal is sent through the engine (`logbook/engine` startRun and requestSignal, what
 * `POST /runs` and `POST /runs/{id}/signals` call); runs are watched over HTTP. With --chaos a
 * busy worker process is SIGKILLed at random (seeded) moments, as `npm run demo -- --chaos` does.
 *
 * The follow-up sleep is two days in the workflow; the demo shortens it through the workflow's
 * own input (`followUpAfterSeconds: 3`), so nothing about the clock is faked.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { requestSignal, startRun } from 'logbook/engine';
import {
  ApiError,
  LOCAL_MAX_ACTIVE_RUNS,
  LogbookClient,
  UsageError,
  processOutput,
  startLocalStack,
  table,
  type EmulatorEndpoints,
  type RunView,
} from 'logbook/local';
import { FileLedger, duplicateEffects } from '../support-agent/ledger.js';
import { killLoop, rng } from '../support-agent/demo/demo.js';
import { APPROVAL_THRESHOLD_CENTS } from './refund-review.js';
import { ORDERS } from './refund-services.js';

const AGENTS_MODULE = fileURLToPath(new URL('./agents.ts', import.meta.url));
const TENANT = 'local';
const REASONS = ['it arrived damaged', 'they sent the wrong item', 'I no longer need it', 'the box was cracked and the screen broken'];
/** The demo's follow-up delay (the workflow's default is two days). */
export const DEMO_FOLLOW_UP_SECONDS = 3;
/** How long a running run may go without a new event before the demo sends it a fresh tick. */
const STUCK_MS = 45_000;
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface WorkflowDemoOptions {
  runs?: number;
  chaos?: boolean;
  seed?: number;
  timeoutMs?: number;
  /** Running emulators to use (tests) instead of starting them. */
  endpoints?: EmulatorEndpoints;
  dynamo?: 'auto' | 'dynalite' | 'dynamodb-local';
  log?: (line: string) => void;
}

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface WorkflowDemoReport {
  runs: number;
  completed: number;
  /** Runs (or their child runs) that parked and were retried by the demo. */
  parked: number;
  workerKills: number;
  /** Runs (or child runs) that stayed running with no new event for 45 s and were sent a fresh tick. */
  nudged: string[];
  /** Manager signals sent to runs above the threshold. */
  signalled: number;
  /** Writes the services applied (refunds, emails), each counted once per time it was applied. */
  sideEffects: number;
  /** Writes applied more than once for the same step's key: what must never happen. */
  duplicateSideEffects: number;
  elapsedMs: number;
  seed: number;
  checks: Check[];
  ok: boolean;
  outputs: Record<string, unknown>;
}

export async function workflowDemo(options: WorkflowDemoOptions = {}): Promise<WorkflowDemoReport> {
  const started = Date.now();
  const log = options.log ?? (() => {});
  const seed = options.seed ?? Date.now() % 100_000;
  const runs = options.runs ?? 4;
  const workDir = mkdtempSync(join(tmpdir(), 'logbook-workflow-demo-'));
  const ledgerFile = join(workDir, 'refund-ledger.jsonl');
  const stack = await startLocalStack({
    agentsModule: AGENTS_MODULE,
    workDir,
    port: 0,
    prefix: `refund-demo-${seed}-${process.pid}`,
    // Slower services under chaos: more of each run is spent inside steps, where a kill hurts most.
    env: { REFUND_LEDGER_FILE: ledgerFile, REFUND_SERVICE_DELAY_MS: options.chaos ? '300' : '50', LOGBOOK_MAX_ATTEMPTS: '4' },
    concurrency: 2,
    maxActiveRuns: Math.max(LOCAL_MAX_ACTIVE_RUNS, runs),
    ...(options.endpoints ? { endpoints: options.endpoints } : { dynamo: options.dynamo ?? 'auto' }),
  });
  const state = { done: false, kills: 0 };
  try {
    log(`stack up in ${Date.now() - started} ms (DynamoDB: ${stack.dynamo}); API ${stack.apiUrl}`);
    const client = new LogbookClient(stack.apiUrl);
    const engine = stack.runtime.engine;
    const orders = Object.keys(ORDERS);
    const ids: string[] = [];
    const large = new Set<string>();
    for (let i = 0; i < runs; i++) {
      const orderId = orders[i % orders.length]!;
      const runId = `refund-${seed}-${i + 1}`;
      const order = ORDERS[orderId]!;
      if (order.lines.filter((l) => l.returned).reduce((n, l) => n + l.cents, 0) > APPROVAL_THRESHOLD_CENTS) large.add(runId);
      await startRun(engine, {
        tenant: TENANT,
        runId,
        workflow: 'refund-review',
        input: { orderId, reason: REASONS[i % REASONS.length]!, followUpAfterSeconds: DEMO_FOLLOW_UP_SECONDS },
      });
      ids.push(runId);
    }
    log(
      `started ${ids.length} refund-review run(s); ${large.size} above $${APPROVAL_THRESHOLD_CENTS / 100} will wait for the manager${options.chaos ? '; chaos on' : ''}`,
    );
    const chaos = options.chaos ? killLoop(stack, rng(seed), runs + 2, state, log) : Promise.resolve();

    const views = new Map<string, RunView>();
    const signalled = new Set<string>();
    const parked = new Set<string>();
    const lastStatus = new Map<string, string>();
    const progress = new Map<string, { seq: number; since: number }>();
    const nudged = new Set<string>();
    let nudges = 0;
    const deadline = Date.now() + (options.timeoutMs ?? 240_000);
    const settled = (id: string) => TERMINAL.has(views.get(id)?.status ?? '');
    while (Date.now() < deadline && !ids.every(settled)) {
      for (const runId of ids.filter((id) => !settled(id))) {
        const view = await client.getRun(runId);
        views.set(runId, view);
        if (lastStatus.get(runId) !== view.status) {
          lastStatus.set(runId, view.status);
          log(`${runId}: ${view.status}`);
        }
        if (view.waiting?.some((w) => w.kind === 'signal' && w.signal === 'manager-approval') && !signalled.has(runId)) {
          await requestSignal(
            engine,
            { tenant: TENANT, runId },
            { signal: 'manager-approval', payload: { approved: true, note: 'checked the return' } },
            'manager@example.com',
          );
          signalled.add(runId);
          log(`${runId}: manager-approval sent`);
        }
        // A run or its classifier child parked (a claim that kept dying under chaos): retry it, as a person would.
        const children = (view.waiting ?? []).flatMap((w) => (w.kind === 'child' && w.childRunId ? [w.childRunId] : []));
        for (const id of [runId, ...children]) {
          const v = id === runId ? view : await client.getRun(id).catch(() => undefined);
          if (v?.status === 'running') {
            // A run that makes no progress for STUCK_MS while running (seen under chaos: a child
            // whose first tick died with its workers, left with only run_started and no park) gets a
            // fresh tick, as an operator would send one; counted in `nudged`, never hidden.
            const seen = progress.get(id);
            if (!seen || seen.seq !== v.lastSeq) progress.set(id, { seq: v.lastSeq, since: Date.now() });
            else if (Date.now() - seen.since > STUCK_MS) {
              log(`${id}: running with no progress past seq ${v.lastSeq} for ${STUCK_MS / 1000} s → a fresh tick`);
              await engine.queue.enqueue({ tenant: TENANT, runId: id }, { dedupeId: `${id}:nudge:${++nudges}` });
              nudged.add(id);
              progress.set(id, { seq: v.lastSeq, since: Date.now() });
            }
          }
          if (v?.status !== 'parked') continue;
          parked.add(runId);
          log(`${id}: parked (${v.park ? `${v.park.reason}: ${v.park.detail}` : JSON.stringify(v.attention)}) → retry`);
          await client.resolve(id, { action: 'retry' }).catch((error: unknown) => {
            if (!(error instanceof ApiError && error.status === 409)) throw error;
          });
        }
      }
      await sleep(300);
    }
    state.done = true;
    await chaos;
    // Where each unfinished run stands (and the child it waits on), so that a stall says where it stopped.
    for (const runId of ids.filter((id) => !settled(id))) {
      const view = views.get(runId);
      const children = (view?.waiting ?? []).flatMap((w) => (w.kind === 'child' && w.childRunId ? [w.childRunId] : []));
      for (const id of [runId, ...children]) {
        const v = id === runId ? view : await client.getRun(id).catch(() => undefined);
        const events = await client.allEvents(id).catch(() => []);
        const last = events
          .slice(-8)
          .map((e) => `${String(e.seq)}:${String(e.type)}`)
          .join(' ');
        log(`stalled: ${id} ${v?.status ?? '?'} waiting ${JSON.stringify(v?.waiting ?? [])} park ${JSON.stringify(v?.park ?? null)}; last events ${last}`);
      }
    }

    const effects = new FileLedger(ledgerFile).all();
    const writes = effects.filter((e) => e.applied && !e.readOnly);
    const duplicates = duplicateEffects(effects).reduce((n, d) => n + d.count - 1, 0);
    const completed = ids.filter((id) => views.get(id)?.status === 'completed');
    const outputs = Object.fromEntries(ids.map((id) => [id, views.get(id)?.output]));
    const refunded = ids.filter((id) => (views.get(id)?.output as { status?: string } | undefined)?.status === 'refunded');
    const count = (op: string) => writes.filter((e) => e.op === op).length;
    const checks: Check[] = [
      { name: 'every run completed', ok: completed.length === ids.length, detail: ids.map((id) => `${id}: ${views.get(id)?.status ?? '?'}`).join(', ') },
      { name: 'every refund went through', ok: refunded.length === ids.length, detail: `${refunded.length} of ${ids.length} refunded` },
      {
        name: 'the large ones waited for the manager',
        ok: [...large].every((id) => signalled.has(id)) && signalled.size === large.size,
        detail: `${signalled.size} signal(s) for ${large.size} large refund(s)`,
      },
      {
        name: 'one refund, one confirmation, one follow-up per run',
        ok: count('refund') === ids.length && count('confirmation') === ids.length && count('follow-up') === ids.length,
        detail: `refunds ${count('refund')}, confirmations ${count('confirmation')}, follow-ups ${count('follow-up')}`,
      },
      {
        name: 'no duplicate side effect',
        ok: duplicates === 0,
        detail: `${duplicates} duplicate(s); ${effects.filter((e) => !e.applied).length} repeat(s) deduplicated by the payment service`,
      },
    ];
    return {
      runs: ids.length,
      completed: completed.length,
      parked: parked.size,
      workerKills: state.kills,
      nudged: [...nudged],
      signalled: signalled.size,
      sideEffects: writes.length,
      duplicateSideEffects: duplicates,
      elapsedMs: Date.now() - started,
      seed,
      checks,
      ok: checks.every((c) => c.ok),
      outputs,
    };
  } finally {
    state.done = true;
    await stack.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** The keys `npm run demo -- --json` prints, and the workflow demo's own. */
export function summary(report: WorkflowDemoReport): Record<string, unknown> {
  const { runs, completed, parked, workerKills, sideEffects, duplicateSideEffects, signalled, nudged, elapsedMs, seed, ok, checks } = report;
  return { runs, completed, parked, workerKills, sideEffects, duplicateSideEffects, signalled, nudged: nudged.length, elapsedMs, seed, ok, checks };
}

export function printable(report: WorkflowDemoReport): string {
  return [
    '',
    table(
      ['RUNS', 'COMPLETED', 'PARKED+RETRIED', 'SIGNALLED', 'WORKER KILLS', 'SIDE EFFECTS', 'DUPLICATES', 'SECONDS'],
      [
        [
          report.runs,
          report.completed,
          report.parked,
          report.signalled,
          report.workerKills,
          report.sideEffects,
          report.duplicateSideEffects,
          (report.elapsedMs / 1000).toFixed(1),
        ],
      ],
    ),
    '',
    table(
      ['CHECK', 'RESULT', 'DETAIL'],
      report.checks.map((c) => [c.name, c.ok ? 'ok' : 'FAILED', c.detail]),
    ),
    '',
    ...(report.nudged.length > 0 ? [`Sent a fresh tick to ${report.nudged.join(', ')}: running with no progress for ${STUCK_MS / 1000} s.`, ''] : []),
    report.ok ? 'All checks passed.' : 'Some checks FAILED.',
    `Replay this schedule with --seed ${report.seed}.`,
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    const { values } = parseArgs({
      args: process.argv.slice(2),
      options: {
        runs: { type: 'string', default: '4' },
        chaos: { type: 'boolean', default: false },
        seed: { type: 'string' },
        json: { type: 'boolean', default: false },
        dynamo: { type: 'string', default: 'auto' },
      },
      strict: true,
    });
    const dynamo = values.dynamo;
    if (dynamo !== 'auto' && dynamo !== 'dynalite' && dynamo !== 'dynamodb-local') throw new UsageError('--dynamo must be auto, dynalite or dynamodb-local');
    const runs = Number(values.runs);
    if (!Number.isInteger(runs) || runs < 1) throw new UsageError('--runs must be an integer >= 1');
    const seed = values.seed === undefined ? undefined : Number(values.seed);
    if (seed !== undefined && !Number.isInteger(seed)) throw new UsageError('--seed must be an integer');
    // Progress goes to stderr so that stdout stays one JSON object with --json.
    const report = await workflowDemo({ runs, chaos: values.chaos, dynamo, ...(seed !== undefined ? { seed } : {}), log: (line) => processOutput.err(line) });
    processOutput.out(values.json ? JSON.stringify(summary(report)) : printable(report));
    process.exitCode = report.ok ? 0 : 1;
  } catch (error) {
    processOutput.err(`workflow demo: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exitCode = error instanceof UsageError ? 2 : 1;
  }
}
