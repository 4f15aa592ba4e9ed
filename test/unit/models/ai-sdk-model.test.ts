// The AI SDK adapter against two published provider packages (specification v3 and v2) talking
// to a local fake OpenAI-compatible server, through the engine on memory ports; then its error
// mapping, and hand-written stubs for what no published package does yet (a 'v4' model).
import { createOpenAICompatible as createV3 } from '@ai-sdk/openai-compatible';
import { createOpenAICompatible as createV2 } from 'ai-sdk-openai-compatible-v1';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { defineAgents } from '../../../lib/authoring/define-agents.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { ConfigError, ModelError } from '../../../lib/core/errors.js';
import type { EventOf } from '../../../lib/core/events.js';
import { foldLog } from '../../../lib/core/fold.js';
import type { ModelRequest } from '../../../lib/core/messages.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { aiSdkModel, type AiSdkLanguageModel, type AiSdkModelClient } from '../../../lib/models/ai-sdk-model.js';
import { toAiSdkCallOptions, type AiSdkCallOptions } from '../../../lib/models/ai-sdk-mapping.js';
import { costUsd } from '../../../lib/models/prices.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { agentsWorld, memoryStorage, spawnWorker } from '../../../lib/testing/world.js';
import { InstantClock, loadFixture, startFixtureServer, type FixtureServer, type Reply } from './fixture-server.js';
import { firstTurn, reusedIdsTurn } from './sample-requests.js';

let server: FixtureServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const PROVIDERS = [
  { spec: 'v3', create: (baseURL: string) => createV3({ name: 'fake', baseURL, apiKey: 'sk-fake' }).chatModel('gpt-4.1-mini') },
  { spec: 'v2', create: (baseURL: string) => createV2({ name: 'fake', baseURL, apiKey: 'sk-fake' }).chatModel('gpt-4.1-mini') },
] as const;

const RETRY = { maxAttempts: 3, baseDelayMs: 1000, maxDelayMs: 8000, maxTotalMs: 30_000 };

async function client(spec: (typeof PROVIDERS)[number], replies: Reply[]) {
  server = await startFixtureServer(replies);
  const clock = new InstantClock();
  const model = aiSdkModel(spec.create(`${server.url}/v1`), { clock, random: () => 0.5, retry: RETRY });
  return { server, clock, model };
}

const body = (s: FixtureServer, n: number) => JSON.parse(s.requests[n]?.body ?? 'null') as Record<string, unknown>;

async function rejection(promise: Promise<unknown>): Promise<ModelError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}

const complete = (model: AiSdkModelClient, request: ModelRequest = firstTurn) =>
  model.complete({ ...request, modelId: model.id }, { signal: new AbortController().signal });

describe.each(PROVIDERS)('a published AI SDK provider (specification $spec) through the engine', (spec) => {
  it('runs a whole run with two tool calls: pinned id and price, the wire request, results, usage and cost', async () => {
    server = await startFixtureServer([loadFixture('openai/multi-tool.json'), loadFixture('openai/text-answer.json')]);
    const lm = spec.create(`${server.url}/v1`);
    expect(lm.specificationVersion).toBe(spec.spec);
    const model = aiSdkModel(lm);
    expect(model.id).toBe('aisdk:fake.chat/gpt-4.1-mini');

    const looked: unknown[] = [];
    const getInvoice = defineTool({
      name: 'get_invoice',
      version: '1',
      description: 'Fetch one invoice by id.',
      input: z.object({ invoiceId: z.string(), includeLines: z.boolean().optional() }),
      policy: 'rerun',
      execute: async (args) => {
        looked.push(args);
        return { invoiceId: args.invoiceId, total: args.invoiceId === 'INV-1042' ? 100 : 250 };
      },
    });
    const price = { inputPerMTokUsd: 0.4, outputPerMTokUsd: 1.6 };
    const agent = defineAgent({
      name: 'ar',
      version: '1',
      model: { id: model.id, maxOutputTokens: 700, price },
      system: { version: 's1', text: 'You are a careful accounts-receivable assistant.' },
      tools: [getInvoice],
    });
    const agents = defineAgents({ agents: [agent], models: { [model.id]: () => model } });
    // A world that does not stream: the fixtures are whole JSON answers, and this test reads the
    // non-streamed wire request (streaming through the published providers: ai-sdk-streaming tests).
    const { stream: _stream, ...storage } = memoryStorage();
    const world = agentsWorld(agents, storage);
    const worker = spawnWorker(world);
    const run = { tenant: 't', runId: `r-${spec.spec}` };
    await startRun(worker.deps, { ...run, agent: 'ar', input: 'Summarise the overdue invoices.' });
    const result = await driveRun(world, run, { worker: () => worker });

    expect(result.head.status).toBe('completed');
    const events = (await world.storage.log.read(run, { afterSeq: 0 })).events;
    const started = events[0] as EventOf<'run_started'>;
    expect(started.model).toEqual({ id: 'aisdk:fake.chat/gpt-4.1-mini', maxOutputTokens: 700, price });
    const state = foldLog(events);
    expect(state.outcome?.type).toBe('completed');
    expect(looked).toEqual([{ invoiceId: 'INV-1042' }, { invoiceId: 'INV-1043', includeLines: true }]);
    // Usage as the fixtures report it, charged at the agent's price.
    const usage = { inputTokens: 1402 + 1190, outputTokens: 58 + 21 };
    expect(state.usage).toMatchObject(usage);
    expect(state.usage.costUsd).toBeCloseTo(costUsd({ inputTokens: 1402, outputTokens: 58 }, price) + costUsd({ inputTokens: 1190, outputTokens: 21 }, price), 9);
    const completed = events.at(-1) as EventOf<'run_completed'>;
    expect(JSON.stringify(completed)).toContain('3 invoices are overdue, totalling 4,210.50 EUR.');

    // What the fake server received: the provider's own wire format, built from Logbook's request.
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0]!.url).toBe('/v1/chat/completions');
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-fake');
    const first = body(server, 0);
    expect(first).toMatchObject({
      model: 'gpt-4.1-mini',
      max_tokens: 700,
      messages: [
        { role: 'system', content: 'You are a careful accounts-receivable assistant.' },
        { role: 'user', content: 'Summarise the overdue invoices.' },
      ],
      tool_choice: 'auto',
      tools: [
        {
          type: 'function',
          function: { name: 'get_invoice', description: 'Fetch one invoice by id.', parameters: getInvoice.inputSchema },
        },
      ],
    });
    expect(JSON.stringify(first.tools)).not.toContain('$schema');
    const second = body(server, 1) as { messages: Record<string, unknown>[] };
    expect(second.messages.slice(0, 2)).toEqual(first.messages as unknown[]);
    expect(second.messages[2]).toMatchObject({
      role: 'assistant',
      tool_calls: [
        { id: 'call_8nJkQv1ZcYx3HwR0tLm5Pa2B', type: 'function', function: { name: 'get_invoice', arguments: '{"invoiceId":"INV-1042"}' } },
        {
          id: 'call_Ub7Wd2KsE9fNq4Gy6Xh1Cj3M',
          type: 'function',
          function: { name: 'get_invoice', arguments: '{"invoiceId":"INV-1043","includeLines":true}' },
        },
      ],
    });
    const results = second.messages.slice(3);
    expect(results.map((m) => [m.role, m.tool_call_id])).toEqual([
      ['tool', 'call_8nJkQv1ZcYx3HwR0tLm5Pa2B'],
      ['tool', 'call_Ub7Wd2KsE9fNq4Gy6Xh1Cj3M'],
    ]);
    expect(JSON.parse(String(results[0]!.content))).toEqual({ invoiceId: 'INV-1042', total: 100 });
    expect(JSON.parse(String(results[1]!.content))).toEqual({ invoiceId: 'INV-1043', total: 250 });
  });

  it('retries a 429 after its Retry-After, then answers', async () => {
    const { server, clock, model } = await client(spec, [loadFixture('openai/rate-limited.json'), loadFixture('openai/text-answer.json')]);
    const response = await complete(model);
    expect(response.text).toContain('3 invoices are overdue');
    expect(server.requests).toHaveLength(2);
    expect(clock.sleeps).toEqual([2000]);
  });

  it('reports a 429 that outlasts the retries as model_rate_limited, retryable', async () => {
    const { server, model } = await client(spec, Array(3).fill(loadFixture('openai/rate-limited.json')));
    const error = await rejection(complete(model));
    expect(error).toMatchObject({ code: 'model_rate_limited', retryable: true });
    expect(error.message).toContain('Rate limit reached for gpt-4.1-mini');
    expect(server.requests).toHaveLength(3);
  });

  it('reports 500s that outlast the retries as model_unavailable, retryable, after backoff', async () => {
    const { server, clock, model } = await client(spec, Array(3).fill(loadFixture('openai/server-error.json')));
    const error = await rejection(complete(model));
    expect(error).toMatchObject({ code: 'model_unavailable', retryable: true });
    expect(error.message).toMatch(/^ai-sdk fake\.chat: HTTP 500 \(server_error\): The server had an error/);
    expect(server.requests).toHaveLength(3);
    // Full jitter at 0.5 of 1000 then 2000 ms: the adapter's own backoff, not the provider's.
    expect(clock.sleeps).toEqual([500, 1000]);
  });

  it('does not retry a 400: model_bad_request, not retryable, the request body not in the message', async () => {
    const bad = {
      status: 400,
      headers: { 'content-type': 'application/json' },
      body: { error: { message: "Invalid schema for function 'get_invoice'", type: 'invalid_request_error', code: 'invalid_function_parameters' } },
    };
    const { server, model } = await client(spec, [bad]);
    const error = await rejection(complete(model));
    expect(error).toMatchObject({ code: 'model_bad_request', retryable: false });
    expect(error.message).toBe("ai-sdk fake.chat: HTTP 400 (invalid_function_parameters): Invalid schema for function 'get_invoice'");
    expect(server.requests).toHaveLength(1);
  });

  it('maps 401, 404, a context-length 400 and insufficient_quota to their codes', async () => {
    const cases = [
      ['openai/auth-error.json', 'model_auth'],
      ['openai/model-not-found.json', 'model_not_found'],
      ['openai/context-length.json', 'model_context_length'],
      ['openai/insufficient-quota.json', 'model_quota_exhausted'],
    ] as const;
    for (const [fixture, code] of cases) {
      const { server, model } = await client(spec, [loadFixture(fixture)]);
      const error = await rejection(complete(model));
      expect(error, fixture).toMatchObject({ code, retryable: false });
      expect(server.requests).toHaveLength(1);
      await server.close();
    }
  });
});

describe('an AI SDK model the adapter refuses or checks', () => {
  const stub = (over: Record<string, unknown>): AiSdkLanguageModel =>
    ({ specificationVersion: 'v3', provider: 'stub.chat', modelId: 'm1', doGenerate: () => Promise.resolve({}), ...over }) as AiSdkLanguageModel;

  it('refuses specification v1 (AI SDK 4), a non-object, and objects missing what it calls, with ConfigError', () => {
    expect(() => aiSdkModel(stub({ specificationVersion: 'v1' }))).toThrow(/specification v1 \(AI SDK 4\).*specification v2 or newer/);
    expect(() => aiSdkModel('openai/gpt-4.1' as never)).toThrow(/AI SDK gateway/);
    expect(() => aiSdkModel(stub({ specificationVersion: undefined }))).toThrow(/not an AI SDK language model/);
    expect(() => aiSdkModel(stub({ modelId: '' }))).toThrow(/modelId must be a non-empty string/);
    expect(() => aiSdkModel(stub({ doGenerate: undefined }))).toThrow(/aisdk:stub\.chat\/m1 has no doGenerate/);
    expect(() => aiSdkModel(stub({ doGenerate: undefined }))).toThrow(ConfigError);
  });

  it('refuses to serve a run pinned to another aisdk: id (model_not_found), without calling the model', async () => {
    let calls = 0;
    const model = aiSdkModel(stub({ doGenerate: () => (calls++, Promise.resolve({})) }));
    const error = await rejection(model.complete({ ...firstTurn, modelId: 'aisdk:stub.chat/m2' }, { signal: new AbortController().signal }));
    expect(error).toMatchObject({ code: 'model_not_found', retryable: false });
    expect(error.message).toContain('aisdk:stub.chat/m2 is pinned but this client serves aisdk:stub.chat/m1');
    expect(calls).toBe(0);
  });

  it("calls a future specification ('v4') with the same shape, and maps its answer", async () => {
    const seen: AiSdkCallOptions[] = [];
    const model = aiSdkModel(
      stub({
        specificationVersion: 'v4',
        doGenerate: (options: AiSdkCallOptions) => {
          seen.push(options);
          return Promise.resolve({
            content: [
              { type: 'reasoning', text: 'thinking...' },
              { type: 'text', text: 'Looking it up.' },
              { type: 'tool-call', toolCallId: 'tc_1', toolName: 'get_invoice', input: '{"invoiceId":"INV-9"}' },
              { type: 'tool-call', toolCallId: 'ws_1', toolName: 'web_search', input: '{}', providerExecuted: true },
            ],
            finishReason: { unified: 'tool-calls', raw: 'tool_use' },
            usage: { inputTokens: { total: 30, noCache: 30 }, outputTokens: { total: 12, text: 12 } },
            warnings: [],
          });
        },
      }),
    );
    expect(model.specificationVersion).toBe('v4');
    const response = await complete(model);
    expect(response).toEqual({
      text: 'Looking it up.',
      calls: [{ providerId: 'tc_1', name: 'get_invoice', args: { invoiceId: 'INV-9' } }],
      usage: { inputTokens: 30, outputTokens: 12 },
      stopReason: 'tool_use',
    });
    expect(seen[0]).toMatchObject({ maxOutputTokens: 1024, toolChoice: { type: 'auto' } });
    expect(seen[0]!.abortSignal).toBeInstanceOf(AbortSignal);
  });

  it("fails a call clearly when a future version's answer has another shape (model_invalid_response, the field named)", async () => {
    const model = aiSdkModel(
      stub({
        specificationVersion: 'v4',
        doGenerate: () => Promise.resolve({ output: [{ kind: 'text', value: 'hi' }], usage: { input: 3, output: 1 } }),
      }),
    );
    const error = await rejection(complete(model));
    expect(error).toMatchObject({ code: 'model_invalid_response', retryable: false });
    expect(error.message).toMatch(/^ai-sdk stub\.chat: unexpected doGenerate result: .*content/);
  });

  it('reads a v2 answer (string finish reason, flat usage), keeps bad JSON arguments raw, and refuses one without usage', async () => {
    const answer = (usage: unknown) =>
      Promise.resolve({
        content: [{ type: 'tool-call', toolCallId: 'c0', toolName: 'get_invoice', input: '{"invoiceId": INV' }],
        finishReason: 'stop',
        usage,
        warnings: [],
      });
    const v2 = aiSdkModel(stub({ specificationVersion: 'v2', doGenerate: () => answer({ inputTokens: 9, outputTokens: 4, totalTokens: 13 }) }));
    const response = await complete(v2);
    expect(response.stopReason).toBe('tool_use');
    expect(response.usage).toEqual({ inputTokens: 9, outputTokens: 4 });
    expect(response.calls[0]).toMatchObject({ providerId: 'c0', args: '{"invoiceId": INV' });
    expect(response.calls[0]!.argsError).toMatch(/not valid JSON/);

    const noUsage = aiSdkModel(stub({ specificationVersion: 'v2', doGenerate: () => answer({ inputTokens: undefined, outputTokens: 4 }) }));
    expect(await rejection(complete(noUsage))).toMatchObject({ code: 'model_invalid_response', message: expect.stringContaining('no token usage') });
  });

  it('maps thrown errors: a retryable APICallError look-alike is retried, named AI SDK errors get their codes', async () => {
    const apiError = (statusCode: number | undefined, isRetryable: boolean) =>
      Object.assign(new Error(statusCode ? 'Overloaded' : 'Cannot connect to API: ECONNREFUSED'), { name: 'AI_APICallError', statusCode, isRetryable, url: 'http://secret-host/x', requestBodyValues: { prompt: 'secret' } });
    let n = 0;
    const clock = new InstantClock();
    const flaky = aiSdkModel(stub({ doGenerate: () => (n++ < 2 ? Promise.reject(apiError(n === 1 ? 529 : undefined, true)) : Promise.resolve({ content: [{ type: 'text', text: 'ok' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } } })) }), { clock, random: () => 0, retry: RETRY });
    expect((await complete(flaky)).text).toBe('ok');
    expect(n).toBe(3);

    const down = aiSdkModel(stub({ doGenerate: () => Promise.reject(apiError(undefined, true)) }), { clock, random: () => 0, retry: RETRY });
    const error = await rejection(complete(down));
    expect(error).toMatchObject({ code: 'model_unavailable', retryable: true });
    expect(error.message).not.toMatch(/secret/);

    const named = async (name: string) => {
      const m = aiSdkModel(stub({ doGenerate: () => Promise.reject(Object.assign(new Error('x'), { name })) }), { clock, retry: RETRY });
      return (await rejection(complete(m))).code;
    };
    expect(await named('AI_LoadAPIKeyError')).toBe('model_auth');
    expect(await named('AI_UnsupportedFunctionalityError')).toBe('model_bad_request');
    expect(await named('AI_TypeValidationError')).toBe('model_invalid_response');
    // Unknown: not retried by the adapter; retryable, so the engine's bounded retries decide.
    let tries = 0;
    const odd = aiSdkModel(stub({ doGenerate: () => (tries++, Promise.reject(new TypeError('boom'))) }), { clock, retry: RETRY });
    expect(await rejection(complete(odd))).toMatchObject({ code: 'model_unavailable', retryable: true, message: 'ai-sdk stub.chat: TypeError: boom' });
    expect(tries).toBe(1);
  });

  it('rejects with the abort reason when the caller aborts', async () => {
    const controller = new AbortController();
    const reason = new Error('step deadline');
    const model = aiSdkModel(
      stub({
        doGenerate: (o: AiSdkCallOptions) =>
          new Promise((_, reject) => o.abortSignal?.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' })))),
      }),
    );
    const pending = model.complete({ ...firstTurn, modelId: model.id }, { signal: controller.signal });
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });
});

describe('toAiSdkCallOptions', () => {
  const deepFreeze = <T>(value: T): T => {
    if (typeof value === 'object' && value !== null) {
      for (const v of Object.values(value)) deepFreeze(v);
      Object.freeze(value);
    }
    return value;
  };

  it('maps a conversation with reused provider ids: unique wire ids, one tool message per turn, error results flagged', () => {
    const options = toAiSdkCallOptions(deepFreeze(structuredClone(reusedIdsTurn)), undefined, 'openai.chat');
    expect(options.prompt).toEqual([
      { role: 'system', content: 'You are a careful accounts-receivable assistant.' },
      { role: 'user', content: [{ type: 'text', text: 'Summarise the overdue invoices.' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking up the first invoice.' },
          { type: 'tool-call', toolCallId: 'call_0', toolName: 'get_invoice', input: { invoiceId: 'INV-1042' } },
        ],
      },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_0', toolName: 'get_invoice', output: { type: 'text', value: '{"total":100}' } }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'call_0_6-0', toolName: 'get_invoice', input: { invoiceId: 'INV-1043' } },
          { type: 'tool-call', toolCallId: 'call_1', toolName: 'get_invoice', input: { invoiceId: 'INV-1044' } },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'call_0_6-0', toolName: 'get_invoice', output: { type: 'error-text', value: 'invoice INV-1043 not found' } },
          { type: 'tool-result', toolCallId: 'call_1', toolName: 'get_invoice', output: { type: 'text', value: '{"total":250}' } },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'Also mention which lookups failed.' }] },
    ]);
    expect(options.maxOutputTokens).toBe(1024);
    expect(options.tools).toEqual([
      {
        type: 'function',
        name: 'get_invoice',
        description: 'Fetch one invoice by id.',
        inputSchema: {
          type: 'object',
          properties: { invoiceId: { type: 'string' }, includeLines: { type: 'boolean' } },
          required: ['invoiceId'],
          additionalProperties: false,
        },
      },
    ]);
  });

  it('sends no tools and no tool choice for an agent without tools', () => {
    const options = toAiSdkCallOptions({ ...firstTurn, tools: [] }, undefined, 'openai.chat');
    expect(options).not.toHaveProperty('tools');
    expect(options).not.toHaveProperty('toolChoice');
  });
});
