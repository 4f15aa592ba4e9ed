import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { StreamItem } from '../lib/api/stream-merge.js';
import { MAX_OPEN_STREAMS_PER_TENANT } from '../lib/core/limits.js';
import { startLocalStack } from '../dev/local/stack.js';
import { emptyCounters, instrument } from './instrument.js';
import { median, p95 } from './report.js';

export interface ReadersBenchOptions {
  /** Open readers in the loaded phase (each a client long-polling GET /runs/{id}/stream). */
  readers: number;
  /** Runs they follow, each streaming slowly (a model call stays open for seconds). */
  runs: number;
  /** How long each phase times GET /runs. */
  seconds: number;
  dynamo: 'auto' | 'dynamodb-local' | 'dynalite';
  /** The API's cap on one tenant's open streams (default: the shipped one). */
  maxOpenStreams?: number | undefined;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `npm run bench -- --readers 200`: what open stream readers cost everyone else on the local stack.
 * Runs whose model call stays open with nothing new for 12 s at a time (a waiting reader reads the
 * log and the call's chunks on every pass), then GET /runs?limit=20 timed
 * back to back for `seconds`: first with no reader, then with `readers` clients following the runs
 * as a browser would (long polls of 20 s; a 429 waits its Retry-After). Prints p50/p95 of GET /runs
 * in both phases, how many readers were admitted or told to retry, and the DynamoDB requests per
 * second the API process made. `--max-open-streams N` sets the API's cap (a large N: the back-off alone).
 */
export async function runReadersBench(options: ReadersBenchOptions): Promise<{ ok: boolean }> {
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const workDir = mkdtempSync(join(tmpdir(), 'logbook-readers-bench-'));
  log('starting the local stack...');
  const stack = await startLocalStack({
    agentsModule: resolve('bench/stream-agents.ts'),
    port: 0,
    dynamo: options.dynamo,
    prefix: `readers-${Date.now()}`,
    workDir,
    concurrency: Math.min(4, options.runs),
    ...(options.maxOpenStreams !== undefined ? { maxOpenStreams: options.maxOpenStreams } : {}),
    // 2 pieces 12 s apart (16 characters each): a model call stays open 12 s with nothing new
    // after its first piece, as a model that thinks long does (inside the local 15 s model timeout).
    env: { BENCH_TURNS: '200', BENCH_STREAM_CHARS: '32', BENCH_STREAM_CHARS_PER_S: String(16 / 12) },
  });
  const counters = emptyCounters();
  instrument(stack.runtime.clients, counters);
  const stop = new AbortController();
  try {
    const ids = Array.from({ length: options.runs }, (_, i) => `readers-${Date.now()}-${i}`);
    for (const runId of ids) {
      const res = await fetch(`${stack.apiUrl}/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ agent: 'bench', input: 'go', runId, budgets: { maxSteps: 200 } }),
      });
      if (res.status !== 201) throw new Error(`start ${runId}: HTTP ${res.status}`);
    }
    await sleep(3_000);
    const idle = await timeList(stack.apiUrl, options.seconds * 1000);
    const idleRate = await dynamoRate(counters, 3_000);

    // The loaded phase: every reader follows one run until the bench stops it.
    const tally = { admitted: 0, refused: 0, pages: 0, failed: 0 };
    const follow = async (runId: string) => {
      let after: string | undefined;
      while (!stop.signal.aborted) {
        const query = new URLSearchParams({ waitSeconds: '20', limit: '100', ...(after ? { after } : {}) });
        try {
          const res = await fetch(`${stack.apiUrl}/runs/${runId}/stream?${query.toString()}`, { signal: stop.signal });
          if (res.status === 429) {
            tally.refused++;
            await res.text();
            await sleep(Number(res.headers.get('retry-after') ?? 5) * 1000);
            continue;
          }
          if (!res.ok) throw new Error(`HTTP ${res.status}`);
          tally.admitted++;
          const page = (await res.json()) as { items: StreamItem[]; next: string; done: boolean };
          tally.pages++;
          after = page.next;
          if (page.done) return;
        } catch {
          if (stop.signal.aborted) return;
          tally.failed++;
          await sleep(1_000);
        }
      }
    };
    const readers = Array.from({ length: options.readers }, (_, i) => follow(ids[i % ids.length]!));
    await sleep(3_000);
    const loadedRate = await dynamoRate(counters, 3_000);
    const loaded = await timeList(stack.apiUrl, options.seconds * 1000);
    stop.abort();
    await Promise.allSettled(readers);

    const f = (x: number) => x.toFixed(1);
    const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(1) : 'n/a');
    console.log(
      [
        `readers: ${options.runs} runs streaming slowly on the local stack (${stack.dynamo}), open streams capped at ${options.maxOpenStreams ?? MAX_OPEN_STREAMS_PER_TENANT} per tenant; GET /runs?limit=20 back to back for ${options.seconds} s per phase`,
        `  0 readers:        p50 ${f(median(idle))} ms, p95 ${f(p95(idle))} ms over ${idle.length} requests; API DynamoDB requests ${f(idleRate)}/s`,
        `  ${options.readers} readers:      p50 ${f(median(loaded))} ms, p95 ${f(p95(loaded))} ms over ${loaded.length} requests; API DynamoDB requests ${f(loadedRate)}/s`,
        `  slowdown:         p50 x${ratio(median(loaded), median(idle))}, p95 x${ratio(p95(loaded), p95(idle))}`,
        `  reader requests:  ${tally.admitted} admitted, ${tally.refused} answered 429 (retried after Retry-After), ${tally.failed} failed`,
      ].join('\n'),
    );
    return { ok: tally.failed === 0 };
  } finally {
    stop.abort();
    await stack.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** GET /runs back to back for `ms`: each request's time. */
async function timeList(apiUrl: string, ms: number): Promise<number[]> {
  const times: number[] = [];
  const ends = Date.now() + ms;
  while (Date.now() < ends) {
    const t0 = performance.now();
    const res = await fetch(`${apiUrl}/runs?limit=20`);
    await res.text();
    if (!res.ok) throw new Error(`GET /runs: HTTP ${res.status}`);
    times.push(performance.now() - t0);
  }
  return times;
}

/** DynamoDB requests per second the API process makes, over `ms`. */
async function dynamoRate(counters: ReturnType<typeof emptyCounters>, ms: number): Promise<number> {
  const before = counters.dynamo.requests;
  await sleep(ms);
  return ((counters.dynamo.requests - before) * 1000) / ms;
}
