import { z } from 'zod';
import { ConfigError } from '../core/errors.js';
import { zodIssuesText } from '../core/zod-issues.js';
import { ZERO_PRICE, defaultPrices, type Price, type PriceTable } from './prices.js';

/** Which model LOGBOOK_MODEL names and its price: no SDK, no clients (safe for any entry point). */

/**
 * The built-in providers, by a model id's prefix: one closed set. Every switch over it ends in
 * `unhandled` (lib/core/unhandled.ts), so a provider added here is a compile error wherever it must
 * be handled (DEVELOPMENT.md, "Adding a model provider", names those files).
 */
export const modelProviderSchema = z.enum(['scripted', 'bedrock', 'openai']);
export type ModelProvider = z.infer<typeof modelProviderSchema>;

const MODEL_ID = new RegExp(`^(${modelProviderSchema.options.join('|')}):(\\S+)$`);

/** `scripted`, `scripted:<name>`, `bedrock:<modelId>` or `openai:<model>`; undefined otherwise. */
export function parseModelId(id: string): { provider: ModelProvider; name: string } | undefined {
  if (id === 'scripted') return { provider: 'scripted', name: '' };
  const match = MODEL_ID.exec(id);
  if (!match) return undefined;
  return { provider: modelProviderSchema.parse(match[1]), name: match[2] as string };
}

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

export function parseModelEnv(env: Record<string, string | undefined>): ModelEnv {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = modelEnvSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(`invalid model configuration: ${zodIssuesText(parsed.error, { root: '(env)' })}`);
  }
  return parsed.data;
}

/**
 * The id and price to pin for LOGBOOK_MODEL, without building clients or checking credentials:
 * what run creation (API, trigger) needs. Throws ConfigError for a malformed id or a model with
 * no price.
 */
export function selectedModel(env: Record<string, string | undefined> = process.env, options: { prices?: PriceTable } = {}): { modelId: string; price: Price } {
  const { modelId, price } = selectModel(parseModelEnv(env), options.prices ?? defaultPrices);
  return { modelId, price };
}

export function selectModel(config: ModelEnv, prices: PriceTable): { modelId: string; price: Price; provider: ModelProvider } {
  const modelId = config.LOGBOOK_MODEL;
  const selected = parseModelId(modelId);
  if (!selected) {
    throw new ConfigError(`LOGBOOK_MODEL must be "scripted", "bedrock:<modelId>" or "openai:<model>", got "${modelId}"`);
  }
  const price = config.LOGBOOK_MODEL_PRICE ?? prices.lookup(modelId) ?? (selected.provider === 'scripted' ? { ...ZERO_PRICE } : undefined);
  if (!price) {
    throw new ConfigError(
      `no price is known for ${modelId}: set LOGBOOK_MODEL_PRICE=<input>,<output> in USD per million tokens ` +
        `(0,0 for a free local server) or call registerPrice() before building the models`,
    );
  }
  return { modelId, price, provider: selected.provider };
}
