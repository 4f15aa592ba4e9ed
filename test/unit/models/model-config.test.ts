import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../lib/core/errors.js';
import type { ModelResponse } from '../../../lib/core/messages.js';
import type { ModelClient } from '../../../lib/ports/model-client.js';
import { BedrockConverseClient } from '../../../lib/models/bedrock-converse.js';
import { modelsFromEnv, parseModelId, selectedModel } from '../../../lib/models/model-config.js';
import { OpenAiCompatibleClient } from '../../../lib/models/openai-compatible.js';
import { PriceTable } from '../../../lib/models/prices.js';
import { loadFixture, startFixtureServer, type FixtureServer } from './fixture-server.js';
import { firstTurn } from './sample-requests.js';

const scriptedClient: ModelClient = {
  complete: async (): Promise<ModelResponse> => ({
    text: 'scripted',
    calls: [],
    usage: { inputTokens: 0, outputTokens: 0 },
    stopReason: 'end_turn',
  }),
};

let server: FixtureServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('parseModelId', () => {
  it('accepts the three providers and nothing else', () => {
    expect(parseModelId('scripted')).toEqual({ provider: 'scripted', name: '' });
    expect(parseModelId('scripted:demo')).toEqual({ provider: 'scripted', name: 'demo' });
    expect(parseModelId('bedrock:us.anthropic.claude-sonnet-4-20250514-v1:0')).toEqual({
      provider: 'bedrock',
      name: 'us.anthropic.claude-sonnet-4-20250514-v1:0',
    });
    expect(parseModelId('openai:llama3.1:8b')).toEqual({ provider: 'openai', name: 'llama3.1:8b' });
    for (const bad of ['gpt-4o', 'bedrock:', 'openai: gpt', 'azure:gpt', '']) expect(parseModelId(bad)).toBeUndefined();
  });
});

describe('modelsFromEnv', () => {
  it('defaults to the scripted model at zero price', () => {
    const selection = modelsFromEnv({}, { scripted: () => scriptedClient });
    expect(selection.modelId).toBe('scripted');
    expect(selection.price).toEqual({ inputPerMTokUsd: 0, outputPerMTokUsd: 0 });
    expect(selection.resolver.resolve('scripted')).toBe(scriptedClient);
    expect(modelsFromEnv({}).resolver.resolve('scripted')).toBeUndefined();
  });

  it('selects Bedrock with the prefixed id pinned, and serves other Bedrock ids on resume', () => {
    const env = { LOGBOOK_MODEL: 'bedrock:us.anthropic.claude-sonnet-4-20250514-v1:0', AWS_REGION: 'eu-west-1' };
    const { modelId, price, resolver } = modelsFromEnv(env);
    expect(modelId).toBe('bedrock:us.anthropic.claude-sonnet-4-20250514-v1:0');
    expect(price).toEqual({ inputPerMTokUsd: 3, outputPerMTokUsd: 15 });
    const client = resolver.resolve(modelId);
    expect(client).toBeInstanceOf(BedrockConverseClient);
    expect((client as BedrockConverseClient).modelId).toBe('us.anthropic.claude-sonnet-4-20250514-v1:0');
    expect(resolver.resolve(modelId)).toBe(client);
    expect((resolver.resolve('bedrock:amazon.nova-pro-v1:0') as BedrockConverseClient).modelId).toBe('amazon.nova-pro-v1:0');
    expect(resolver.resolve('openai:gpt-4o')).toBeUndefined();
    expect(resolver.resolve('scripted')).toBeUndefined();
    expect(resolver.resolve('vertex:gemini')).toBeUndefined();
  });

  it('selects OpenAI with its default base URL and key', () => {
    const { modelId, price, resolver } = modelsFromEnv({ LOGBOOK_MODEL: 'openai:gpt-4.1-mini', OPENAI_API_KEY: 'sk-x' });
    expect(modelId).toBe('openai:gpt-4.1-mini');
    expect(price).toEqual({ inputPerMTokUsd: 0.4, outputPerMTokUsd: 1.6 });
    const client = resolver.resolve(modelId) as OpenAiCompatibleClient;
    expect(client).toBeInstanceOf(OpenAiCompatibleClient);
    expect(client.url.toString()).toBe('https://api.openai.com/v1/chat/completions');
    expect(client.model).toBe('gpt-4.1-mini');
  });

  it('requires OPENAI_API_KEY for api.openai.com and Azure', () => {
    expect(configError(() => modelsFromEnv({ LOGBOOK_MODEL: 'openai:gpt-4o' })).message).toMatch(/OPENAI_API_KEY/);
    const azure = { LOGBOOK_MODEL: 'openai:gpt-4o', OPENAI_BASE_URL: 'https://x.openai.azure.com/openai/v1' };
    expect(configError(() => modelsFromEnv(azure)).message).toMatch(/OPENAI_API_KEY/);
  });

  it('gives run creation the id and price without needing the provider credentials', () => {
    expect(selectedModel({ LOGBOOK_MODEL: 'openai:gpt-4o' })).toEqual({
      modelId: 'openai:gpt-4o',
      price: { inputPerMTokUsd: 2.5, outputPerMTokUsd: 10 },
    });
    expect(configError(() => selectedModel({ LOGBOOK_MODEL: 'openai:unknown-model' })).message).toMatch(/LOGBOOK_MODEL_PRICE/);
  });

  it('requires a price for a model the table does not know', () => {
    const env = { LOGBOOK_MODEL: 'openai:llama3.1:8b', OPENAI_BASE_URL: 'http://localhost:11434' };
    expect(configError(() => modelsFromEnv(env)).message).toMatch(/LOGBOOK_MODEL_PRICE/);
    expect(modelsFromEnv({ ...env, LOGBOOK_MODEL_PRICE: '0,0' }).price).toEqual({ inputPerMTokUsd: 0, outputPerMTokUsd: 0 });
    expect(modelsFromEnv({ ...env, LOGBOOK_MODEL_PRICE: ' 0.2 , 0.6 ' }).price).toEqual({
      inputPerMTokUsd: 0.2,
      outputPerMTokUsd: 0.6,
    });
    const prices = new PriceTable({ 'llama3.1:8b': { inputPerMTokUsd: 0.1, outputPerMTokUsd: 0.1 } });
    expect(modelsFromEnv(env, { prices }).price).toEqual({ inputPerMTokUsd: 0.1, outputPerMTokUsd: 0.1 });
  });

  it.each([
    [{ LOGBOOK_MODEL: 'gpt-4o' }, /LOGBOOK_MODEL must be/],
    [{ LOGBOOK_MODEL: 'bedrock:' }, /LOGBOOK_MODEL must be/],
    [{ LOGBOOK_MODEL: 'openai:m', OPENAI_BASE_URL: 'not a url' }, /OPENAI_BASE_URL/],
    [{ LOGBOOK_MODEL: 'openai:m', OPENAI_BASE_URL: 'http://h', LOGBOOK_MODEL_PRICE: 'free' }, /LOGBOOK_MODEL_PRICE/],
    [{ LOGBOOK_MODEL: 'openai:m', OPENAI_BASE_URL: 'http://h', OPENAI_MAX_TOKENS_PARAM: 'tokens' }, /OPENAI_MAX_TOKENS_PARAM/],
  ])('rejects %o with a ConfigError', (env, message) => {
    expect(configError(() => modelsFromEnv(env)).message).toMatch(message);
  });

  it('treats empty variables as unset', () => {
    expect(modelsFromEnv({ LOGBOOK_MODEL: '', OPENAI_BASE_URL: '', LOGBOOK_MODEL_PRICE: '' }).modelId).toBe('scripted');
  });

  it('builds a working OpenAI-compatible client from the environment', async () => {
    server = await startFixtureServer([loadFixture('openai/ollama-tool-call.json')]);
    const { modelId, resolver } = modelsFromEnv({
      LOGBOOK_MODEL: 'openai:qwen2.5:7b',
      OPENAI_BASE_URL: server.url,
      LOGBOOK_MODEL_PRICE: '0,0',
      OPENAI_MAX_TOKENS_PARAM: 'max_completion_tokens',
    });
    const response = await resolver.resolve(modelId)!.complete(firstTurn, { signal: new AbortController().signal });
    expect(response.calls[0]?.providerId).toBe('call_0');
    const req = server.requests[0]!;
    expect(req.url).toBe('/v1/chat/completions');
    expect(req.headers.authorization).toBeUndefined();
    expect(JSON.parse(req.body)).toMatchObject({ model: 'qwen2.5:7b', max_completion_tokens: 1024 });
  });

  it('builds a working Bedrock client around an injected SDK client', async () => {
    server = await startFixtureServer([loadFixture('bedrock/text-answer.json')], 'h2c');
    const bedrockClient = new BedrockRuntimeClient({
      endpoint: server.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIDLOGBOOKTEST', secretAccessKey: 'logbook-test-secret' },
      maxAttempts: 1,
    });
    const { modelId, resolver } = modelsFromEnv({ LOGBOOK_MODEL: 'bedrock:amazon.nova-lite-v1:0' }, { bedrockClient });
    const response = await resolver.resolve(modelId)!.complete(firstTurn, { signal: new AbortController().signal });
    expect(response.stopReason).toBe('end_turn');
    expect(decodeURIComponent(server.requests[0]!.url)).toBe('/model/amazon.nova-lite-v1:0/converse');
  });
});
