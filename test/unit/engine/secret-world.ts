/**
 * A world for issue 33's corpus test: agents whose model and tools put the current secret text
 * (`world.secret`) everywhere a run can carry it, an API app and the inspector over the same
 * storage, streaming, outcome notices, spans with payloads on and a logger, all recorded. What the
 * model and the tools are given is recorded too: they must only ever see the redacted form.
 */
import { z } from 'zod';
import { createApiApp } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import { agentTool } from '../../../lib/authoring/agent-tool.js';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { AgentRegistry } from '../../../lib/authoring/registry.js';
import { waitForSignal } from '../../../lib/authoring/waits.js';
import { ModelError, ToolOutcomeUnknownError } from '../../../lib/core/errors.js';
import type { ModelRequest, ModelResponse, ModelResponseCall } from '../../../lib/core/messages.js';
import type { ModelCallOptions, ModelClient } from '../../../lib/ports/model-client.js';
import { runStep } from '../../../lib/engine/step-runner.js';
import { sweep } from '../../../lib/engine/sweep.js';
import { StaticModelResolver } from '../../../lib/models/scripted-model.js';
import { memoryStorage, spawnWorker, type World } from '../../../lib/testing/world.js';
import { ManualClock } from '../../../lib/adapters/memory/manual-clock.js';
import { createInspectorApp } from '../../../dev/ui/inspector-app.js';
import { collectTracer } from '../tracing/collect-tracer.js';

const usage = { inputTokens: 10, outputTokens: 5 };
const price = { inputPerMTokUsd: 1, outputPerMTokUsd: 1 };
const turnOf = (r: ModelRequest) => r.messages.filter((m) => m.role === 'assistant').length + 1;
const last = (r: ModelRequest) => r.messages[r.messages.length - 1];

export function secretWorld() {
  const seen: string[] = [];
  const logLines: string[] = [];
  /** The secret text of the entry under test, and what a live reader does once a model call has streamed its text. */
  const state: { secret: string; live?: () => Promise<void> } = { secret: '' };
  const S = () => state.secret;
  const clock = new ManualClock(Date.UTC(2026, 10, 1));

  /** Streams its text in 5-character deltas (a secret split across several), reading the stream as a live reader would. */
  const streaming = (decide: (r: ModelRequest) => Omit<ModelResponse, 'usage' | 'stopReason'>): ModelClient => ({
    async complete(req: ModelRequest, options: ModelCallOptions): Promise<ModelResponse> {
      seen.push(JSON.stringify({ system: req.system, messages: req.messages }));
      const out = decide(req);
      for (let i = 0; i < out.text.length; i += 5) {
        options.onText?.(out.text.slice(i, i + 5));
        await clock.advance(60);
      }
      await state.live?.();
      return { ...out, usage, stopReason: out.calls.length > 0 ? 'tool_use' : 'end_turn' };
    },
  });

  const tools = {
    lookup: defineTool({
      name: 'lookup',
      version: '1',
      description: 'Look something up.',
      input: z.object({ q: z.string() }),
      policy: 'rerun',
      async execute(args) {
        seen.push(JSON.stringify(args));
        return { found: `the record says ${S()}`, q: args.q };
      },
    }),
    fragile: defineTool({
      name: 'fragile',
      version: '1',
      description: 'Fails.',
      input: z.object({ q: z.string() }),
      policy: 'rerun',
      async execute(args) {
        seen.push(JSON.stringify(args));
        throw new Error(`upstream refused: ${S()}`);
      },
    }),
    charge: defineTool({
      name: 'charge',
      version: '1',
      description: 'Charge a card (approved by a person).',
      input: z.object({ note: z.string() }),
      policy: 'escalate',
      approval: 'always',
      async execute(args) {
        seen.push(JSON.stringify(args));
        return { charged: true, note: args.note };
      },
    }),
    refund: defineTool({
      name: 'refund',
      version: '1',
      description: 'Refund (approved by a person, who may edit it).',
      input: z.object({ note: z.string() }),
      policy: 'escalate',
      approval: 'always',
      async execute(args) {
        seen.push(JSON.stringify(args));
        return { refunded: true, note: args.note };
      },
    }),
    code: waitForSignal({
      name: 'wait_code',
      signal: 'code',
      description: 'Wait for the code.',
      payload: z.object({ code: z.string() }),
      timeoutSeconds: 3600,
    }),
    ship: defineTool({
      name: 'ship',
      version: '1',
      description: 'Ship (irreversible).',
      input: z.object({ note: z.string() }),
      policy: 'escalate',
      timeoutMs: 1_000,
      async execute() {
        throw new ToolOutcomeUnknownError(`the line went dead while sending ${S()}`);
      },
    }),
  };

  const probe = defineAgent({
    name: 'probe',
    version: '1',
    model: { id: 'scripted:probe', maxOutputTokens: 256, price },
    // Instructions built from the input: the pinned prompt holds what the input held (redacted).
    system: { version: 'p1', text: (input) => `Help with: ${JSON.stringify(input)}` },
    tools: [tools.lookup, tools.fragile, tools.charge, tools.refund, tools.code],
  });
  const probeModel = streaming((r) => {
    const turn = turnOf(r);
    if (turn === 1) {
      const calls: ModelResponseCall[] = [
        { providerId: 'p1', name: 'lookup', args: { q: S() } },
        { providerId: 'p2', name: 'fragile', args: { q: S() } },
        { providerId: 'p3', name: 'charge', args: { note: S() } },
        { providerId: 'p4', name: 'refund', args: { note: 'as asked' } },
        // A provider that sent arguments that do not parse: its error quotes them.
        { providerId: 'p5', name: 'lookup', args: `{"q": "${S()}`, argsError: `arguments are not valid JSON: {"q": "${S()}` },
      ];
      return { text: `Looking into ${S()} now, one moment please.`, calls };
    }
    if (turn === 2) return { text: '', calls: [{ providerId: 'p6', name: 'wait_code', args: {} }] };
    return { text: `Done with ${S()} (turn ${turn}).`, calls: [] };
  });

  const desk = defineAgent({
    name: 'desk',
    version: '1',
    model: { id: 'scripted:desk', maxOutputTokens: 256, price },
    system: { version: 'd1', text: 'Ship it.' },
    tools: [tools.ship, tools.code],
    graceMs: 1_000,
  });
  const deskModel = streaming((r) =>
    turnOf(r) === 1
      ? { text: 'Shipping.', calls: [{ providerId: 'd1', name: 'ship', args: { note: S() } }] }
      : { text: '', calls: [{ providerId: 'd2', name: 'wait_code', args: {} }] },
  );

  const crash = defineAgent({
    name: 'crash',
    version: '1',
    model: { id: 'scripted:crash', maxOutputTokens: 256, price },
    system: { version: 'c1', text: 'Fail.' },
    tools: [],
  });
  const crashModel: ModelClient = {
    async complete(req) {
      seen.push(JSON.stringify(req.messages));
      throw new ModelError('model_bad_request', `the provider refused the prompt containing ${S()}`, false);
    },
  };

  const researcher = defineAgent({
    name: 'researcher',
    version: '1',
    model: { id: 'scripted:researcher', maxOutputTokens: 256, price },
    system: { version: 'r1', text: 'Research.' },
    tools: [],
  });
  const researcherModel = streaming(() => ({ text: `The child found ${S()} in the archive.`, calls: [] }));
  const planner = defineAgent({
    name: 'planner',
    version: '1',
    model: { id: 'scripted:planner', maxOutputTokens: 256, price },
    system: { version: 'pl1', text: 'Plan.' },
    tools: [
      agentTool(researcher, {
        name: 'research',
        description: 'Ask the researcher.',
        budgets: { maxInputTokens: 20_000, maxOutputTokens: 2_000, maxCostUsd: 0.5 },
      }),
    ],
  });
  const plannerModel = streaming((r) =>
    last(r)?.role === 'tool'
      ? { text: `The planner concludes: ${S()}.`, calls: [] }
      : { text: 'Asking.', calls: [{ providerId: 'pl', name: 'research', args: { task: S() } }] },
  );

  const storage = memoryStorage();
  const tracer = { ...collectTracer(), payloads: true };
  const world: World = {
    storage,
    clock,
    registry: new AgentRegistry().register(probe).register(desk).register(crash).register(planner).register(researcher),
    models: new StaticModelResolver({
      'scripted:probe': probeModel,
      'scripted:desk': deskModel,
      'scripted:crash': crashModel,
      'scripted:planner': plannerModel,
      'scripted:researcher': researcherModel,
    }),
    tracer,
  };
  const logger = {
    info: (m: string, f?: object) => void logLines.push(`${m} ${JSON.stringify(f ?? {})}`),
    warn: (m: string, f?: object) => void logLines.push(`${m} ${JSON.stringify(f ?? {})}`),
    error: (m: string, f?: object) => void logLines.push(`${m} ${JSON.stringify(f ?? {})}`),
  };
  const worker = spawnWorker(world, undefined, {}, { logger });
  const app = createApiApp({
    service: engineRunService(spawnWorker(world, undefined, {}, { logger }).deps),
    caller: () => ({ tenant: 't', principal: 'alice' }),
  });
  const ui = createInspectorApp({ label: 'local stack' });

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await app.request(path, {
      method,
      ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, text: await res.text() };
  };
  const drain = async () => {
    for (let i = 0; i < 50; i++) {
      const next = storage.stepQueue.take();
      if (!next) return;
      await runStep(worker.deps, next.tick, { owner: 'w', deadlineAt: clock.now() + 300_000 });
    }
  };
  /** Past every call's deadline and grace: the sweeper wakes what waits, then the queue drains. */
  const later = async (ms: number) => {
    await clock.advance(ms);
    await sweep(worker.deps);
    await drain();
  };
  return { state, world, storage, tracer, seen, logLines, api, ui, drain, later };
}

export type SecretWorld = ReturnType<typeof secretWorld>;
