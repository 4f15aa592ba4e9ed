import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { ModelError } from '../../../lib/core/errors.js';
import type { ModelRequest } from '../../../lib/core/messages.js';
import { BedrockConverseClient } from '../../../lib/models/bedrock-converse.js';
import { costUsd, defaultPrices } from '../../../lib/models/prices.js';
import {
  InstantClock,
  loadFixture,
  startFixtureServer,
  withHeaders,
  type FixtureServer,
  type Reply,
} from './fixture-server.js';
import { firstTurn, reusedIdsTurn } from './sample-requests.js';

const MODEL = 'anthropic.claude-3-5-haiku-20241022-v1:0';
let server: FixtureServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup(replies: Reply[], options: { modelId?: string; maxAttempts?: number } = {}) {
  server = await startFixtureServer(replies, 'h2c');
  const clock = new InstantClock();
  const sdk = new BedrockRuntimeClient({
    endpoint: server.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIDLOGBOOKTEST', secretAccessKey: 'logbook-test-secret' },
    maxAttempts: 1,
  });
  const client = new BedrockConverseClient({
    client: sdk,
    modelId: options.modelId ?? MODEL,
    clock,
    random: () => 0.5,
    retry: { maxAttempts: options.maxAttempts ?? 4, baseDelayMs: 1000, maxDelayMs: 8000, maxTotalMs: 30_000 },
  });
  return { server, clock, client };
}

const run = (client: BedrockConverseClient, request: ModelRequest = firstTurn, signal = new AbortController().signal) =>
  client.complete(request, { signal });

async function rejection(promise: Promise<unknown>): Promise<ModelError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}

function body(s: FixtureServer, n = 0): Record<string, unknown> {
  return JSON.parse(s.requests[n]?.body ?? 'null') as Record<string, unknown>;
}

describe('BedrockConverseClient', () => {
  it('sends a signed Converse request and maps a text answer, usage and cost', async () => {
    const { server, client } = await setup([loadFixture('bedrock/text-answer.json')]);
    const response = await run(client);

    const req = server.requests[0]!;
    expect(req.method).toBe('POST');
    expect(decodeURIComponent(req.url)).toBe(`/model/${MODEL}/converse`);
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDLOGBOOKTEST\/\d{8}\/us-east-1\/bedrock\/aws4_request/);
    expect(body(server)).toEqual({
      system: [{ text: 'You are a careful accounts-receivable assistant.' }],
      messages: [{ role: 'user', content: [{ text: 'Summarise the overdue invoices.' }] }],
      inferenceConfig: { maxTokens: 1024 },
      toolConfig: {
        tools: [
          {
            toolSpec: {
              name: 'get_invoice',
              description: 'Fetch one invoice by id.',
              inputSchema: {
                json: {
                  type: 'object',
                  properties: { invoiceId: { type: 'string' }, includeLines: { type: 'boolean' } },
                  required: ['invoiceId'],
                  additionalProperties: false,
                },
              },
            },
          },
        ],
      },
    });

    expect(response).toEqual({
      text: 'The report is ready: 3 invoices are overdue, totalling 4,210.50 EUR.',
      calls: [],
      usage: { inputTokens: 1287, outputTokens: 24 },
      stopReason: 'end_turn',
    });
    // 1287 * 0.8 + 24 * 4 per million tokens
    expect(costUsd(response.usage, defaultPrices.require(`bedrock:${MODEL}`))).toBeCloseTo(0.0011256, 12);
  });

  it('carries the pinned model settings on the wire: inferenceConfig, toolChoice and additionalModelRequestFields', async () => {
    const { server, client } = await setup([loadFixture('bedrock/text-answer.json'), loadFixture('bedrock/text-answer.json'), loadFixture('bedrock/text-answer.json')]);
    await run(client, {
      ...firstTurn,
      settings: { temperature: 0.2, topP: 0.9, stopSequences: ['END'], toolChoice: { tool: 'get_invoice' }, providerOptions: { top_k: 40 } },
    });
    const sent = body(server);
    expect(sent.inferenceConfig).toEqual({ maxTokens: 1024, temperature: 0.2, topP: 0.9, stopSequences: ['END'] });
    expect((sent.toolConfig as { toolChoice: unknown }).toolChoice).toEqual({ tool: { name: 'get_invoice' } });
    expect(sent.additionalModelRequestFields).toEqual({ top_k: 40 });

    await run(client, { ...firstTurn, settings: { toolChoice: 'required' } });
    expect((body(server, 1).toolConfig as { toolChoice: unknown }).toolChoice).toEqual({ any: {} });
    expect(body(server, 1).additionalModelRequestFields).toBeUndefined();

    // A thinking budget (Claude 3.7 / 4, an agent without tools) goes as Anthropic's `thinking` field.
    await run(client, { ...firstTurn, tools: [], settings: { reasoning: { budgetTokens: 2048 } } });
    expect(body(server, 2).additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 2048 } });
    expect(body(server, 2).inferenceConfig).toEqual({ maxTokens: 1024 });
  });

  it('maps a multi-tool answer and sends its provider ids back with the results', async () => {
    const { server, client } = await setup([loadFixture('bedrock/multi-tool.json'), loadFixture('bedrock/text-answer.json')]);
    const response = await run(client);
    expect(response.stopReason).toBe('tool_use');
    expect(response.text).toBe("I'll look up both invoices before drafting the reminder.");
    expect(response.calls).toEqual([
      { providerId: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', name: 'get_invoice', args: { invoiceId: 'INV-1042' } },
      {
        providerId: 'tooluse_Qz3N0bHfS8y2vWm1xK4pLg',
        name: 'get_invoice',
        args: { invoiceId: 'INV-1043', includeLines: true },
      },
    ]);
    expect(response.usage).toEqual({ inputTokens: 2034, outputTokens: 131 });

    // The engine logs the calls as 2-0 and 2-1 and feeds the results back.
    const [a, b] = response.calls;
    const followUp: ModelRequest = {
      ...firstTurn,
      messages: [
        ...firstTurn.messages,
        {
          role: 'assistant',
          text: response.text,
          calls: [
            { callId: '2-0', providerId: a!.providerId, name: a!.name, args: a!.args },
            { callId: '2-1', providerId: b!.providerId, name: b!.name, args: b!.args },
          ],
        },
        { role: 'tool', callId: '2-0', providerId: a!.providerId, name: 'get_invoice', isError: false, content: '{"total":100}' },
        { role: 'tool', callId: '2-1', providerId: b!.providerId, name: 'get_invoice', isError: true, content: 'timeout' },
      ],
    };
    await run(client, followUp);
    expect(body(server, 1).messages).toEqual([
      { role: 'user', content: [{ text: 'Summarise the overdue invoices.' }] },
      {
        role: 'assistant',
        content: [
          { text: "I'll look up both invoices before drafting the reminder." },
          { toolUse: { toolUseId: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', name: 'get_invoice', input: { invoiceId: 'INV-1042' } } },
          {
            toolUse: {
              toolUseId: 'tooluse_Qz3N0bHfS8y2vWm1xK4pLg',
              name: 'get_invoice',
              input: { invoiceId: 'INV-1043', includeLines: true },
            },
          },
        ],
      },
      {
        role: 'user',
        content: [
          { toolResult: { toolUseId: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', content: [{ text: '{"total":100}' }] } },
          { toolResult: { toolUseId: 'tooluse_Qz3N0bHfS8y2vWm1xK4pLg', content: [{ text: 'timeout' }], status: 'error' } },
        ],
      },
    ]);
  });

  it('makes reused provider ids unique on the wire, results paired, roles alternating', async () => {
    const { server, client } = await setup([loadFixture('bedrock/text-answer.json')]);
    await run(client, reusedIdsTurn);
    expect(body(server).messages).toEqual([
      { role: 'user', content: [{ text: 'Summarise the overdue invoices.' }] },
      {
        role: 'assistant',
        content: [
          { text: 'Looking up the first invoice.' },
          { toolUse: { toolUseId: 'call_0', name: 'get_invoice', input: { invoiceId: 'INV-1042' } } },
        ],
      },
      { role: 'user', content: [{ toolResult: { toolUseId: 'call_0', content: [{ text: '{"total":100}' }] } }] },
      {
        role: 'assistant',
        content: [
          { toolUse: { toolUseId: 'call_0_6-0', name: 'get_invoice', input: { invoiceId: 'INV-1043' } } },
          { toolUse: { toolUseId: 'call_1', name: 'get_invoice', input: { invoiceId: 'INV-1044' } } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            toolResult: { toolUseId: 'call_0_6-0', content: [{ text: 'invoice INV-1043 not found' }], status: 'error' },
          },
          { toolResult: { toolUseId: 'call_1', content: [{ text: '{"total":250}' }] } },
          { text: 'Also mention which lookups failed.' },
        ],
      },
    ]);
  });

  it('states errors in the text for models without toolResult.status', async () => {
    const { server, client } = await setup([loadFixture('bedrock/text-answer.json')], {
      modelId: 'meta.llama3-1-70b-instruct-v1:0',
    });
    await run(client, reusedIdsTurn);
    expect(decodeURIComponent(server.requests[0]!.url)).toBe('/model/meta.llama3-1-70b-instruct-v1:0/converse');
    const messages = body(server).messages as { content: unknown[] }[];
    expect(messages[4]!.content[0]).toEqual({
      toolResult: { toolUseId: 'call_0_6-0', content: [{ text: 'Error: invoice INV-1043 not found' }] },
    });
  });

  it('maps max_tokens', async () => {
    const { client } = await setup([loadFixture('bedrock/max-tokens.json')]);
    const response = await run(client);
    expect(response.stopReason).toBe('max_tokens');
    expect(response.usage).toEqual({ inputTokens: 900, outputTokens: 64 });
  });

  it('retries throttling with full-jitter backoff, then succeeds', async () => {
    const throttled = loadFixture('bedrock/throttling.json');
    const { server, clock, client } = await setup([throttled, throttled, loadFixture('bedrock/text-answer.json')]);
    const response = await run(client);
    expect(response.stopReason).toBe('end_turn');
    expect(server.requests).toHaveLength(3);
    // random() = 0.5 of windows 1000 and 2000 ms.
    expect(clock.sleeps).toEqual([500, 1000]);
  });

  it('honours Retry-After on a throttled answer', async () => {
    const throttled = withHeaders(loadFixture('bedrock/throttling.json'), { 'retry-after': '3' });
    const { clock, client } = await setup([throttled, loadFixture('bedrock/text-answer.json')]);
    await run(client);
    expect(clock.sleeps).toEqual([3000]);
  });

  it('gives up at once when Retry-After passes the retry budget', async () => {
    const throttled = withHeaders(loadFixture('bedrock/throttling.json'), { 'retry-after': '120' });
    const { server, clock, client } = await setup([throttled, loadFixture('bedrock/text-answer.json')]);
    const error = await rejection(run(client));
    expect(error.code).toBe('model_rate_limited');
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('ThrottlingException');
    expect(server.requests).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
  });

  it('retries a 500 and succeeds', async () => {
    const { server, client } = await setup([loadFixture('bedrock/internal-server.json'), loadFixture('bedrock/text-answer.json')]);
    expect((await run(client)).text).toContain('3 invoices');
    expect(server.requests).toHaveLength(2);
  });

  it('reports model_unavailable (retryable) when 500s outlast the attempts', async () => {
    const failing = loadFixture('bedrock/internal-server.json');
    const { server, client } = await setup([failing, failing, failing], { maxAttempts: 3 });
    const error = await rejection(run(client));
    expect(error.code).toBe('model_unavailable');
    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/InternalServerException.*3 attempts/);
    expect(server.requests).toHaveLength(3);
  });

  it.each([
    ['bedrock/context-length.json', 'model_context_length'],
    ['bedrock/access-denied.json', 'model_auth'],
    ['bedrock/invalid-model.json', 'model_not_found'],
    ['bedrock/validation.json', 'model_bad_request'],
  ])('maps %s to %s without retrying', async (fixture, code) => {
    const { server, client } = await setup([loadFixture(fixture), loadFixture('bedrock/text-answer.json')]);
    const error = await rejection(run(client));
    expect(error.code).toBe(code);
    expect(error.retryable).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it('rejects with the abort reason when the caller aborts mid-request', async () => {
    const { server, client } = await setup(['hang']);
    const controller = new AbortController();
    const pending = run(client, firstTurn, controller.signal);
    await server.received(1);
    const reason = new Error('worker is out of time');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it('retries a refused connection, then reports model_unavailable', async () => {
    const { server, clock, client } = await setup([], { maxAttempts: 2 });
    await server.close();
    const error = await rejection(run(client));
    expect(error.code).toBe('model_unavailable');
    expect(clock.sleeps).toHaveLength(1);
  });
});
