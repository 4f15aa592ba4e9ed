import { afterEach, describe, expect, it } from 'vitest';
import { ModelError } from '../../../lib/core/errors.js';
import type { ModelRequest } from '../../../lib/core/messages.js';
import { OpenAiCompatibleClient, type OpenAiCompatibleOptions } from '../../../lib/models/openai-compatible.js';
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

let server: FixtureServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup(replies: Reply[], options: Partial<OpenAiCompatibleOptions> & { path?: string } = {}) {
  server = await startFixtureServer(replies);
  const clock = new InstantClock();
  const { path = '', ...rest } = options;
  const client = new OpenAiCompatibleClient({
    baseUrl: `${server.url}${path}`,
    model: 'gpt-4.1-mini',
    apiKey: 'sk-logbook-test',
    clock,
    random: () => 0.5,
    retry: { maxAttempts: 4, baseDelayMs: 1000, maxDelayMs: 8000, maxTotalMs: 30_000 },
    ...rest,
  });
  return { server, clock, client };
}

const run = (client: OpenAiCompatibleClient, request: ModelRequest = firstTurn, signal = new AbortController().signal) =>
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

const text = () => loadFixture('openai/text-answer.json');

describe('OpenAiCompatibleClient', () => {
  it('carries the pinned model settings on the wire: sampling, tool choice, parallel calls, reasoning effort, provider options', async () => {
    const { server, client } = await setup([text(), text(), text()]);
    await run(client, {
      ...firstTurn,
      settings: {
        temperature: 0.3,
        topP: 0.8,
        stopSequences: ['END', 'STOP'],
        toolChoice: { tool: 'get_invoice' },
        parallelToolCalls: false,
        reasoning: { effort: 'low' },
        providerOptions: { seed: 7, user: 'tenant-1' },
      },
    });
    expect(body(server)).toMatchObject({
      temperature: 0.3,
      top_p: 0.8,
      stop: ['END', 'STOP'],
      tool_choice: { type: 'function', function: { name: 'get_invoice' } },
      parallel_tool_calls: false,
      reasoning_effort: 'low',
      seed: 7,
      user: 'tenant-1',
      model: 'gpt-4.1-mini',
    });
    await run(client, { ...firstTurn, settings: { toolChoice: 'none', parallelToolCalls: true } });
    expect(body(server, 1)).toMatchObject({ tool_choice: 'none', parallel_tool_calls: true });
    // Without tools the API refuses tool_choice and parallel_tool_calls: neither is sent.
    await run(client, { ...firstTurn, tools: [], settings: { toolChoice: 'auto', temperature: 0 } });
    expect(body(server, 2)).not.toHaveProperty('tool_choice');
    expect(body(server, 2)).not.toHaveProperty('parallel_tool_calls');
    expect(body(server, 2)).toMatchObject({ temperature: 0 });
  });

  it('posts Chat Completions with auth, tools and max_tokens, and maps a text answer with cost', async () => {
    const { server, client } = await setup([text()]);
    const response = await run(client);

    const req = server.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/v1/chat/completions');
    expect(req.headers.authorization).toBe('Bearer sk-logbook-test');
    expect(req.headers['content-type']).toBe('application/json');
    expect(body(server)).toEqual({
      model: 'gpt-4.1-mini',
      messages: [
        { role: 'system', content: 'You are a careful accounts-receivable assistant.' },
        { role: 'user', content: 'Summarise the overdue invoices.' },
      ],
      max_tokens: 1024,
      stream: false,
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_invoice',
            description: 'Fetch one invoice by id.',
            parameters: {
              type: 'object',
              properties: { invoiceId: { type: 'string' }, includeLines: { type: 'boolean' } },
              required: ['invoiceId'],
              additionalProperties: false,
            },
          },
        },
      ],
    });

    expect(response).toEqual({
      text: 'The report is ready: 3 invoices are overdue, totalling 4,210.50 EUR.',
      calls: [],
      usage: { inputTokens: 1190, outputTokens: 21 },
      stopReason: 'end_turn',
    });
    // 1190 * 0.40 + 21 * 1.60 per million tokens
    expect(costUsd(response.usage, defaultPrices.require('openai:gpt-4.1-mini'))).toBeCloseTo(0.0005096, 12);
  });

  it.each([
    ['/v1', '/v1/chat/completions'],
    ['/v1/', '/v1/chat/completions'],
    ['/api/v1', '/api/v1/chat/completions'],
    ['/v1/chat/completions', '/v1/chat/completions'],
    ['/openai/deployments/ledger-gpt4?api-version=2024-10-21', '/openai/deployments/ledger-gpt4/chat/completions?api-version=2024-10-21'],
  ])('base URL path %s posts to %s', async (path, expected) => {
    const { server, client } = await setup([text()], { path });
    await run(client);
    expect(server.requests[0]!.url).toBe(expected);
  });

  it('uses the api-key header for Azure hosts and can send max_completion_tokens', async () => {
    server = await startFixtureServer([text()]);
    const local = server.url;
    const client = new OpenAiCompatibleClient({
      baseUrl: 'https://ledger.openai.azure.com/openai/deployments/ledger-gpt4?api-version=2024-10-21',
      model: 'gpt-4.1-mini',
      apiKey: 'azure-key',
      maxTokensParam: 'max_completion_tokens',
      // Route the Azure URL to the local server, keeping path and query.
      fetch: (url, init) => {
        const u = new URL(String(url));
        return fetch(`${local}${u.pathname}${u.search}`, init);
      },
    });
    await run(client);
    const req = server.requests[0]!;
    expect(req.url).toBe('/openai/deployments/ledger-gpt4/chat/completions?api-version=2024-10-21');
    expect(req.headers['api-key']).toBe('azure-key');
    expect(req.headers.authorization).toBeUndefined();
    expect(body(server).max_completion_tokens).toBe(1024);
    expect(body(server)).not.toHaveProperty('max_tokens');
  });

  it('sends no auth header without a key', async () => {
    const { server, client } = await setup([text()], { apiKey: undefined });
    await run(client);
    expect(server.requests[0]!.headers.authorization).toBeUndefined();
  });

  it('maps a multi-tool answer and sends its ids back with the results', async () => {
    const { server, client } = await setup([loadFixture('openai/multi-tool.json'), text()]);
    const response = await run(client);
    expect(response).toEqual({
      text: '',
      calls: [
        { providerId: 'call_8nJkQv1ZcYx3HwR0tLm5Pa2B', name: 'get_invoice', args: { invoiceId: 'INV-1042' } },
        {
          providerId: 'call_Ub7Wd2KsE9fNq4Gy6Xh1Cj3M',
          name: 'get_invoice',
          args: { invoiceId: 'INV-1043', includeLines: true },
        },
      ],
      usage: { inputTokens: 1402, outputTokens: 58 },
      stopReason: 'tool_use',
    });

    const [a, b] = response.calls;
    const followUp: ModelRequest = {
      ...firstTurn,
      messages: [
        ...firstTurn.messages,
        {
          role: 'assistant',
          text: '',
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
    expect((body(server, 1).messages as unknown[]).slice(2)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_8nJkQv1ZcYx3HwR0tLm5Pa2B',
            type: 'function',
            function: { name: 'get_invoice', arguments: '{"invoiceId":"INV-1042"}' },
          },
          {
            id: 'call_Ub7Wd2KsE9fNq4Gy6Xh1Cj3M',
            type: 'function',
            function: { name: 'get_invoice', arguments: '{"invoiceId":"INV-1043","includeLines":true}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_8nJkQv1ZcYx3HwR0tLm5Pa2B', content: '{"total":100}' },
      { role: 'tool', tool_call_id: 'call_Ub7Wd2KsE9fNq4Gy6Xh1Cj3M', content: 'Error: timeout' },
    ]);
  });

  it('maps an Ollama answer (call_0, finish_reason stop) to a tool_use', async () => {
    const { client } = await setup([loadFixture('openai/ollama-tool-call.json')]);
    const response = await run(client);
    expect(response.stopReason).toBe('tool_use');
    expect(response.text).toBe('');
    expect(response.calls).toEqual([{ providerId: 'call_0', name: 'get_invoice', args: { invoiceId: 'INV-1044' } }]);
  });

  it('makes reused provider ids unique on the wire and pairs the results', async () => {
    const { server, client } = await setup([text()]);
    await run(client, reusedIdsTurn);
    const messages = body(server).messages as Record<string, unknown>[];
    const ids = (i: number) => (messages[i]!.tool_calls as { id: string }[]).map((c) => c.id);
    expect(ids(2)).toEqual(['call_0']);
    expect(messages[3]).toEqual({ role: 'tool', tool_call_id: 'call_0', content: '{"total":100}' });
    expect(messages[4]!.content).toBeNull();
    expect(ids(4)).toEqual(['call_0_6-0', 'call_1']);
    expect(messages[5]).toEqual({ role: 'tool', tool_call_id: 'call_0_6-0', content: 'Error: invoice INV-1043 not found' });
    expect(messages[6]).toEqual({ role: 'tool', tool_call_id: 'call_1', content: '{"total":250}' });
    expect(messages[7]).toEqual({ role: 'user', content: 'Also mention which lookups failed.' });
  });

  it('keeps malformed arguments raw with argsError, and sends them back verbatim', async () => {
    const { server, client } = await setup([loadFixture('openai/malformed-args.json'), text()]);
    const response = await run(client);
    expect(response.calls).toHaveLength(2);
    const [bad, good] = response.calls;
    expect(bad).toMatchObject({
      providerId: 'chatcmpl-tool-3c1d9a7b5e2f4a6c8d0e1f2a3b4c5d6e',
      name: 'get_invoice',
      args: "{'invoiceId': 'INV-1042'}",
    });
    expect(bad!.argsError).toMatch(/not valid JSON/);
    expect(good).toEqual({
      providerId: 'chatcmpl-tool-7e5f3a1c9b2d4e6f8a0b1c2d3e4f5a6b',
      name: 'get_invoice',
      args: { invoiceId: 'INV-1043' },
    });
    expect(response.usage).toEqual({ inputTokens: 845, outputTokens: 58 });

    await run(client, {
      ...firstTurn,
      messages: [
        ...firstTurn.messages,
        { role: 'assistant', text: '', calls: [{ callId: '2-0', providerId: bad!.providerId, name: bad!.name, args: bad!.args }] },
        { role: 'tool', callId: '2-0', providerId: bad!.providerId, name: 'get_invoice', isError: true, content: 'Error: arguments are not valid JSON' },
      ],
    });
    const sent = (body(server, 1).messages as Record<string, unknown>[]).slice(2);
    expect(sent[0]!.tool_calls).toEqual([
      { id: bad!.providerId, type: 'function', function: { name: 'get_invoice', arguments: "{'invoiceId': 'INV-1042'}" } },
    ]);
    // Already says it is an error: not prefixed twice.
    expect(sent[1]).toEqual({ role: 'tool', tool_call_id: bad!.providerId, content: 'Error: arguments are not valid JSON' });
  });

  it('honours Retry-After (seconds) on a 429, then succeeds', async () => {
    const { server, clock, client } = await setup([loadFixture('openai/rate-limited.json'), text()]);
    const response = await run(client);
    expect(response.stopReason).toBe('end_turn');
    expect(server.requests).toHaveLength(2);
    expect(clock.sleeps).toEqual([2000]);
  });

  it('honours Retry-After as an HTTP date', async () => {
    const clockStart = new InstantClock().now();
    const limited = withHeaders(loadFixture('openai/rate-limited.json'), {
      'retry-after': new Date(clockStart + 5000).toUTCString(),
    });
    const { clock, client } = await setup([limited, text()]);
    await run(client);
    expect(clock.sleeps).toEqual([5000]);
  });

  it('reports model_rate_limited when 429s outlast the retry budget', async () => {
    const limited = withHeaders(loadFixture('openai/rate-limited.json'), { 'retry-after': '12' });
    const { server, clock, client } = await setup([limited, limited, limited, text()]);
    const error = await rejection(run(client));
    expect(error.code).toBe('model_rate_limited');
    expect(error.retryable).toBe(true);
    // 12 s + 12 s fit in 30 s; a third wait would not.
    expect(clock.sleeps).toEqual([12_000, 12_000]);
    expect(server.requests).toHaveLength(3);
  });

  it('retries a 500 with backoff and succeeds', async () => {
    const { server, clock, client } = await setup([loadFixture('openai/server-error.json'), text()]);
    expect((await run(client)).text).toContain('3 invoices');
    expect(server.requests).toHaveLength(2);
    expect(clock.sleeps).toEqual([500]);
  });

  it.each([
    ['openai/context-length.json', 'model_context_length'],
    ['openai/vllm-context-length.json', 'model_context_length'],
    ['openai/auth-error.json', 'model_auth'],
    ['openai/insufficient-quota.json', 'model_quota_exhausted'],
    ['openai/model-not-found.json', 'model_not_found'],
    ['openai/max-tokens-unsupported.json', 'model_bad_request'],
  ])('maps %s to %s without retrying', async (fixture, code) => {
    const { server, client } = await setup([loadFixture(fixture), text()]);
    const error = await rejection(run(client));
    expect(error.code).toBe(code);
    expect(error.retryable).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it('names the setting to change when the server wants max_completion_tokens', async () => {
    const { client } = await setup([loadFixture('openai/max-tokens-unsupported.json')]);
    const error = await rejection(run(client));
    expect(error.message).toContain('OPENAI_MAX_TOKENS_PARAM=max_completion_tokens');
  });

  it.each([
    ['a body that is not JSON', { status: 200, headers: { 'content-type': 'text/html' }, body: '<html>proxy</html>' }],
    ['a completion without usage', { status: 200, body: { choices: [{ message: { content: 'hi' }, finish_reason: 'stop' }] } }],
  ])('reports model_invalid_response for %s', async (_name, fixture) => {
    const { client } = await setup([fixture]);
    const error = await rejection(run(client));
    expect(error.code).toBe('model_invalid_response');
    expect(error.retryable).toBe(false);
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

  it('does not send when the signal is already aborted', async () => {
    const { server, client } = await setup([text()]);
    const controller = new AbortController();
    controller.abort(new Error('cancelled'));
    await expect(run(client, firstTurn, controller.signal)).rejects.toThrow('cancelled');
    expect(server.requests).toHaveLength(0);
  });

  it('retries a refused connection, then reports model_unavailable', async () => {
    const { server, clock, client } = await setup([], { retry: { maxAttempts: 2 } });
    await server.close();
    const error = await rejection(run(client));
    expect(error.code).toBe('model_unavailable');
    expect(error.message).toMatch(/ECONNREFUSED/);
    expect(clock.sleeps).toHaveLength(1);
  });
});
