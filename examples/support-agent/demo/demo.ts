import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { ApiError, LOCAL_MAX_ACTIVE_RUNS, LogbookClient, startLocalStack, type EmulatorEndpoints, type LocalStack, type RunView } from 'logbook/local';
import { FileLedger, duplicateEffects, type SideEffect } from '../ledger.js';
import { FAILING_RUN_SUFFIX, POISON_RUN_SUFFIX } from '../agent.js';
import { checkAnswers, checkBudgets, checkFailingLookup, checkFinished, checkHeads, checkPoisonRun, checkSideEffects, lookupStarts, type Check, type RunRecord } from './demo-checks.js';
import { SUPPORT_AGENTS_MODULE, ledgerPath, supportEnv } from './stack-env.js';

export interface DemoOptions {
  runs: number;
  chaos: boolean;
  seed: number;
  /** Upper bound of worker kills with --chaos (default runs + 2). */
  maxKills?: number;
  /** With chaos: also send duplicated and stale (reordered) ticks for random runs into the queue. */
  injectTicks?: boolean;
  /**
   * Two more runs with scripted faults (SUPPORT_FAULTS): one whose order lookup kills its worker
   * every time (poison: it must end parked or failed, never completed, before its tick is
   * dead-lettered) and one whose lookup fails every time (the model answers the error).
   */
  faults?: boolean;
  /** Worker processes (default 2). */
  concurrency?: number;
  timeoutMs?: number;
  /** Reuse running emulators (tests). */
  endpoints?: EmulatorEndpoints;
  dynamo?: 'auto' | 'dynamodb-local' | 'dynalite';
  toolDelayMs?: number;
  /** Progress lines for people. */
  log?: (line: string) => void;
}

export interface DemoReport {
  runs: number;
  completed: number;
  /** Runs that needed a person (an escalated call after a crash) and were resolved by the scripted resolver. */
  parked: number;
  failed: number;
  workerKills: number;
  /** Extra ticks sent into the queue (duplicates of live runs' ticks, stale ticks of finished ones). */
  injectedTicks: number;
  sideEffects: number;
  duplicateSideEffects: number;
  steps: number;
  elapsedMs: number;
  resolutions: number;
  invocations: number;
  seed: number;
  chaos: boolean;
  /** Parks of a read whose every start died with its worker (tool_attempts_exhausted), answered rerun. */
  crashParks: number;
  /** Run-level parks on the head (poisoned: claims that died before progress), answered retry. */
  headParks: number;
  /** Ticks in the dead-letter queue at the end, by run. */
  deadLettered: Record<string, number>;
  faults?: { poison: FaultRun; failing: FaultRun };
  checks: Check[];
  ok: boolean;
}

/** How a run with a scripted fault ended. */
export interface FaultRun {
  runId: string;
  status: string;
  /** The attention or head park it ended on, or its answer. */
  reason: string;
  /** search_orders starts in its log. */
  lookupStarts: number;
}

/** Tools that only read: the resolver reruns one whose starts all died once, then leaves it to its owner. */
const READ_ONLY_TOOLS = new Set(['search_orders']);

/** A small seeded PRNG (mulberry32): the same seed gives the same kill schedule. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** How long a retried head park may stay before the resolver retries it again (it parked again). */
const HEAD_PARK_RETRY_MS = 15_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/**
 * `npm run demo`: N runs of the support agent on a fresh local stack; with chaos, the worker
 * process is killed with SIGKILL at random moments (seeded) and restarted. Runs parked on an
 * escalated call are answered by a scripted resolver that, like a person, looks at the payments
 * ledger: landed → "succeeded" with what landed, not landed → "rerun". Then it checks the logs
 * and the fake services.
 */
export async function runDemo(options: DemoOptions): Promise<DemoReport> {
  const started = Date.now();
  const log = options.log ?? (() => undefined);
  const random = rng(options.seed);
  const workDir = mkdtempSync(join(tmpdir(), 'logbook-demo-'));
  const stack = await startLocalStack({
    port: 0,
    workDir,
    prefix: `logbook-demo-${options.seed}-${process.pid}`,
    agentsModule: SUPPORT_AGENTS_MODULE,
    // Slower tools under chaos: more of each run is spent inside calls, where a kill hurts most.
    env: {
      ...supportEnv(workDir, options.toolDelayMs ?? (options.chaos ? 300 : 100)),
      // A storm kills every restarted (cold) worker process within its first half second, where
      // a cold claim and load spend most of it: the highest poison limit a deployment may set
      // (MAX_CLAIM_ATTEMPTS_LIMIT, still parked before the DLQ) instead of the default 3.
      ...(options.chaos ? { LOGBOOK_MAX_ATTEMPTS: '4' } : {}),
      ...(options.faults ? { SUPPORT_FAULTS: '1' } : {}),
    },
    concurrency: options.concurrency ?? 2,
    // The demo's own runs (and its two faulty ones) all at once: none of them is refused.
    maxActiveRuns: Math.max(LOCAL_MAX_ACTIVE_RUNS, options.runs + 2),
    ...(options.endpoints ? { endpoints: options.endpoints } : {}),
    ...(options.dynamo ? { dynamo: options.dynamo } : {}),
  });
  log(`stack up in ${Date.now() - started} ms (DynamoDB: ${stack.dynamo}); worker log ${stack.workerLog}`);
  const client = new LogbookClient(stack.apiUrl);
  const ledger = new FileLedger(ledgerPath(workDir));
  try {
    const ids = Array.from({ length: options.runs }, (_, i) => `demo-${options.seed}-${i + 1}`);
    const poisonId = `demo-${options.seed}${POISON_RUN_SUFFIX}`;
    const failingId = `demo-${options.seed}${FAILING_RUN_SUFFIX}`;
    // The poison run first: its crash loop is the longest part of a storm.
    const all = options.faults ? [poisonId, failingId, ...ids] : ids;
    for (const runId of all) {
      await client.startRun({ agent: 'support', runId, input: `Customer c_77 (ticket ${runId}): order arrived damaged, please refund.` });
    }
    log(`submitted ${all.length} run(s)${options.faults ? ` (${poisonId}: its lookup kills its worker; ${failingId}: its lookup fails)` : ''}${options.chaos ? '; chaos on: killing the worker at random moments' : ''}`);

    const state: SettleState & { done: boolean; kills: number; injected: number } = {
      done: false,
      kills: 0,
      injected: 0,
      resolutions: 0,
      crashParks: 0,
      headParks: 0,
      parkedRuns: new Set<string>(),
      gaveUp: new Map<string, string>(),
    };
    const chaos = options.chaos ? killLoop(stack, random, options.maxKills ?? options.runs + 2, state, log) : Promise.resolve();
    const injecting = options.chaos && options.injectTicks ? injectTicks(stack, all, rng(options.seed + 1), state) : Promise.resolve();
    const views = await settle(client, stack, all, ledger, state, options.timeoutMs ?? 240_000, log);
    state.done = true;
    await Promise.all([chaos, injecting]);

    const records: RunRecord[] = [];
    for (const runId of all) records.push({ runId, view: views.get(runId) as RunView, events: await client.allEvents(runId) });
    const normal = records.filter((r) => ids.includes(r.runId));
    const effects = ledger.all();
    const deadLettered = await deadLetteredTicks(stack);
    const checks = [checkFinished(normal), checkSideEffects(normal, effects), checkBudgets(records), checkAnswers(normal), checkHeads(records)];
    let faults: DemoReport['faults'];
    const poison = records.find((r) => r.runId === poisonId);
    const failing = records.find((r) => r.runId === failingId);
    if (options.faults && poison && failing) {
      checks.push(checkPoisonRun(poison, state.gaveUp.get(poisonId), deadLettered[poisonId] ?? 0), checkFailingLookup(failing, effects));
      const fault = (r: RunRecord): FaultRun => ({
        runId: r.runId,
        status: r.view.status,
        reason: state.gaveUp.get(r.runId) ?? (r.view.park ? `${r.view.park.reason}: ${r.view.park.detail}` : JSON.stringify(r.view.result ?? null)),
        lookupStarts: lookupStarts(r),
      });
      faults = { poison: fault(poison), failing: fault(failing) };
    }
    const count = (s: string) => normal.filter((r) => r.view.status === s).length;
    const report: DemoReport = {
      runs: normal.length,
      completed: count('completed'),
      parked: [...state.parkedRuns].filter((id) => ids.includes(id)).length,
      failed: count('failed') + count('cancelled'),
      workerKills: state.kills,
      injectedTicks: state.injected,
      sideEffects: effects.filter((e) => e.applied && !e.readOnly).length,
      duplicateSideEffects: duplicateEffects(effects).reduce((n, d) => n + d.count - 1, 0),
      steps: records.reduce((n, r) => n + r.view.usage.steps, 0),
      elapsedMs: Date.now() - started,
      resolutions: state.resolutions,
      invocations: stack.runner.stats.invocations,
      seed: options.seed,
      chaos: options.chaos,
      crashParks: state.crashParks,
      headParks: state.headParks,
      deadLettered,
      ...(faults ? { faults } : {}),
      checks,
      ok: checks.every((c) => c.ok),
    };
    return report;
  } finally {
    await stack.stop();
    if (!process.env.LOGBOOK_KEEP_DEMO_DIR) rmSync(workDir, { recursive: true, force: true });
  }
}

export async function killLoop(
  stack: LocalStack,
  random: () => number,
  maxKills: number,
  state: { done: boolean; kills: number },
  log: (line: string) => void,
): Promise<void> {
  while (!state.done && state.kills < maxKills) {
    await sleep(150 + Math.floor(random() * 650));
    // Then wait for a worker to be inside a step and strike at a random point of it: striking the
    // instant it became busy would always hit the first milliseconds, before the worker could
    // shorten its tick's visibility, which on AWS too costs the full visibility timeout.
    while (!state.done && stack.runner.busyWorkers === 0) await sleep(10);
    // At least 50 ms in: the first milliseconds (before the worker's first SQS call) are a real
    // window, documented in docs/guides/deploying.md (Operating it), but a demo that aims at it only shows a 2-minute wait.
    await sleep(50 + Math.floor(random() * 400));
    if (state.done) return;
    if (stack.runner.killBusyWorker((n) => Math.floor(random() * n))) {
      state.kills++;
      log(`chaos: kill -9 of a busy worker (${state.kills}/${maxKills})`);
    }
  }
}

/**
 * Duplicated and reordered ticks, as a standard queue or a redrive would deliver them: copies of
 * a random run's tick under dedupe ids no worker uses (so FIFO keeps them all), sent in bursts,
 * some for runs that have already moved on or ended (a late, out-of-order wake-up). A tick
 * carries no command, so each must be harmless: busy, a no-op step, or a step the run needed.
 */
async function injectTicks(stack: LocalStack, ids: string[], random: () => number, state: { done: boolean; injected: number }): Promise<void> {
  const queue = stack.runtime.engine.queue;
  let n = 0;
  while (!state.done) {
    await sleep(400 + Math.floor(random() * 800));
    const runId = ids[Math.floor(random() * ids.length)];
    if (!runId || state.done) continue;
    const copies = 1 + Math.floor(random() * 3);
    for (let c = 0; c < copies; c++) {
      await queue.enqueue({ tenant: 'local', runId }, { dedupeId: `${runId}:chaos:${++n}` }).catch(() => undefined);
      state.injected++;
    }
  }
}

interface SettleState {
  resolutions: number;
  crashParks: number;
  headParks: number;
  parkedRuns: Set<string>;
  /** Runs the resolver left parked for their owner, with why: a read that died in every start twice. */
  gaveUp: Map<string, string>;
}

/**
 * Every tick in the dead-letter queue, counted by run (received and left in flight: the stack is
 * about to stop).
 */
async function deadLetteredTicks(stack: LocalStack): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (let round = 0; round < 50; round++) {
    const out = await stack.runtime.clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: stack.resources.deadLetterQueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 600 }),
    );
    const messages = out.Messages ?? [];
    if (messages.length === 0) break;
    for (const m of messages) {
      let runId = 'unparsable';
      try {
        runId = String((JSON.parse(m.Body ?? '{}') as { runId?: unknown }).runId ?? runId);
      } catch {
        // counted as unparsable
      }
      counts[runId] = (counts[runId] ?? 0) + 1;
    }
  }
  return counts;
}

/**
 * Poll until every run is terminal, answering parked runs the way a careful person would; a run
 * whose read-only call died in every start, again after one rerun, is left parked for its owner
 * (it is poison: rerunning it forever only kills more workers).
 */
async function settle(
  client: LogbookClient,
  stack: LocalStack,
  ids: string[],
  ledger: FileLedger,
  state: SettleState,
  timeoutMs: number,
  log: (line: string) => void,
): Promise<Map<string, RunView>> {
  const views = new Map<string, RunView>();
  const asked = new Set<string>();
  const retriedAt = new Map<string, number>();
  const deadline = Date.now() + timeoutMs;
  const lastStatus = new Map<string, string>();
  const readReruns = new Map<string, number>();
  const settled = (id: string) => TERMINAL.has(views.get(id)?.status ?? '') || state.gaveUp.has(id);
  while (Date.now() < deadline) {
    for (const runId of ids) {
      if (settled(runId)) continue;
      const view = await client.getRun(runId);
      views.set(runId, view);
      if (lastStatus.get(runId) !== view.status) {
        lastStatus.set(runId, view.status);
        log(`${runId}: ${view.status} (turns ${view.usage.steps}, seq ${view.lastSeq})`);
      }
      if (view.status !== 'parked') continue;
      state.parkedRuns.add(runId);
      if (view.park) {
        // A run-level park on the head (poisoned, corrupt log): a person retries it, and again if
        // it is parked again later (the same text twice is a second park, not the first one).
        const last = retriedAt.get(runId) ?? 0;
        if (Date.now() - last > HEAD_PARK_RETRY_MS) {
          log(`resolver: ${runId} parked on its head (${view.park.reason}: ${view.park.detail}) → retry`);
          await answer(client, runId, { action: 'retry' }, () => retriedAt.set(runId, Date.now()));
          state.resolutions++;
          state.headParks++;
        }
        continue;
      }
      for (const a of view.attention) {
        const key = `${runId}:${a.seq}`;
        if (asked.has(key)) continue;
        if (!a.callId) {
          await answer(client, runId, { action: 'retry' }, () => asked.add(key));
          continue;
        }
        const callKey = `${runId}:${a.callId}`;
        const crashedRead = a.reason === 'tool_attempts_exhausted' && READ_ONLY_TOOLS.has(a.detail.split(' ')[0] ?? '');
        if (crashedRead && (readReruns.get(callKey) ?? 0) >= 1) {
          // Rerun once already, and every start died again: poison. Leave it to its owner.
          log(`resolver: ${runId} ${a.reason} on ${a.callId} again after a rerun: poison, left parked (${a.detail})`);
          state.gaveUp.set(runId, `${a.reason}: ${a.detail}`);
          asked.add(key);
          break;
        }
        const body = resolutionFor(runId, { ...a, callId: a.callId }, ledger.all(), Date.now());
        if (!body) continue;
        log(`resolver: ${runId} ${a.reason} on ${a.callId}: ledger says ${'result' in body ? 'it landed → succeeded' : 'it did not land → rerun'}`);
        await answer(client, runId, body, () => {
          asked.add(key);
          if (crashedRead) {
            readReruns.set(callKey, (readReruns.get(callKey) ?? 0) + 1);
            state.crashParks++;
          }
        });
        state.resolutions++;
      }
    }
    if (ids.every(settled)) return views;
    await sleep(300);
  }
  log(`timed out after ${timeoutMs} ms; runner ${JSON.stringify(stack.runner.stats)} (busy workers: ${stack.runner.busyWorkers})`);
  // Where each unfinished run stands, so that a stall says which run and where it stopped.
  for (const runId of ids.filter((id) => !settled(id))) {
    const view = await client.getRun(runId).catch(() => views.get(runId));
    const events = await client.allEvents(runId).catch(() => []);
    const last = events.slice(-6).map((e) => `${String(e.seq)}:${String(e.type)}`).join(' ');
    log(`stalled: ${runId} ${view?.status ?? '?'} seq ${view?.lastSeq ?? '?'} park ${JSON.stringify(view?.park ?? null)} attention ${JSON.stringify(view?.attention ?? [])}; last events ${last}`);
    for (const line of workerLogLines(stack.workerLog, runId, 12)) log(`  worker: ${line}`);
  }
  return views;
}

/** The last `n` lines of the worker log that name a run (empty when the log cannot be read). */
function workerLogLines(path: string, runId: string, n: number): string[] {
  try {
    return readFileSync(path, 'utf8').split('\n').filter((l) => l.includes(`"${runId}"`)).slice(-n).map((l) => l.slice(0, 400));
  } catch {
    return [];
  }
}

/**
 * What a careful person answers for a call that started with no result: look in the downstream
 * service's records. Landed → "succeeded" with what landed; not landed → "rerun", but only once
 * the call's deadline has passed (undefined until then).
 */
export function resolutionFor(
  runId: string,
  attention: { callId: string; rerunNotBefore?: string },
  effects: SideEffect[],
  now: number,
): { callId: string; outcome: 'succeeded'; result: Record<string, unknown> } | { callId: string; outcome: 'rerun' } | undefined {
  const landed = effects.find((e) => e.runId === runId && e.callId === attention.callId && e.applied && !e.readOnly);
  if (landed) return { callId: attention.callId, outcome: 'succeeded', result: resultOf(landed.detail) };
  if (attention.rerunNotBefore && Date.parse(attention.rerunNotBefore) > now) return undefined;
  return { callId: attention.callId, outcome: 'rerun' };
}

/** What the tool would have returned, rebuilt from what the service recorded. */
function resultOf(detail: Record<string, unknown>): Record<string, unknown> {
  const { refundId, messageId, ticketId } = detail;
  if (refundId !== undefined) return { refundId };
  if (messageId !== undefined) return { messageId };
  if (ticketId !== undefined) return { ticketId, deduplicated: false };
  return { ...detail };
}

async function answer(client: LogbookClient, runId: string, body: Parameters<LogbookClient['resolve']>[1], done: () => void): Promise<void> {
  try {
    await client.resolve(runId, body);
    done();
  } catch (error) {
    // 409: someone answered first, or it is too early for rerun: look again on the next pass.
    if (!(error instanceof ApiError && error.status === 409)) throw error;
  }
}
