import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { STREAM_PREFIX } from '../lib/adapters/aws/dynamo-keys.js';
import type { StreamItem } from '../lib/api/stream-merge.js';
import { STREAM_FLUSH_MS } from '../lib/core/limits.js';
import { startLocalStack } from '../dev/local/stack.js';
import { readUIMessageStream } from 'ai';
import { LogbookChatTransport } from '../lib/chat/index.js';
import { COST_DOC } from './cost-section.js';
import { median, p95, PRICES } from './report.js';

export interface StreamBenchOptions {
  runs: number;
  turns: number;
  /** Characters each model call streams, and how fast (a model at ~50 tokens/s writes ~200 characters/s). */
  chars: number;
  charsPerSecond: number;
  dynamo: 'auto' | 'dynamodb-local' | 'dynalite';
  /**
   * Who reads each run: `poll`, a client long-polling GET /runs/{id}/stream; `chat`, the AI SDK's
   * client (logbook/chat's transport on GET /runs/{id}/chat, its chunks assembled by the `ai`
   * package's readUIMessageStream): the delay is then to the text of the assembled UI message.
   */
  reader?: 'poll' | 'chat';
}

/**
 * `npm run bench -- --stream`: streaming on the whole local stack. Runs whose model streams its
 * text at a model's pace, each followed by a long-polling client of GET /runs/{id}/stream (in this
 * process, as a browser would be). Counted: the chunk items each model call wrote (the only extra
 * DynamoDB writes streaming makes) and their write units; timed: from a piece leaving the model
 * (its text holds the time) to the client seeing it. Cost per million turns with and without
 * streaming: the turn's cost as docs/cost.md measured it (npm run bench) plus the chunk writes.
 */
export async function runStreamBench(options: StreamBenchOptions): Promise<{ ok: boolean }> {
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const workDir = mkdtempSync(join(tmpdir(), 'logbook-stream-bench-'));
  log('starting the local stack...');
  const stack = await startLocalStack({
    agentsModule: resolve('bench/stream-agents.ts'),
    port: 0,
    dynamo: options.dynamo,
    prefix: `stream-${Date.now()}`,
    workDir,
    concurrency: Math.min(4, options.runs),
    env: { BENCH_TURNS: String(options.turns), BENCH_STREAM_CHARS: String(options.chars), BENCH_STREAM_CHARS_PER_S: String(options.charsPerSecond) },
  });
  try {
    const ids = Array.from({ length: options.runs }, (_, i) => `stream-${Date.now()}-${i}`);
    const delays: number[] = [];
    let textItems = 0;
    const follow = async (runId: string) => {
      let after: string | undefined;
      const texts = new Map<number, string>();
      const seen = new Set<string>();
      for (;;) {
        const query = new URLSearchParams({ waitSeconds: '20', limit: '500', ...(after ? { after } : {}) });
        const res = await fetch(`${stack.apiUrl}/runs/${runId}/stream?${query.toString()}`);
        if (!res.ok) throw new Error(`stream of ${runId}: HTTP ${res.status} ${await res.text()}`);
        const page = (await res.json()) as { items: StreamItem[]; next: string; done: boolean };
        const now = Date.now();
        for (const item of page.items) {
          if (item.type !== 'text') continue;
          textItems++;
          const text = (texts.get(item.callSeq) ?? '') + item.text;
          texts.set(item.callSeq, text);
          for (const m of text.matchAll(/\|(\d{13})\|/g)) {
            const key = `${item.callSeq}:${m.index}`;
            if (seen.has(key)) continue;
            seen.add(key);
            delays.push(now - Number(m[1]));
          }
        }
        after = page.next;
        if (page.done) return;
      }
    };
    /** The AI SDK's reader: the transport starts the run and streams it; a piece counts once the assembled message shows it. */
    const followChat = async (runId: string) => {
      const transport = new LogbookChatTransport({ api: stack.apiUrl, agent: 'bench', budgets: { maxSteps: options.turns }, storage: null });
      const stream = await transport.sendMessages({
        trigger: 'submit-message',
        chatId: runId,
        messageId: undefined,
        messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'go' } as { type: string }] }],
        abortSignal: undefined,
      });
      const seen = new Set<string>();
      const lengths = new Map<number, number>();
      for await (const message of readUIMessageStream({ stream: stream as never, terminateOnError: true })) {
        const now = Date.now();
        message.parts.forEach((part, i) => {
          if (part.type !== 'text' || part.text.length === (lengths.get(i) ?? 0)) return;
          textItems++;
          lengths.set(i, part.text.length);
          for (const m of part.text.matchAll(/\|(\d{13})\|/g)) {
            const key = `${i}:${m.index}`;
            if (seen.has(key)) continue;
            seen.add(key);
            delays.push(now - Number(m[1]));
          }
        });
      }
    };
    const t0 = Date.now();
    const followers = ids.map(async (runId) => {
      if (options.reader === 'chat') return followChat(runId);
      const res = await fetch(`${stack.apiUrl}/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ agent: 'bench', input: 'go', runId, budgets: { maxSteps: options.turns } }),
      });
      if (res.status !== 201) throw new Error(`start ${runId}: HTTP ${res.status}`);
      await follow(runId);
    });
    await Promise.all(followers);
    const wallMs = Date.now() - t0;

    // The chunk items each run wrote, read back from the table: count and write units.
    let chunks = 0;
    let wru = 0;
    let completed = 0;
    for (const runId of ids) {
      const head = await stack.runtime.engine.heads.getHead({ tenant: 'local', runId });
      if (head?.status === 'completed') completed++;
      let startKey: Record<string, unknown> | undefined;
      do {
        const page = await stack.runtime.clients.doc.send(
          new QueryCommand({
            TableName: stack.resources.tableName,
            KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
            ExpressionAttributeValues: { ':pk': `RUN#local#${runId}`, ':p': STREAM_PREFIX },
            ConsistentRead: true,
            ExclusiveStartKey: startKey,
          }),
        );
        for (const item of page.Items ?? []) {
          chunks++;
          wru += Math.ceil(itemBytes(item) / 1024);
        }
        startKey = page.LastEvaluatedKey;
      } while (startKey);
    }
    const calls = options.runs * options.turns;
    const streamSeconds = options.chars / options.charsPerSecond;
    const perCall = chunks / calls;
    const perSecond = perCall / streamSeconds;
    const wruPerTurn = wru / calls;
    const base = baselinePerMTurns();
    const extra = wruPerTurn * PRICES.dynamoWruPerM;
    const reader = options.reader === 'chat' ? 'one AI SDK chat client (GET /runs/{id}/chat, readUIMessageStream)' : 'one long-polling client';
    const ok = completed === options.runs && perSecond <= 5 && p95(delays) < 500;
    const f = (x: number, d = 2) => x.toFixed(d);
    console.log(
      [
        `stream: ${options.runs} runs x ${options.turns} model calls on the local stack (${stack.dynamo}), each streaming ${options.chars} characters at ${options.charsPerSecond}/s (${f(streamSeconds, 1)} s), ${reader} per run`,
        `  completed ${completed}/${options.runs} in ${f(wallMs / 1000, 1)} s; ${textItems} ${options.reader === 'chat' ? 'text updates of the UI message' : 'text items served'}`,
        `  extra DynamoDB writes per model call (chunk items): ${f(perCall)} (${f(wruPerTurn)} write units)`,
        `  writes per second of streaming per run: ${f(perSecond)} (target <= 5; batching every ${STREAM_FLUSH_MS} ms): ${perSecond <= 5 ? 'met' : 'NOT met'}`,
        `  $ per million turns, DynamoDB+SQS+S3: ${base ? `without streaming ${usd(base.worker)} (worker) / ${usd(base.warm)} (warm steps), from ${COST_DOC}; with streaming ${usd(base.worker + extra)} / ${usd(base.warm + extra)}` : `(run npm run bench for the baseline)`} (+${usd(extra)}: ${f(wruPerTurn)} WRU x $${PRICES.dynamoWruPerM}/M)`,
        `  delay from a piece leaving the model to the ${options.reader === 'chat' ? "AI SDK client's UI message" : 'long-polling client'}: p50 ${f(median(delays), 0)} ms, p95 ${f(p95(delays), 0)} ms over ${delays.length} pieces (target p95 < 500 ms): ${p95(delays) < 500 ? 'met' : 'NOT met'}`,
        `  ${ok ? 'ok' : 'NOT OK'}`,
      ].join('\n'),
    );
    return { ok };
  } finally {
    await stack.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

const usd = (x: number) => `$${x.toFixed(2)}`;

/** DynamoDB's item size: attribute names plus values (strings as UTF-8, numbers ~ their digits). */
function itemBytes(item: Record<string, unknown>): number {
  let bytes = 0;
  for (const [k, v] of Object.entries(item)) bytes += Buffer.byteLength(k) + (typeof v === 'string' ? Buffer.byteLength(v) : String(v).length);
  return bytes;
}

/** The per-million-turn totals docs/cost.md holds (written by `npm run bench -- --write-docs`). */
function baselinePerMTurns(): { worker: number; warm: number } | undefined {
  const doc = readFileSync(COST_DOC, 'utf8');
  const worker = /worker: turns in one invocation, [^:]*: \$([\d.]+) per million turns/.exec(doc);
  const warm = /one turn per step, warm, [^:]*: \$([\d.]+) per million turns/.exec(doc);
  return worker && warm ? { worker: Number(worker[1]), warm: Number(warm[1]) } : undefined;
}
