import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { z } from 'zod';
import { ConfigError } from '../core/errors.js';
import type { Clock } from '../ports/clock.js';
import type { ModelClient, ModelResolver } from '../ports/model-client.js';
import { BedrockConverseClient } from './bedrock-converse.js';
import { OpenAiCompatibleClient, chatCompletionsUrl } from './openai-compatible.js';
import { ZERO_PRICE, defaultPrices, type Price, type PriceTable } from './prices.js';
import type { RetryOptions } from './retry.js';

export type ModelProvider = 'scripted' | 'bedrock' | 'openai';

/** `scripted`, `scripted:<name>`, `bedrock:<modelId>` or `openai:<model>`; undefined otherwise. */
export function parseModelId(id: string): { provider: ModelProvider; name: string } | undefined {
  if (id === 'scripted') return { provider: 'scripted', name: '' };
  const match = /^(scripted|bedrock|openai):(\S+)$/.exec(id);
  if (!match) return undefined;
  return { provider: match[1] as ModelProvider, name: match[2] as string };
}

const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';

const priceText = z
  .string()
  .regex(/^\s*\d+(\.\d+)?\s*,\s*\d+(\.\d+)?\s*$/, 'expected "<input>,<output>" in USD per million tokens, e.g. "3,15"')
  .transform((s): Price => {
    const [input, output] = s.split(',').map(Number);
    return { inputPerMTokUsd: input ?? 0, outputPerMTokUsd: output ?? 0 };
  });

/** The part of the environment this module reads. Empty strings count as unset. */
export const modelEnvSchema = z.object({
  LOGBOOK_MODEL: z.string().trim().default('scripted'),
  /** Price of the selected model when the table has none (or to override it): "<in>,<out>". */
  LOGBOOK_MODEL_PRICE: priceText.optional(),
  AWS_REGION: z.string().default('us-east-1'),
  OPENAI_BASE_URL: z.string().url().optional(),
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_API_KEY_HEADER: z.enum(['authorization', 'api-key']).optional(),
  OPENAI_MAX_TOKENS_PARAM: z.enum(['max_tokens', 'max_completion_tokens']).optional(),
});
export type ModelEnv = z.infer<typeof modelEnvSchema>;

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

function parseEnv(env: Record<string, string | undefined>): ModelEnv {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = modelEnvSchema.safeParse(present);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid model configuration: ${issues}`);
  }
  return parsed.data;
}

const needsKey = (url: URL) => url.hostname === 'api.openai.com' || /\.azure\.com$/i.test(url.hostname);

/**
 * The id and price to pin for LOGBOOK_MODEL, without building clients or checking credentials:
 * what run creation (API, trigger) needs. Throws ConfigError for a malformed id or a model with
 * no price.
 */
export function selectedModel(
  env: Record<string, string | undefined> = process.env,
  options: Pick<ModelConfigOptions, 'prices'> = {},
): { modelId: string; price: Price } {
  const { modelId, price } = select(parseEnv(env), options.prices ?? defaultPrices);
  return { modelId, price };
}

function select(config: ModelEnv, prices: PriceTable): { modelId: string; price: Price; provider: ModelProvider } {
  const modelId = config.LOGBOOK_MODEL;
  const selected = parseModelId(modelId);
  if (!selected) {
    throw new ConfigError(`LOGBOOK_MODEL must be "scripted", "bedrock:<modelId>" or "openai:<model>", got "${modelId}"`);
  }
  const price =
    config.LOGBOOK_MODEL_PRICE ?? prices.lookup(modelId) ?? (selected.provider === 'scripted' ? { ...ZERO_PRICE } : undefined);
  if (!price) {
    throw new ConfigError(
      `no price is known for ${modelId}: set LOGBOOK_MODEL_PRICE=<input>,<output> in USD per million tokens ` +
        `(0,0 for a free local server) or call registerPrice() before building the models`,
    );
  }
  return { modelId, price, provider: selected.provider };
}

/**
 * Reads LOGBOOK_MODEL (and the provider's settings) and returns the id and price to pin plus a
 * resolver, for the process that calls the model (the worker, `npm start`). Throws ConfigError for
 * a malformed id, a model with no price, or a missing OpenAI key.
 *
 * The resolver serves: `scripted*` ids when a scripted factory is given; any `bedrock:` id (it
 * needs only a region and the caller's IAM permissions); any `openai:` id when OPENAI_BASE_URL or
 * OPENAI_API_KEY is set. Anything else resolves to undefined, and the run parks.
 */
export function modelsFromEnv(
  env: Record<string, string | undefined> = process.env,
  options: ModelConfigOptions = {},
): ModelSelection {
  const config = parseEnv(env);
  const { modelId, price, provider } = select(config, options.prices ?? defaultPrices);
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
