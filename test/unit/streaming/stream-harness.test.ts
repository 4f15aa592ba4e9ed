// The crash harness over an agent whose model streams: every crash point, pair of crashes and
// frozen worker, and then, in every world the harness ran, the stream is checked against the log:
// each chunk was written by the worker that made its call's reservation, each answered call's
// streamed text is the start of its response, and a late reader gets the log's events in order
// with a discard for exactly each reservation left unanswered.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ScriptedModel, defineAgent, defineAgents, defineTool, type JsonValue } from 'logbook';
import {
  agentsWorld,
  effectLog,
  memoryStorage,
  resolveFromEffects,
  runCrashHarness,
  type EffectRecorder,
  type HarnessScenario,
  type World,
} from 'logbook/testing';
import { readStream } from '../../../lib/api/stream-read.js';
import { START_POSITION } from '../../../lib/api/stream-merge.js';
import type { ModelClient } from '../../../lib/ports/model-client.js';
import type { MemoryRunStream } from '../../../lib/adapters/memory/memory-run-stream.js';

interface StreamWorld extends World {
  effects: EffectRecorder<JsonValue>;
  stream: MemoryRunStream;
}

/** Streams the scripted text in 3-character pieces, at once (the harness's clock stands still during a call). */
function streaming(inner: ModelClient): ModelClient {
  return {
    async complete(request, options) {
      const response = await inner.complete(request, { signal: options.signal });
      for (let i = 0; i < response.text.length; i += 3) options.onText?.(response.text.slice(i, i + 3));
      return response;
    },
  };
}

const worlds: StreamWorld[] = [];
const run = { tenant: 't', runId: 'stream-1' };

const scenario: HarnessScenario<StreamWorld> = {
  name: 'streaming answer',
  world: () => {
    const effects = effectLog<JsonValue>();
    const price = defineTool({
      name: 'price',
      version: '1',
      description: 'The price of an item.',
      input: z.object({ item: z.string() }),
      policy: 'rerun',
      timeoutMs: 5_000,
      async execute({ item }, ctx) {
        effects.read('price', ctx.idempotencyKey, { item });
        return { item, priceUsd: 12.5 };
      },
    });
    const agent = defineAgent({
      name: 'shop',
      version: '1',
      model: { id: 'scripted:stream', maxOutputTokens: 256, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
      system: { version: 's1', text: 'You quote prices.' },
      tools: [price],
      graceMs: 1_000,
    });
    const model = () =>
      streaming(
        new ScriptedModel([
          { text: 'Let me look that up for you.', calls: [{ name: 'price', args: { item: 'mug' } }] },
          { text: 'A mug costs 12.50 USD, <b>tax</b> included.' },
        ]),
      );
    const storage = memoryStorage();
    const world = { ...agentsWorld(defineAgents({ agents: [agent], models: { 'scripted:stream': model } }), storage), effects, stream: storage.stream };
    worlds.push(world);
    return world;
  },
  request: { ...run, agent: 'shop', input: 'How much is a mug?' },
  sideEffects: (world) => world.effects.all(),
  resolver: (world) => resolveFromEffects(world.effects),
};

type Raw = { seq: number; type: string; by: { epoch: number; nonce: string }; reservation?: unknown; text?: { value?: string } | null };

describe('crash harness over a streaming model', () => {
  it('holds at every point, and every world’s stream agrees with its log', async () => {
    const report = await runCrashHarness(scenario, { doubleCrashStride: 5 });
    expect(report.failed).toBe(0);
    let streamed = 0;
    let discarded = 0;
    for (const world of worlds) {
      const events = (await world.storage.log.read(run, { afterSeq: 0 })).events as Raw[];
      const bySeq = new Map(events.map((e) => [e.seq, e]));
      const reserves = (e: Raw) => e.type === 'model_started' || (e.type === 'tool_result' && e.reservation !== undefined);
      const chunks = await world.stream.read(run, {});
      streamed += chunks.length;
      for (const c of chunks) {
        const at = bySeq.get(c.callSeq);
        expect(at && reserves(at), `chunk at ${c.callSeq} has a reservation`).toBe(true);
        expect(c.writer).toEqual(at!.by);
      }
      // Each answered call: its streamed text (indexes 0..n, no gap) starts its response's text.
      for (const e of events.filter(reserves)) {
        const next = events.find((x) => x.seq > e.seq && (reserves(x) || x.type === 'model_response' || x.type === 'model_failed'));
        const mine = chunks.filter((c) => c.callSeq === e.seq);
        expect(mine.map((c) => c.index)).toEqual(mine.map((_, i) => i));
        if (next?.type === 'model_response') expect((next.text?.value ?? '').startsWith(mine.map((c) => c.text).join(''))).toBe(true);
      }
      // A late reader: the log's events in order, no text (the run is over), a discard for each unanswered reservation.
      const page = await readStream({ log: world.storage.log, clock: world.clock, stream: world.stream }, run, {
        from: START_POSITION,
        limit: 1000,
        waitMs: 0,
        pollMs: 1,
        finished: true,
      });
      expect(page.done).toBe(true);
      expect(page.items.filter((i) => i.type === 'event').map((i) => (i.type === 'event' ? i.event.seq : 0))).toEqual(events.map((e) => e.seq));
      expect(page.items.some((i) => i.type === 'text')).toBe(false);
      const unanswered = events
        .filter(reserves)
        .filter(
          (e) => events.find((x) => x.seq > e.seq && (reserves(x) || x.type === 'model_response' || x.type === 'model_failed'))?.type !== 'model_response',
        )
        .map((e) => e.seq);
      const discards = page.items.filter((i) => i.type === 'discard').map((i) => (i.type === 'discard' ? i.callSeq : 0));
      expect(discards).toEqual(unanswered);
      discarded += discards.length;
    }
    // The harness did stream, and did abandon streamed attempts.
    expect(streamed).toBeGreaterThan(worlds.length);
    expect(discarded).toBeGreaterThan(0);
    console.info(`${report.points.length} points, ${worlds.length} worlds, ${streamed} chunks, ${discarded} discards`);
  }, 300_000);
});
