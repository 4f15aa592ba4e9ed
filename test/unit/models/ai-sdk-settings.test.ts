// An agent's pinned model settings through the AI SDK adapter: the exact call options a fake AI SDK
// model receives (per provider family), what a published provider package puts on the wire from
// them, and the settings refused at definition time for a family that has no switch for them.
import { createOpenAICompatible as createV3 } from '@ai-sdk/openai-compatible';
import { createOpenAICompatible as createV2 } from 'ai-sdk-openai-compatible-v1';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { defineAgents } from '../../../lib/authoring/define-agents.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { ConfigError } from '../../../lib/core/errors.js';
import type { ModelSettings } from '../../../lib/core/model-settings.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { toAiSdkCallOptions, type AiSdkCallOptions } from '../../../lib/models/ai-sdk-mapping.js';
import { aiSdkModel, type AiSdkLanguageModel } from '../../../lib/models/ai-sdk-model.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { agentsWorld, spawnWorker } from '../../../lib/testing/world.js';
import { loadFixture, startFixtureServer, type FixtureServer } from './fixture-server.js';
import { firstTurn } from './sample-requests.js';

let server: FixtureServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const ANSWER = { content: [{ type: 'text', text: 'done' }], finishReason: 'stop', usage: { inputTokens: 10, outputTokens: 2 } };

/** A hand-written AI SDK model (specification v3) that records the call options it is given. */
function recordingModel(provider: string, modelId = 'm1') {
  const calls: AiSdkCallOptions[] = [];
  const model: AiSdkLanguageModel = {
    specificationVersion: 'v3',
    provider,
    modelId,
    doGenerate: (options) => (calls.push(options), Promise.resolve(ANSWER)),
  };
  return { model, calls };
}

/** The call options besides the conversation (prompt, tools, signal): what the settings decide. */
function settingsPart(options: AiSdkCallOptions | undefined): Record<string, unknown> {
  const { prompt: _prompt, tools: _tools, abortSignal: _signal, ...rest } = options ?? ({} as AiSdkCallOptions);
  return rest;
}

const lookup = defineTool({
  name: 'lookup',
  version: '1',
  description: 'Look something up.',
  input: z.object({ q: z.string() }),
  policy: 'rerun',
  execute: async () => 'found',
});

function agentOn(modelId: string, settings: ModelSettings, tools = [lookup]) {
  return defineAgent({
    name: 'a',
    version: '1',
    model: { id: modelId, maxOutputTokens: 4000, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 1 }, settings },
    system: { version: 's', text: 'Be brief.' },
    tools,
  });
}

describe('pinned settings reach an AI SDK model as call options', () => {
  it('through the engine: the run pins them and every doGenerate call gets them', async () => {
    const { model, calls } = recordingModel('fake.chat', 'gpt-4.1-mini');
    const client = aiSdkModel(model);
    const settings: ModelSettings = {
      temperature: 0.2,
      topP: 0.9,
      stopSequences: ['END'],
      toolChoice: { tool: 'lookup' },
      parallelToolCalls: false,
      reasoning: { effort: 'low' },
      providerOptions: { user: 'tenant-7' },
    };
    const agents = defineAgents({ agents: [agentOn(client.id, settings)], models: { [client.id]: () => client } });
    const world = agentsWorld(agents);
    const worker = spawnWorker(world);
    const run = { tenant: 't', runId: 'r-settings' };
    await startRun(worker.deps, { ...run, agent: 'a', input: 'hi' });
    const result = await driveRun(world, run, { worker: () => worker });
    expect(result.head.status).toBe('completed');
    expect(calls).toHaveLength(1);
    expect(settingsPart(calls[0])).toEqual({
      maxOutputTokens: 4000,
      temperature: 0.2,
      topP: 0.9,
      stopSequences: ['END'],
      toolChoice: { type: 'tool', toolName: 'lookup' },
      // `fake.chat` reads its options under `fake`; an OpenAI-compatible provider sends unknown keys as given.
      providerOptions: { fake: { user: 'tenant-7', parallel_tool_calls: false, reasoningEffort: 'low' } },
    });
  });

  it('a streamed call (doStream, with onText) gets the same settings as doGenerate would', async () => {
    const calls: AiSdkCallOptions[] = [];
    const parts = [
      { type: 'text-delta', id: 't', delta: 'do' },
      { type: 'text-delta', id: 't', delta: 'ne' },
      { type: 'finish', finishReason: 'stop', usage: { inputTokens: 10, outputTokens: 2 } },
    ];
    const model: AiSdkLanguageModel = {
      specificationVersion: 'v3',
      provider: 'openai.chat',
      modelId: 'gpt-5-mini',
      doGenerate: () => Promise.reject(new Error('the streamed call must not fall back to doGenerate')),
      doStream: (options) => (calls.push(options), Promise.resolve({ stream: ReadableStream.from(parts) })),
    };
    const client = aiSdkModel(model);
    const request = { ...firstTurn, settings: { toolChoice: 'required' as const, parallelToolCalls: true, reasoning: { effort: 'high' as const } } };
    const deltas: string[] = [];
    const response = await client.complete(request, { signal: new AbortController().signal, onText: (d) => deltas.push(d) });
    expect(response.text).toBe('done');
    expect(deltas.join('')).toBe('done');
    expect(settingsPart(calls[0])).toMatchObject({ toolChoice: { type: 'required' }, providerOptions: { openai: { parallelToolCalls: true, reasoningEffort: 'high' } } });
  });

  it("an agent's output schema goes as the spec's responseFormat", async () => {
    const { model, calls } = recordingModel('fake.chat');
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const options = toAiSdkCallOptions({ ...firstTurn, output: { name: 'final_answer', schema } }, undefined, model.provider);
    expect(options.responseFormat).toEqual({ type: 'json', schema, name: 'final_answer' });
    await model.doGenerate(options);
    expect(calls[0]?.responseFormat?.name).toBe('final_answer');
  });

  const cases: { provider: string; modelId?: string; settings: ModelSettings; expected: Record<string, unknown> }[] = [
    {
      provider: 'openai.chat',
      modelId: 'gpt-5-mini',
      settings: { toolChoice: 'required', parallelToolCalls: true, reasoning: { effort: 'high' } },
      expected: { toolChoice: { type: 'required' }, providerOptions: { openai: { parallelToolCalls: true, reasoningEffort: 'high' } } },
    },
    {
      provider: 'anthropic.messages',
      settings: { toolChoice: 'none', parallelToolCalls: false, reasoning: { budgetTokens: 2048 }, providerOptions: { sendReasoning: false } },
      expected: {
        toolChoice: { type: 'none' },
        providerOptions: { anthropic: { sendReasoning: false, disableParallelToolUse: true, thinking: { type: 'enabled', budgetTokens: 2048 } } },
      },
    },
    {
      provider: 'google.generative-ai',
      settings: { temperature: 1.5, toolChoice: 'auto', reasoning: { budgetTokens: 1024 } },
      expected: { temperature: 1.5, toolChoice: { type: 'auto' }, providerOptions: { google: { thinkingConfig: { thinkingBudget: 1024 } } } },
    },
    {
      provider: 'mistral.chat',
      settings: { stopSequences: ['\n\n'], parallelToolCalls: false },
      expected: { stopSequences: ['\n\n'], toolChoice: { type: 'auto' }, providerOptions: { mistral: { parallelToolCalls: false } } },
    },
  ];

  it.each(cases)('$provider: the exact call options', async ({ provider, modelId, settings, expected }) => {
    const { model, calls } = recordingModel(provider, modelId);
    const client = aiSdkModel(model);
    agentOn(client.id, settings); // accepted at definition time
    await client.complete({ ...firstTurn, modelId: client.id, settings }, { signal: new AbortController().signal });
    expect(settingsPart(calls[0])).toEqual({ maxOutputTokens: 1024, ...expected });
  });

  it('no settings: the call options are what they were (auto tool choice with tools, nothing else)', async () => {
    const { model, calls } = recordingModel('openai.chat');
    const client = aiSdkModel(model);
    await client.complete({ ...firstTurn, modelId: client.id }, { signal: new AbortController().signal });
    await client.complete({ ...firstTurn, tools: [], modelId: client.id, settings: { toolChoice: 'required' } }, { signal: new AbortController().signal });
    expect(settingsPart(calls[0])).toEqual({ maxOutputTokens: 1024, toolChoice: { type: 'auto' } });
    // A tool choice without tools is not sent: there is nothing to choose from.
    expect(settingsPart(calls[1])).toEqual({ maxOutputTokens: 1024 });
  });
});

describe.each([
  {
    spec: 'v3',
    create: (baseURL: string, supportsStructuredOutputs = false) =>
      createV3({ name: 'fake', baseURL, apiKey: 'sk-fake', supportsStructuredOutputs }).chatModel('gpt-4.1-mini'),
  },
  {
    spec: 'v2',
    create: (baseURL: string, supportsStructuredOutputs = false) =>
      createV2({ name: 'fake', baseURL, apiKey: 'sk-fake', supportsStructuredOutputs }).chatModel('gpt-4.1-mini'),
  },
])('a published OpenAI-compatible provider (specification $spec) puts the settings on the wire', ({ create }) => {
  it('temperature, top_p, stop, a named tool choice, parallel_tool_calls, reasoning_effort and a passthrough field', async () => {
    server = await startFixtureServer([loadFixture('openai/text-answer.json')]);
    const client = aiSdkModel(create(`${server.url}/v1`));
    const settings: ModelSettings = {
      temperature: 0.3,
      topP: 0.5,
      stopSequences: ['STOP'],
      toolChoice: { tool: 'get_invoice' },
      parallelToolCalls: false,
      reasoning: { effort: 'medium' },
      providerOptions: { user: 'tenant-7', seed_hint: 42 },
    };
    // Accepted at definition time (by an agent whose tool is named `lookup`).
    agentOn(client.id, { ...settings, toolChoice: { tool: 'lookup' } });
    await client.complete({ ...firstTurn, modelId: client.id, settings }, { signal: new AbortController().signal });
    const body = JSON.parse(server.requests[0]?.body ?? 'null') as Record<string, unknown>;
    expect(body).toMatchObject({
      temperature: 0.3,
      top_p: 0.5,
      stop: ['STOP'],
      tool_choice: { type: 'function', function: { name: 'get_invoice' } },
      parallel_tool_calls: false,
      reasoning_effort: 'medium',
      user: 'tenant-7',
      seed_hint: 42,
    });
  });

  it('an output schema becomes response_format json_schema on the wire (a provider made with supportsStructuredOutputs)', async () => {
    server = await startFixtureServer([loadFixture('openai/text-answer.json')]);
    const client = aiSdkModel(create(`${server.url}/v1`, true));
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    await client.complete({ ...firstTurn, modelId: client.id, output: { name: 'final_answer', schema } }, { signal: new AbortController().signal });
    const body = JSON.parse(server.requests[0]?.body ?? 'null') as { response_format?: { type?: string; json_schema?: { schema?: unknown } } };
    expect(body.response_format?.type).toBe('json_schema');
    expect(body.response_format?.json_schema?.schema).toMatchObject(schema);
  });
});

describe('settings an AI SDK provider family has no switch for are refused when the agent is defined', () => {
  const refused: [string, ModelSettings, RegExp][] = [
    [
      'aisdk:google.generative-ai/gemini-2.5-flash',
      { parallelToolCalls: false },
      /parallelToolCalls: the AI SDK google provider has no parallel tool calls switch/,
    ],
    ['aisdk:anthropic.messages/claude-sonnet-4-5', { reasoning: { effort: 'low' } }, /reasoning: anthropic models take a thinking budget/],
    ['aisdk:openai.chat/gpt-5', { reasoning: { budgetTokens: 2048 } }, /reasoning: openai models take an effort/],
    ['aisdk:openai.responses/o3', { temperature: 0.5 }, /temperature: o3 takes no temperature/],
    ['aisdk:mistral.chat/mistral-large-latest', { reasoning: { effort: 'low' } }, /reasoning: the AI SDK mistral provider takes no reasoning setting/],
    [
      'aisdk:my-gateway.chat/llama',
      { providerOptions: { parallel_tool_calls: true } },
      /providerOptions\.parallel_tool_calls: Logbook sets this option itself/,
    ],
    [
      'aisdk:anthropic.messages/claude-sonnet-4-5',
      { providerOptions: { thinking: { type: 'enabled' } } },
      /providerOptions\.thinking: Logbook sets this option itself/,
    ],
  ];
  it.each(refused)('%s %j', (modelId, settings, message) => {
    expect(() => agentOn(modelId, settings)).toThrow(ConfigError);
    expect(() => agentOn(modelId, settings)).toThrow(message);
  });

  it('accepts what each family maps', () => {
    expect(() => agentOn('aisdk:openai.chat/gpt-5', { temperature: 0.1, parallelToolCalls: false, reasoning: { effort: 'minimal' } })).not.toThrow();
    expect(() => agentOn('aisdk:anthropic.messages/claude-sonnet-4-5', { parallelToolCalls: true, reasoning: { budgetTokens: 1024 } })).not.toThrow();
    expect(() => agentOn('aisdk:google.generative-ai/gemini-2.5-flash', { topP: 0.8, reasoning: { budgetTokens: 1024 } })).not.toThrow();
    expect(() =>
      agentOn('aisdk:my-gateway.chat/llama', { parallelToolCalls: true, reasoning: { effort: 'high' }, providerOptions: { user: 'u' } }),
    ).not.toThrow();
  });
});
