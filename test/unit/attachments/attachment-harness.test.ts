/**
 * The crash harness over a run whose input carries an image: at every crash point, pair of points
 * and frozen worker, the resumed run's model calls carry the same bytes (read again from the
 * tenant's uploads, sha256-checked) and the run ends with the same answer, which names them.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ScriptedModel, attachment, defineAgent, defineAgents, defineTool, type JsonValue, type ModelRequest } from 'logbook';
import {
  agentsWorld,
  effectLog,
  formatHarnessReport,
  memoryStorage,
  resolveFromEffects,
  runCrashHarness,
  uploadAttachment,
  type EffectRecorder,
  type HarnessScenario,
  type World,
} from 'logbook/testing';
import { pngBytes } from './fixtures.js';

interface PhotoWorld extends World {
  effects: EffectRecorder<JsonValue>;
}

const photo = pngBytes(2048, 3);
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const ref = { kind: 'blob' as const, sha256: sha(photo), mediaType: 'image/png' as const, bytes: photo.byteLength, name: 'mug.png' };

/** What the model says it saw: the hash and size of every attachment it was sent this call. */
const seen = (r: ModelRequest) =>
  r.messages
    .flatMap((m) => (m.role === 'user' ? (m.attachments ?? []) : []))
    .map((a) => {
      const bytes = Buffer.from(a.data, 'base64');
      return `${a.name}:${sha(bytes).slice(0, 16)}:${bytes.byteLength}`;
    })
    .join(',');

function scenario(): HarnessScenario<PhotoWorld> {
  return {
    name: 'photo',
    world: () => {
      const effects = effectLog<JsonValue>();
      const lookup = defineTool({
        name: 'order_lookup',
        version: '1',
        description: 'An order by id.',
        input: z.object({ orderId: z.string(), saw: z.string() }),
        policy: 'rerun',
        timeoutMs: 5_000,
        async execute({ orderId, saw }, ctx) {
          effects.read('order', ctx.idempotencyKey, { orderId, saw });
          return { orderId, item: 'mug' };
        },
      });
      const agent = defineAgent({
        name: 'claims',
        version: '1',
        model: { id: 'scripted:claims', maxOutputTokens: 256, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
        system: { version: 'c1', text: 'You judge damage claims from photos.' },
        input: z.object({ orderId: z.string(), photo: attachment({ accept: ['image'] }) }),
        tools: [lookup],
        graceMs: 1_000,
      });
      const model = () =>
        new ScriptedModel([
          (r) => ({ calls: [{ name: 'order_lookup', args: { orderId: '1001', saw: seen(r) } }] }),
          (r) => ({ text: `damaged; saw ${seen(r)}` }),
        ]);
      const storage = memoryStorage();
      // The upload, made before the run starts, as POST /attachments makes it (the memory store's
      // put is done when called; the reference is the one computed above).
      void uploadAttachment(storage, 't', { bytes: photo, mediaType: 'image/png', name: 'mug.png' });
      return { ...agentsWorld(defineAgents({ agents: [agent], models: { 'scripted:claims': model } }), storage), effects };
    },
    request: { tenant: 't', runId: 'claim-1', agent: 'claims', input: { orderId: '1001', photo: ref } },
    sideEffects: (world) => world.effects.all(),
    resolver: (world) => resolveFromEffects(world.effects),
  };
}

describe('crash harness over a run with an image input', () => {
  it('sends the same bytes after every crash and ends with the same answer', async () => {
    const report = await runCrashHarness(scenario(), { doubleCrashStride: 7 });
    expect(report.failed, formatHarnessReport(report)).toBe(0);
    const expected = `mug.png:${ref.sha256.slice(0, 16)}:2048`;
    expect(report.baseline).toMatchObject({ status: 'completed', answer: `damaged; saw ${expected}`, steps: 2 });
    expect(report.points.length).toBeGreaterThan(10);
    expect(report.points.filter((p) => p.crashes > 0).length).toBeGreaterThan(5);
  }, 120_000);
});
