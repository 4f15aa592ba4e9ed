import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { EmulatorEndpoints } from '../dev/local/emulators.js';
import { startLocalStack } from '../dev/local/stack.js';
import { median, p95 } from './report.js';

export interface ScaleOptions {
  runs: number;
  /** Worker processes (local Lambda sandboxes). Default 4. */
  workers?: number | undefined;
  turns?: number;
  dynamo: 'auto' | 'dynamodb-local' | 'dynalite';
  /** Emulators already running (the test suite's); otherwise the stack starts its own. */
  endpoints?: EmulatorEndpoints | undefined;
  /** How long to wait for every run to finish before reporting the rest as not finished. Default 20 minutes. */
  waitMs?: number;
}

interface EventView {
  type: string;
  at: number;
  /** A tool_result that resolved its turn carries the next model call's reservation. */
  reservation?: unknown;
}

/**
 * Scale on the whole local stack: `runs` runs started at once through the HTTP API, worked by the
 * local event-source runner's worker processes (the real worker handler), every run checked
 * completed. Prints throughput and the p95 turn latency: the time between consecutive model
 * reservations of a run (model_started, or carried by a tool_result), queueing between steps included.
 */
export interface ScaleReport {
  ok: boolean;
  runs: number;
  completed: number;
  /** Runs still open when the wait gave up (20 minutes). */
  notFinished: number;
  /** POST /runs answers other than 201. */
  refused: number;
  /** ERROR or CRITICAL lines in the worker processes' log. */
  workerErrors: number;
  /** Turn gaps measured (reservation to next reservation), and their p95. */
  turnGaps: number;
  p95TurnMs: number;
  turnsPerSecond: number;
}

export async function runScale(options: ScaleOptions): Promise<ScaleReport> {
  const turns = options.turns ?? 5;
  const workers = options.workers ?? 4;
  const workDir = mkdtempSync(join(tmpdir(), 'logbook-scale-'));
  const log = (s: string) => process.stderr.write(`${s}\n`);
  log(`starting the local stack (${workers} worker processes)...`);
  const stack = await startLocalStack({
    agentsModule: resolve('bench/scale-agents.ts'),
    port: 0,
    dynamo: options.dynamo,
    ...(options.endpoints ? { endpoints: options.endpoints } : {}),
    prefix: `scale-${Date.now()}`,
    workDir,
    concurrency: workers,
    // Throughput, not fairness: every run at once, no per-tenant limit (the flood bench has one).
    maxActiveRuns: 0,
    env: { BENCH_TURNS: String(turns) },
  });
  try {
    const ids = Array.from({ length: options.runs }, (_, i) => `scale-${i}`);
    const t0 = Date.now();
    // Phase 1: start every run at once through the API.
    const started = await Promise.all(
      ids.map((runId) =>
        fetch(`${stack.apiUrl}/runs`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ agent: 'bench', input: 'go', runId, budgets: { maxSteps: turns } }),
        }).then((r) => r.status),
      ),
    );
    const refused = started.filter((s) => s !== 201).length;
    log(`${options.runs - refused} runs started (${refused} refused); waiting for them...`);
    // Phase 2: wait until every run is finished (heads read in-process, not through the API).
    const heads = stack.runtime.engine.heads;
    const open = new Set(ids);
    const status = new Map<string, string>();
    const until = Date.now() + (options.waitMs ?? 20 * 60_000);
    while (open.size > 0 && Date.now() < until) {
      for (const runId of [...open]) {
        const head = await heads.getHead({ tenant: 'local', runId });
        if (head && ['completed', 'failed', 'parked', 'cancelled'].includes(head.status)) {
          status.set(runId, head.status);
          open.delete(runId);
        }
      }
      if (open.size > 0) await new Promise((r) => setTimeout(r, 500));
    }
    const wallMs = Date.now() - t0;
    // Phase 3: turn latencies from the logs.
    const gaps: number[] = [];
    for (const runId of ids) {
      const res = await fetch(`${stack.apiUrl}/runs/${runId}/events?limit=100`);
      if (!res.ok) throw new Error(`events of ${runId}: HTTP ${res.status} ${await res.text()}`);
      const { events } = (await res.json()) as { events: EventView[] };
      const starts = events.filter((e) => e.type === 'model_started' || (e.type === 'tool_result' && e.reservation)).map((e) => e.at);
      for (let i = 1; i < starts.length; i++) gaps.push(starts[i]! - starts[i - 1]!);
    }
    const completed = [...status.values()].filter((s) => s === 'completed').length;
    const errors = readFileSync(stack.workerLog, 'utf8').split('\n').filter((l) => /"level":"(ERROR|CRITICAL)"/.test(l)).length;
    const totalTurns = completed * turns;
    const ok = completed === options.runs && errors === 0 && refused === 0;
    const turnsPerSecond = totalTurns / (wallMs / 1000);
    console.log(
      [
        `scale: ${options.runs} concurrent runs x ${turns} turns on the local stack (${stack.dynamo}, ${workers} worker processes)`,
        `  completed ${completed}/${options.runs}, not finished ${open.size}, other ${options.runs - completed - open.size}, worker log errors ${errors}`,
        `  wall ${(wallMs / 1000).toFixed(1)} s, throughput ${turnsPerSecond.toFixed(1)} turns/s, ${(completed / (wallMs / 1000)).toFixed(2)} runs/s`,
        `  turn latency (reservation to next reservation): p50 ${median(gaps).toFixed(0)} ms, p95 ${p95(gaps).toFixed(0)} ms over ${gaps.length} turns`,
        `  ${ok ? 'ok' : 'NOT OK'}`,
      ].join('\n'),
    );
    return { ok, runs: options.runs, completed, notFinished: open.size, refused, workerErrors: errors, turnGaps: gaps.length, p95TurnMs: p95(gaps), turnsPerSecond };
  } finally {
    await stack.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}
