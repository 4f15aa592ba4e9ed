import { closeSync, fstatSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { startRun } from '../lib/engine/start-run.js';
import type { EmulatorEndpoints } from '../dev/local/emulators.js';
import { startLocalStack, type LocalStack } from '../dev/local/stack.js';

export interface FloodOptions {
  runs: number;
  turns?: number;
  /** Worker processes (local Lambda sandboxes). Default 2. */
  workers?: number | undefined;
  /** Per-tenant limit of unfinished runs (LOGBOOK_MAX_ACTIVE_RUNS; 0: none). Default: the local stack's (LOCAL_MAX_ACTIVE_RUNS). */
  maxActiveRuns?: number | undefined;
  dynamo: 'auto' | 'dynamodb-local' | 'dynalite';
  endpoints?: EmulatorEndpoints | undefined;
  /** Give up waiting after this long (default 30 minutes). */
  waitMs?: number;
  /** Print progress every this many ms (default 5 s). */
  reportEveryMs?: number;
}

export interface FloodReport {
  runs: number;
  completed: number;
  /** 429 answers the flood's clients got (each retried after Retry-After, with back-off). */
  refusals: number;
  /** Deliveries the workers handled (every tick, spare ones included), and turns the runs made. */
  ticks: number;
  turns: number;
  ticksPerTurn: number;
  queuePeak: number;
  /** The other tenant's single run: completed during the flood, and its times (ms). */
  otherCompleted: boolean;
  otherIdleMs: number;
  otherFloodMs: number;
  /**
   * Worker steps (of any run) handled from the other tenant's start to its completion, idle and
   * during the flood: how many steps it waited behind, independent of the machine's speed.
   */
  otherIdleSteps: number;
  otherFloodSteps: number;
  /** The limit the stack applied (0: none). */
  limit: number;
  wallMs: number;
  /** Runs completed at each report (ms since the flood started, count). */
  progress: [number, number][];
}

const FLOOD_TENANT = 'local';
const OTHER_TENANT = 'other';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `npm run bench -- --flood N`: N runs started at once through the local API by tenant `local`,
 * with a per-tenant limit of unfinished runs (refused starts are retried by their client after
 * Retry-After, doubling up to 8 s, jittered), and one run of a second tenant started while the
 * flood is on (in-process through the engine: the local API always answers as `local`). Prints
 * runs completed over time, ticks handled per turn made, the step queue's peak depth, and the
 * other tenant's run's time to completion during the flood and on the idle stack.
 * Completions are counted from the worker log's outcome lines (no polling of 2,000 heads).
 */
export async function runFlood(options: FloodOptions): Promise<FloodReport> {
  const turns = options.turns ?? 5;
  const workers = options.workers ?? 2;
  const workDir = mkdtempSync(join(tmpdir(), 'logbook-flood-'));
  const log = (s: string) => process.stderr.write(`${s}\n`);
  log(`starting the local stack (${workers} worker processes)...`);
  const stack = await startLocalStack({
    agentsModule: resolve('bench/scale-agents.ts'),
    port: 0,
    dynamo: options.dynamo,
    ...(options.endpoints ? { endpoints: options.endpoints } : {}),
    prefix: `flood-${Date.now()}`,
    workDir,
    concurrency: workers,
    ...(options.maxActiveRuns !== undefined ? { maxActiveRuns: options.maxActiveRuns } : {}),
    env: { BENCH_TURNS: String(turns), LOGBOOK_ADMISSION_RETRY_AFTER_S: '1' },
  });
  const limit = Number(stack.env.LOGBOOK_MAX_ACTIVE_RUNS);
  log(`  at most ${limit > 0 ? limit : 'any number of'} unfinished runs per tenant`);
  try {
    const outcomes = outcomeCounter(stack);
    // Phase 1: the other tenant's run on the idle stack, after one to warm the worker processes.
    await timedRun(stack, outcomes, 'other-warm', options.waitMs ?? 120_000);
    const idle = await timedRun(stack, outcomes, 'other-idle', options.waitMs ?? 120_000);
    if (idle === undefined) throw new Error('the other tenant\'s run did not complete on the idle stack');
    const otherIdleMs = idle.ms;
    const ticksBefore = stack.runner.stats.invocations;

    // Phase 2: the flood, every start at once; the queue's depth sampled every second.
    const t0 = Date.now();
    let refusals = 0;
    let queuePeak = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        queuePeak = Math.max(queuePeak, await queueDepth(stack).catch(() => 0));
        await sleep(1_000);
      }
    })();
    const ids = Array.from({ length: options.runs }, (_, i) => `flood-${i}`);
    let answered = 0;
    const starts = Promise.all(ids.map((runId) => startWithRetry(stack, runId, turns, () => refusals++, () => answered++)));
    // Phase 3: once every start of the flood has had its first answer (created, or refused at the
    // limit), so the flood is all in the queue that lets it in, the other tenant's single run.
    for (const giveUp = Date.now() + 120_000; answered < options.runs && Date.now() < giveUp; ) await sleep(100);
    const otherRun = timedRun(stack, outcomes, 'other-flood', options.waitMs ?? 30 * 60_000);
    const progress: [number, number][] = [];
    const until = t0 + (options.waitMs ?? 30 * 60_000);
    const every = options.reportEveryMs ?? 5_000;
    let next = t0 + every;
    while (outcomes.count((id) => id.startsWith('flood-')) < options.runs && Date.now() < until) {
      await sleep(250);
      if (Date.now() >= next) {
        next += every;
        const done = outcomes.count((id) => id.startsWith('flood-'));
        progress.push([Date.now() - t0, done]);
        log(`  ${((Date.now() - t0) / 1000).toFixed(0).padStart(5)} s: ${done}/${options.runs} completed, ${refusals} refusals so far, queue peak ${queuePeak}`);
      }
    }
    await starts;
    const during = await otherRun;
    const otherFloodMs = during?.ms;
    sampling = false;
    await sampler;
    const wallMs = Date.now() - t0;
    // Phase 4: counts from the heads, read once.
    let completed = 0;
    let turnsMade = 0;
    for (const runId of [...ids, 'other-flood']) {
      const head = await stack.runtime.engine.heads.getHead({ tenant: runId.startsWith('flood-') ? FLOOD_TENANT : OTHER_TENANT, runId });
      if (head?.status === 'completed' && runId.startsWith('flood-')) completed++;
      turnsMade += head?.usage.steps ?? 0;
    }
    const ticks = stack.runner.stats.invocations - ticksBefore;
    const report: FloodReport = {
      runs: options.runs,
      completed,
      refusals,
      ticks,
      turns: turnsMade,
      ticksPerTurn: turnsMade > 0 ? ticks / turnsMade : Infinity,
      queuePeak,
      otherCompleted: otherFloodMs !== undefined,
      otherIdleMs,
      otherFloodMs: otherFloodMs ?? NaN,
      otherIdleSteps: idle.steps,
      otherFloodSteps: during?.steps ?? NaN,
      limit,
      wallMs,
      progress,
    };
    console.log(
      [
        `flood: ${options.runs} runs x ${turns} turns started at once on the local stack (${stack.dynamo}, ${workers} worker processes, limit ${limit} unfinished runs per tenant)`,
        `  completed ${completed}/${options.runs} in ${(wallMs / 1000).toFixed(1)} s; ${refusals} starts refused with 429 and retried`,
        `  ticks handled ${ticks} for ${turnsMade} turns made: ${report.ticksPerTurn.toFixed(2)} ticks per turn (target <= 1.5)`,
        `  step queue depth peak ${queuePeak}`,
        `  other tenant's run: ${otherIdleMs} ms on the idle stack, ${otherFloodMs ?? 'not completed'} ms during the flood (${otherFloodMs !== undefined ? (otherFloodMs / otherIdleMs).toFixed(2) : '-'}x; target <= 2x)`,
        `  other tenant's run, in worker steps from its start to its end: ${idle.steps} idle, ${during?.steps ?? '-'} during the flood (${during ? (during.steps / idle.steps).toFixed(2) : '-'}x)`,
        `  completed over time (s: runs): ${progress.map(([ms, n]) => `${(ms / 1000).toFixed(0)}:${n}`).join(' ')}`,
      ].join('\n'),
    );
    return report;
  } finally {
    await stack.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

/**
 * A client that starts one run and honours 429 + Retry-After, doubling its wait up to 8 s,
 * jittered. A connection the server reset (thousands of clients at once overflow its accept
 * backlog) is retried the same way: the start names its run id, so a retry never starts two.
 */
async function startWithRetry(stack: LocalStack, runId: string, turns: number, onRefused: () => void, onFirstAnswer: () => void): Promise<void> {
  for (let attempt = 0, first = true; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(`${stack.apiUrl}/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ agent: 'bench', input: 'go', runId, budgets: { maxSteps: turns } }),
      });
    } catch (error) {
      if (attempt >= 20) throw error;
      await sleep(250 + Math.random() * 1_000);
      continue;
    }
    if (first && (res.status === 201 || res.status === 200 || res.status === 429)) {
      first = false;
      onFirstAnswer();
    }
    if (res.status === 201 || res.status === 200) return;
    await res.body?.cancel();
    // 408: the server timed the request out while thousands of others waited; like a reset, retry.
    if (res.status === 408 && attempt < 20) continue;
    if (res.status !== 429) throw new Error(`start ${runId}: HTTP ${res.status}`);
    onRefused();
    const base = Number(res.headers.get('retry-after') ?? '1') * 1000;
    const wait = Math.min(8_000, base * 2 ** Math.min(attempt, 3));
    await sleep(wait / 2 + Math.random() * (wait / 2));
  }
}

/**
 * Start one run of the other tenant (through the engine, as the API would) and time it to
 * completion, in ms and in worker steps handled meanwhile (its own and every other run's).
 */
async function timedRun(stack: LocalStack, outcomes: OutcomeCounter, runId: string, waitMs: number): Promise<{ ms: number; steps: number } | undefined> {
  const t0 = Date.now();
  const steps0 = stack.runner.stats.invocations;
  await startRun(stack.runtime.engine, { tenant: OTHER_TENANT, runId, agent: 'bench', input: 'go' });
  while (Date.now() - t0 < waitMs) {
    if (outcomes.has(runId)) return { ms: Date.now() - t0, steps: stack.runner.stats.invocations - steps0 };
    await sleep(100);
  }
  return undefined;
}

async function queueDepth(stack: LocalStack): Promise<number> {
  const out = await stack.runtime.clients.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: stack.resources.queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
}

interface OutcomeCounter {
  has(runId: string): boolean;
  count(filter: (runId: string) => boolean): number;
}

/** Completed runs, from the worker log's outcome lines (the local stack publishes notices there), read incrementally. */
function outcomeCounter(stack: LocalStack): OutcomeCounter {
  const done = new Set<string>();
  let offset = 0;
  let pending = '';
  // Only the bytes written since the last look: this runs in the process that serves the API.
  const refresh = () => {
    const fd = openSync(stack.workerLog, 'r');
    const size = fstatSync(fd).size;
    const bytes = Buffer.alloc(Math.max(0, size - offset));
    if (bytes.length > 0) readSync(fd, bytes, 0, bytes.length, offset);
    closeSync(fd);
    offset = size;
    const text = pending + bytes.toString('utf8');
    const end = text.lastIndexOf('\n') + 1;
    pending = text.slice(end);
    for (const line of text.slice(0, end).split('\n')) {
      if (!line.includes('"outcome"') || !line.includes('"completed"')) continue;
      try {
        const entry = JSON.parse(line) as { message?: string; runId?: string; status?: string };
        if (entry.message === 'outcome' && entry.status === 'completed' && entry.runId) done.add(entry.runId);
      } catch {
        // a partial or foreign line
      }
    }
  };
  return {
    has: (runId) => (refresh(), done.has(runId)),
    count: (filter) => (refresh(), [...done].filter(filter).length),
  };
}
