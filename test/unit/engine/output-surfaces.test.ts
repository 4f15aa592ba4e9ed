import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApiApp } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import type { RunView } from '../../../lib/api/schemas.js';
import { outcomeDetail } from '../../../lib/adapters/aws/eventbridge-publisher.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { MAX_NOTICE_OUTPUT_BYTES } from '../../../lib/engine/outcomes.js';
import type { ModelRequest } from '../../../lib/core/messages.js';
import { toChatCompletionsBody } from '../../../lib/models/openai-wire.js';
import { toConverseInput } from '../../../lib/models/bedrock-mapping.js';
import { ScriptedModel } from '../../../lib/models/scripted-model.js';
import type { OutcomeNotice } from '../../../lib/ports/outcome-publisher.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { agentsWorld } from '../../../lib/testing/world.js';
import { spawnWorker } from '../../../lib/testing/world.js';
import { agentTool, defineAgent, defineAgents } from '../../../lib/index.js';
import { runText } from '../../../dev/cli/run-text.js';
import { logOf } from './helpers.js';

const Quote = z.object({ item: z.string(), priceUsd: z.number() });

async function completed(text: string, schema: z.ZodType = Quote) {
  const t = scriptedWorld({ tools: [], script: [], model: new ScriptedModel([{ text }]), output: schema });
  const notices: OutcomeNotice[] = [];
  const w = spawnWorker(t.world, undefined, {}, { publisher: { publish: async (n) => void notices.push(n) } });
  await startRun(w.deps, { ...t.run, agent: 'agent', input: 'quote a mug' });
  const result = await driveRun(t.world, t.run, { worker: () => w });
  return { ...t, w, notices, result };
}

function api(deps: Parameters<typeof engineRunService>[0]) {
  return createApiApp({ service: engineRunService(deps), caller: () => ({ tenant: 't', principal: 'tester' }) });
}

describe('structured output where a run is read', () => {
  it('the outcome notice (EventBridge detail) carries the output as JSON', async () => {
    const { notices } = await completed('{"item":"mug","priceUsd":12.5}');
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ detailType: 'Agent Run Completed', output: { item: 'mug', priceUsd: 12.5 } });
    expect(outcomeDetail(notices[0]!)).toMatchObject({ status: 'completed', output: { item: 'mug', priceUsd: 12.5 } });
    expect(outcomeDetail(notices[0]!).outputOmitted).toBeUndefined();
  });

  it('an output too large for EventBridge is left out of the notice and flagged; GET /runs/{id} has it whole', async () => {
    const Big = z.object({ item: z.string() });
    const item = 'x'.repeat(MAX_NOTICE_OUTPUT_BYTES + 10);
    const { notices, w, run } = await completed(JSON.stringify({ item }), Big);
    expect(notices[0]!.output).toBeUndefined();
    expect(notices[0]!.outputOmitted).toBe(true);
    expect(outcomeDetail(notices[0]!)).toMatchObject({ outputOmitted: true });
    // Stored as a blob (over the inline limit), read back as JSON by the API.
    const res = await api(w.deps).request(`/runs/${run.runId}`);
    const view = (await res.json()) as RunView;
    expect(view.output).toEqual({ item });
  });

  it('GET /runs/{id} gives the output as JSON and the pinned output schema; the OpenAPI document has both', async () => {
    const { w, run } = await completed('{"item":"mug","priceUsd":12.5}');
    const res = await api(w.deps).request(`/runs/${run.runId}`);
    expect(res.status).toBe(200);
    const view = (await res.json()) as RunView;
    expect(view.output).toEqual({ item: 'mug', priceUsd: 12.5 });
    expect(view.result).toBe('{"item":"mug","priceUsd":12.5}');
    expect(view.pinned?.output).toMatchObject({ maxRepairs: 2, schema: { type: 'object', required: ['item', 'priceUsd'] } });
    const doc = (await (await api(w.deps).request('/openapi.json')).json()) as { components: { schemas: Record<string, unknown> } };
    const runSchema = doc.components.schemas.Run as { allOf?: { properties?: Record<string, unknown> }[] };
    const props = Object.assign({}, ...(runSchema.allOf ?? []).map((p) => p.properties ?? {})) as Record<string, { properties?: Record<string, unknown> }>;
    expect(props.output).toBeDefined();
    expect(Object.keys(props.pinned?.properties ?? {})).toContain('output');
  });

  it('`logbook runs show` prints the output as JSON, and the pinned schema', async () => {
    const { w, run } = await completed('{"item":"mug","priceUsd":12.5}');
    const view = (await (await api(w.deps).request(`/runs/${run.runId}`)).json()) as RunView;
    const text = runText(view, Date.now());
    expect(text).toContain(`output:\n${JSON.stringify({ item: 'mug', priceUsd: 12.5 }, null, 2)}`);
    expect(text).toMatch(/output schema +[0-9a-f]{12} \(at most 2 repairs\)/);
  });

  it("a parent's agentTool result is the child's output as JSON, not its quoted text", async () => {
    const quoter = defineAgent({
      name: 'quoter',
      version: '1',
      model: { id: 'scripted:quoter', maxOutputTokens: 256 },
      system: { version: '1', text: 'quote' },
      tools: [],
      output: Quote,
    });
    const seen: ModelRequest[] = [];
    const parent = defineAgent({
      name: 'shop',
      version: '1',
      model: { id: 'scripted:shop', maxOutputTokens: 256 },
      system: { version: '1', text: 'shop' },
      tools: [agentTool(quoter, { name: 'quote', description: 'get a quote', budgets: { maxSteps: 3, maxInputTokens: 10_000, maxOutputTokens: 1_000, maxCostUsd: 0.1 } })],
    });
    const world = agentsWorld(
      defineAgents({
        agents: [parent],
        models: {
          'scripted:shop': () => new ScriptedModel([{ calls: [{ name: 'quote', args: { task: 'mug' } }] }, (r) => (seen.push(r), { text: 'done' })]),
          'scripted:quoter': () => new ScriptedModel([{ text: '{"item":"mug","priceUsd":12.5}' }]),
        },
      }),
    );
    const w = spawnWorker(world);
    const run = { tenant: 't', runId: 'shop-1' };
    await startRun(w.deps, { ...run, agent: 'shop', input: 'buy a mug' });
    const result = await driveRun(world, run, { worker: () => w });
    expect(result.head.status).toBe('completed');
    const { events } = await logOf(world, run);
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ source: 'child', ok: true, output: { kind: 'inline', value: { item: 'mug', priceUsd: 12.5 } } });
    // The parent's model reads the object as JSON.
    expect(seen[0]!.messages.find((m) => m.role === 'tool')).toMatchObject({ content: '{"item":"mug","priceUsd":12.5}' });
  });
});

describe('structured output on the wire', () => {
  const request: ModelRequest = {
    modelId: 'm',
    system: 'sys',
    messages: [{ role: 'user', content: 'quote' }],
    tools: [],
    maxOutputTokens: 100,
    output: { name: 'final_answer', schema: { type: 'object', properties: { item: { type: 'string' } }, required: ['item'] } },
  };

  it('OpenAI-compatible: a json_schema response format with the pinned schema, not strict', () => {
    const body = toChatCompletionsBody('gpt', request, 'max_tokens');
    expect(body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'final_answer', schema: { type: 'object', properties: { item: { type: 'string' } }, required: ['item'] }, strict: false },
    });
    const { output: _, ...plain } = request;
    expect(toChatCompletionsBody('gpt', plain, 'max_tokens').response_format).toBeUndefined();
  });

  it("Bedrock Converse: outputConfig.textFormat with the schema as a JSON string", () => {
    const input = toConverseInput('anthropic.claude', request, { toolResultStatus: true });
    expect(input.outputConfig?.textFormat?.type).toBe('json_schema');
    const structure = input.outputConfig?.textFormat?.structure as { jsonSchema: { name: string; schema: string } };
    expect(structure.jsonSchema.name).toBe('final_answer');
    expect(JSON.parse(structure.jsonSchema.schema)).toEqual({ type: 'object', properties: { item: { type: 'string' } }, required: ['item'] });
    const { output: _, ...plain } = request;
    expect(toConverseInput('anthropic.claude', plain, { toolResultStatus: true }).outputConfig).toBeUndefined();
  });
});
