import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { ConfigError } from '../core/errors.js';
import { unhandled } from '../core/unhandled.js';
import type { Clock } from '../ports/clock.js';
import type { ModelClient, ModelResolver } from '../ports/model-client.js';
import { BedrockConverseClient } from './bedrock-converse.js';
import { OpenAiCompatibleClient, chatCompletionsUrl } from './openai-compatible.js';
import { defaultPrices, type Price, type PriceTable } from './prices.js';
import { parseModelEnv, parseModelId, selectModel } from './model-selection.js';
export { modelEnvSchema, modelProviderSchema, parseModelId, selectedModel, type ModelEnv, type ModelProvider } from './model-selection.js';
import type { RetryOptions } from './retry.js';

const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';

export interface ModelConfigOptions {
  /** Builds the scripted client for `scripted` / `scripted:<name>` ids; without it they do not resolve. */
  scripted?: (modelId: string) => ModelClient | undefined;
  /** Defaults to the process-wide table (built-in prices plus registerPrice). */
  prices?: PriceTable;
  /** Defaults to a client for AWS_REGION with maxAttempts 1 (the adapter owns retries). */
  bedrockClient?: BedrockRuntimeClient;
  fetch?: typeof fetch;
  clock?: Clock;
  random?: () => number;
  retry?: Partial<RetryOptions>;
}

export interface ModelSelection {
  /** The id to pin in run_started, provider prefix included (`bedrock:...`, `openai:...`, `scripted`). */
  modelId: string;
  /** The price to pin with it. */
  price: Price;
  /** Serves the selected id and any other id of a configured provider (runs pinned before a redeploy). */
  resolver: ModelResolver;
}

const needsKey = (url: URL) => url.hostname === 'api.openai.com' || /\.azure\.com$/i.test(url.hostname);

/**
 * Reads LOGBOOK_MODEL (and the provider's settings) and returns the id and price to pin plus a
 * resolver, for the process that calls the model (the worker, `npm start`). Throws ConfigError for
 * a malformed id, a model with no price, or a missing OpenAI key.
 *
 * The resolver serves: `scripted*` ids when a scripted factory is given; any `bedrock:` id (it
 * needs only a region and the caller's IAM permissions); any `openai:` id when OPENAI_BASE_URL or
 * OPENAI_API_KEY is set. Anything else resolves to undefined, and the run parks.
 */
export function modelsFromEnv(env: Record<string, string | undefined> = process.env, options: ModelConfigOptions = {}): ModelSelection {
  const config = parseModelEnv(env);
  const { modelId, price, provider } = selectModel(config, options.prices ?? defaultPrices);
  const openaiConfigured = config.OPENAI_BASE_URL !== undefined || config.OPENAI_API_KEY !== undefined;
  const openaiUrl = chatCompletionsUrl(config.OPENAI_BASE_URL ?? DEFAULT_OPENAI_BASE_URL);
  if (provider === 'openai' && needsKey(openaiUrl) && config.OPENAI_API_KEY === undefined) {
    throw new ConfigError(
      `LOGBOOK_MODEL=${modelId} needs OPENAI_API_KEY for ${openaiUrl.host}` +
        (config.OPENAI_BASE_URL ? '' : ' (set OPENAI_BASE_URL to use another OpenAI-compatible server)'),
    );
  }

  const shared = { clock: options.clock, random: options.random, retry: options.retry };
  let bedrock = options.bedrockClient;
  const build = (id: string): ModelClient | undefined => {
    const parsed = parseModelId(id);
    if (!parsed) return undefined;
    switch (parsed.provider) {
      case 'scripted':
        return options.scripted?.(id);
      case 'bedrock':
        bedrock ??= new BedrockRuntimeClient({ region: config.AWS_REGION, maxAttempts: 1 });
        return new BedrockConverseClient({ client: bedrock, modelId: parsed.name, ...shared });
      case 'openai':
        if (!openaiConfigured) return undefined;
        return new OpenAiCompatibleClient({
          baseUrl: config.OPENAI_BASE_URL ?? DEFAULT_OPENAI_BASE_URL,
          model: parsed.name,
          ...(config.OPENAI_API_KEY === undefined ? {} : { apiKey: config.OPENAI_API_KEY }),
          ...(config.OPENAI_API_KEY_HEADER === undefined ? {} : { apiKeyHeader: config.OPENAI_API_KEY_HEADER }),
          ...(config.OPENAI_MAX_TOKENS_PARAM === undefined ? {} : { maxTokensParam: config.OPENAI_MAX_TOKENS_PARAM }),
          ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
          ...shared,
        });
      default:
        return unhandled(parsed.provider, 'model provider');
    }
  };

  const cache = new Map<string, ModelClient | undefined>();
  const resolver: ModelResolver = {
    resolve(id) {
      if (!cache.has(id)) cache.set(id, build(id));
      return cache.get(id);
    },
  };
  return { modelId, price, resolver };
}
