/**
 * Property: random JSON with secrets planted at random depths (every built-in format, values under
 * secret keys, an application's own rule and key) never shows one in the event log, in an
 * offloaded payload, or in what the API serves (GET /runs/{id}, its events, its blobs), and never
 * reaches the model or the tool; redaction keeps every key, array length and number. Seeded: a
 * failure names its case, and the run is replayed by that seed. Spans do not exist yet.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ManualClock, MemoryBlobStore, MemoryStepQueue, MemoryStore, SequentialIds } from '../../../lib/adapters/memory/index.js';
import { createApiApp } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import type { JsonValue } from '../../../lib/core/json.js';
import type { ModelRequest, ModelResponse } from '../../../lib/core/messages.js';
import { defineAgents } from '../../../lib/authoring/define-agents.js';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { createEngine, type EngineDeps } from '../../../lib/engine/engine.js';
import { Redactor, type RedactionOptions } from '../../../lib/core/redaction.js';
import { runStep } from '../../../lib/engine/step-runner.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { Rng, SECRET_KEYS, randomDoc, shape, type Doc, type Plant } from './redaction-gen.js';

const SEED = 26_2;
const CASES = 300;

/** The application's own secret format and key, through defineAgents({ redaction }). */
const APP_REDACTION: RedactionOptions = { rules: [{ name: 'acme_badge', pattern: /\bacme_[a-z0-9]{16}\b/ }], keys: ['badgeCode'] };
const acmeBadge = (r: Rng): Plant => ((s) => ({ kind: 'acme_badge', text: s, secret: s }))(`acme_${r.chars(16, 'abcdefghijklmnopqrstuvwxyz0123456789')}`);
const EXTRA = [acmeBadge];
const KEYS = [...SECRET_KEYS, 'badgeCode', 'badge_code'];

interface Case {
  input: Doc;
  args: Doc;
  output: Doc;
  text: Doc;
  answer: Doc;
  followUp?: Doc;
  /** Outputs padded past the inline limit, so they are offloaded to the blob store. */
  large: boolean;
}

function caseOf(rng: Rng): Case {
  const doc = () => randomDoc(rng, EXTRA, KEYS);
  const c: Case = { input: doc(), args: doc(), output: doc(), text: doc(), answer: doc(), large: rng.int(2) === 0 };
  if (c.large && c.output.value && typeof c.output.value === 'object' && !Array.isArray(c.output.value)) c.output.value['padding'] = 'lorem ipsum '.repeat(400);
  if (rng.int(2) === 0) c.followUp = doc();
  return c;
}

const docsOf = (c: Case) => [c.input, c.args, c.output, c.text, c.answer, ...(c.followUp ? [c.followUp] : [])];

describe('redaction, property over random JSON', () => {
  it(`the redactor alone: ${CASES * 4} documents lose every planted secret, keep their shape, and redact to the same again`, () => {
    const rng = new Rng(SEED);
    const r = new Redactor(APP_REDACTION);
    let planted = 0;
    for (let i = 0; i < CASES * 4; i++) {
      const { value, plants } = randomDoc(rng, EXTRA, KEYS);
      const out = r.json(value);
      const text = JSON.stringify(out);
      for (const p of plants) expect(text.includes(p.secret), `doc ${i} (seed ${SEED}): ${p.kind} ${p.secret} in ${text}`).toBe(false);
      expect(shape(out), `doc ${i}`).toEqual(shape(value));
      expect(r.json(out), `doc ${i}`).toEqual(out);
      planted += plants.length;
    }
    expect(planted).toBeGreaterThan(CASES * 4);
  });

  it(`through the engine and the API: ${CASES} runs show no planted secret in the log, the blobs, the API or to the model and tool`, async () => {
    const rng = new Rng(SEED + 1);
    let current: Case | undefined;
    const modelSaw: string[] = [];
    const toolSaw: JsonValue[] = [];
    const probe = defineTool({
      name: 'probe',
      version: '1',
      description: 'Look something up.',
      input: z.object({ payload: z.unknown() }),
      policy: 'rerun',
      async execute(args) {
        toolSaw.push(args.payload as JsonValue);
        return current!.output.value;
      },
    });
    const model = {
      async complete(req: ModelRequest): Promise<ModelResponse> {
        modelSaw.push(JSON.stringify(req.messages));
        const c = current!;
        const usage = { inputTokens: 10, outputTokens: 5 };
        const last = req.messages[req.messages.length - 1];
        if (last?.role === 'user' && !req.messages.some((m) => m.role === 'tool')) {
          return { text: JSON.stringify(c.text.value), calls: [{ providerId: 'p1', name: 'probe', args: { payload: c.args.value } }], usage, stopReason: 'tool_use' };
        }
        return { text: JSON.stringify(last?.role === 'tool' ? c.answer.value : c.followUp?.value), calls: [], usage, stopReason: 'end_turn' };
      },
    };
    const agents = defineAgents({
      agents: [
        defineAgent({
          name: 'probe',
          version: '1',
          model: { id: 'scripted:probe', maxOutputTokens: 64, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 1 } },
          system: { version: '1', text: 'Probe.' },
          tools: [probe],
        }),
      ],
      models: { 'scripted:probe': () => model },
      redaction: APP_REDACTION,
    });
    const store = new MemoryStore();
    const blobs = new MemoryBlobStore();
    const queue = new MemoryStepQueue();
    const clock = new ManualClock(Date.UTC(2026, 10, 1));
    // As createRuntime wires a handler: the agents' redaction goes to the engine.
    const deps: EngineDeps = createEngine(
      { log: store, heads: store, inbox: store, blobs, queue, models: { resolve: (id) => agents.model(id) }, registry: agents.registry, clock, ids: new SequentialIds('p') },
      { inlineLimitBytes: 2048, ...(agents.redaction ? { redaction: agents.redaction } : {}) },
    );
    const app = createApiApp({ service: engineRunService(deps), caller: () => ({ tenant: 'acme', principal: 'alice' }) });
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await app.request(path, { method, ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}) });
      return { status: res.status, text: await res.text() };
    };
    const drain = async () => {
      for (let i = 0; i < 20; i++) {
        const next = queue.take();
        if (!next) return;
        await runStep(deps, next.tick, { owner: 'w', deadlineAt: clock.now() + 300_000 });
      }
    };

    let offloaded = 0;
    let followUps = 0;
    let plantedTotal = 0;
    for (let i = 0; i < CASES; i++) {
      const c = caseOf(rng);
      current = c;
      const runId = `p-${i}`;
      const run = { tenant: 'acme', runId };
      modelSaw.length = 0;
      toolSaw.length = 0;
      expect((await api('POST', '/runs', { agent: 'probe', runId, input: c.input.value })).status).toBe(201);
      await drain();
      if (c.followUp) {
        expect((await api('POST', `/runs/${runId}/messages`, { input: c.followUp.value })).status).toBe(202);
        await drain();
        followUps++;
      }
      const head = await store.getHead(run);
      expect(head?.status, `run ${i}`).toBe('completed');

      // Everything stored and served for this run.
      const seen: [string, string][] = [];
      const { events } = await store.read(run, { afterSeq: 0 });
      seen.push(['log', JSON.stringify(events)]);
      const keys = blobs.keys().filter((k) => k.includes(`/${runId}/`));
      offloaded += keys.length;
      for (const k of keys) seen.push([`blob ${k}`, new TextDecoder().decode(await blobs.get(k))]);
      const view = await api('GET', `/runs/${runId}`);
      expect(view.status).toBe(200);
      seen.push(['GET /runs/{id}', view.text]);
      const page = await api('GET', `/runs/${runId}/events?limit=500`);
      expect(page.status).toBe(200);
      seen.push(['GET /runs/{id}/events', page.text]);
      for (const sha of new Set([...page.text.matchAll(/"sha256":"([0-9a-f]{64})"/g)].map((m) => m[1]))) {
        const blob = await api('GET', `/runs/${runId}/blobs/${sha}`);
        if (blob.status === 200) seen.push([`GET blob ${sha}`, blob.text]);
      }
      seen.push(['model', modelSaw.join('\n')], ['tool', JSON.stringify(toolSaw)]);

      const plants = docsOf(c).flatMap((d) => d.plants);
      plantedTotal += plants.length;
      for (const [where, text] of seen) {
        for (const p of plants) expect(text.includes(p.secret), `run ${i} (seed ${SEED + 1}): ${p.kind} secret ${p.secret} in ${where}`).toBe(false);
      }
      // Redaction kept the structure: the tool got arguments and the log holds an input of the same shape.
      expect(toolSaw.map((a) => shape(a)), `run ${i}`).toEqual([shape(c.args.value)]);
      const started = events[0] as { input: { kind: string; value?: JsonValue; key?: string } };
      const input = started.input.kind === 'inline' ? started.input.value! : (JSON.parse(new TextDecoder().decode(await blobs.get(started.input.key!))) as JsonValue);
      expect(shape(input), `run ${i}`).toEqual(shape(c.input.value));
    }
    // The cases did reach the blob store and the follow-up path, and planted plenty.
    expect(offloaded).toBeGreaterThan(CASES / 4);
    expect(followUps).toBeGreaterThan(CASES / 4);
    expect(plantedTotal).toBeGreaterThan(CASES * 10);
  }, 120_000);
});
