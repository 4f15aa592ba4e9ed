// Streaming is on in the local stack (`npm start`): worker processes (the real worker handler)
// publish a streaming model's text, and the local server serves GET /runs/{id}/stream as JSON and
// as Server-Sent Events; the SSE response ends by itself when the run is done. Counts only.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startLocalStack } from '../../dev/local/stack.js';
import type { StreamItem } from '../../lib/api/stream-merge.js';
import { endpointsFor } from '../setup/emulator-context.js';

const endpoints = endpointsFor('dynalite') ?? endpointsFor('dynamodb-local');

describe.skipIf(!endpoints)('streaming on the local stack', () => {
  it('serves a streaming run as SSE: events and text, ids the JSON cursors, ending with the run', async () => {
    const workDir = mkdtempSync(join(tmpdir(), 'logbook-stream-stack-'));
    const stack = await startLocalStack({
      agentsModule: resolve('bench/stream-agents.ts'),
      port: 0,
      endpoints,
      prefix: `stream-stack-${Date.now()}`,
      workDir,
      concurrency: 1,
      env: { BENCH_TURNS: '2', BENCH_STREAM_CHARS: '320', BENCH_STREAM_CHARS_PER_S: '400' },
    });
    try {
      const started = await fetch(`${stack.apiUrl}/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ agent: 'bench', input: 'go', runId: 'sse-1', budgets: { maxSteps: 2 } }),
      });
      expect(started.status).toBe(201);
      const res = await fetch(`${stack.apiUrl}/runs/sse-1/stream`, { headers: { accept: 'text/event-stream' } });
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const text = await res.text(); // ends when the run is done
      const messages = text
        .split('\n\n')
        .filter((b) => b.startsWith('id: '))
        .map(
          (b) =>
            JSON.parse(
              b
                .split('\n')
                .find((l) => l.startsWith('data: '))!
                .slice(6),
            ) as StreamItem,
        );
      const types = messages.map((m) => m.type);
      expect(types.filter((t) => t === 'text').length).toBeGreaterThan(0);
      const events = messages.filter((m): m is Extract<StreamItem, { type: 'event' }> => m.type === 'event');
      expect(events.at(-1)!.event.type).toBe('run_completed');
      // A late JSON reader gets the same events, and no text: every call is answered by now.
      const late = (await (await fetch(`${stack.apiUrl}/runs/sse-1/stream?limit=500`)).json()) as { items: StreamItem[]; done: boolean };
      expect(late.done).toBe(true);
      expect(late.items.map((i) => i.cursor)).toEqual(events.map((e) => e.cursor));
      // The text streamed for each call is the start of what its model_response recorded.
      const responses = events.filter((e) => e.event.type === 'model_response');
      for (const r of responses) {
        const callSeq = (r.event.seq as number) - 1; // the reservation is right before its response here
        const streamed = messages
          .filter((m) => m.type === 'text' && m.callSeq === callSeq)
          .map((m) => (m as { text: string }).text)
          .join('');
        expect(((r.event.text as { value: string }).value ?? '').startsWith(streamed)).toBe(true);
      }
    } finally {
      await stack.stop();
      rmSync(workDir, { recursive: true, force: true });
    }
  }, 120_000);
});
