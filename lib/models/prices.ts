import type { Price } from '../core/events.js';
import type { ModelUsage } from '../core/messages.js';
import { LogbookError } from '../core/errors.js';

export type { Price };

/** No price is known for a model id: budgets in USD cannot be enforced, so the run does not start. */
export class UnknownModelPriceError extends LogbookError {
  readonly code = 'model_price_unknown';
  constructor(readonly modelId: string) {
    super(
      `no price is known for model ${modelId}: register one (registerPrice or LOGBOOK_MODEL_PRICE=<input>,<output> ` +
        `in USD per million tokens; 0,0 for a free local server)`,
    );
  }
}

/**
 * On-demand list prices in USD per million tokens, keyed by provider model id (no `bedrock:` or
 * `openai:` prefix). Checked against the providers' public price pages in 2025; prices change,
 * so treat this as a convenience and register what your bill says. Bedrock prices are the
 * us-east-1 ones. Regional inference profiles of the newest Claude models cost about 10% more
 * than listed here: register the profile id when that matters.
 */
export const BUILT_IN_PRICES: Readonly<Record<string, Price>> = Object.freeze({
  // Amazon Bedrock: Anthropic
  'anthropic.claude-3-haiku-20240307-v1:0': p(0.25, 1.25),
  'anthropic.claude-3-5-haiku-20241022-v1:0': p(0.8, 4),
  'anthropic.claude-3-5-sonnet-20241022-v2:0': p(3, 15),
  'anthropic.claude-3-7-sonnet-20250219-v1:0': p(3, 15),
  'anthropic.claude-sonnet-4-20250514-v1:0': p(3, 15),
  'anthropic.claude-sonnet-4-5-20250929-v1:0': p(3, 15),
  'anthropic.claude-haiku-4-5-20251001-v1:0': p(1, 5),
  'anthropic.claude-opus-4-20250514-v1:0': p(15, 75),
  'anthropic.claude-opus-4-1-20250805-v1:0': p(15, 75),
  // Amazon Bedrock: Amazon Nova
  'amazon.nova-micro-v1:0': p(0.035, 0.14),
  'amazon.nova-lite-v1:0': p(0.06, 0.24),
  'amazon.nova-pro-v1:0': p(0.8, 3.2),
  // OpenAI
  'gpt-4o': p(2.5, 10),
  'gpt-4o-mini': p(0.15, 0.6),
  'gpt-4.1': p(2, 8),
  'gpt-4.1-mini': p(0.4, 1.6),
  'gpt-4.1-nano': p(0.1, 0.4),
  'o4-mini': p(1.1, 4.4),
  o3: p(2, 8),
  'gpt-5': p(1.25, 10),
  'gpt-5-mini': p(0.25, 2),
  'gpt-5-nano': p(0.05, 0.4),
});

function p(inputPerMTokUsd: number, outputPerMTokUsd: number): Price {
  return Object.freeze({ inputPerMTokUsd, outputPerMTokUsd });
}

/** Bedrock cross-region inference profile prefixes: `us.anthropic.claude-...` is priced as its model. */
const PROFILE_PREFIX = /^(us|eu|apac|jp|au|ca|us-gov|global)\./;
const PROVIDER_PREFIX = /^(bedrock|openai):/;

/**
 * A price table a user can extend. Lookup order for an id: the exact id (as pinned, e.g.
 * `bedrock:us.anthropic...`), then without the provider prefix, then without a Bedrock
 * inference-profile prefix. Unknown ids have no price: the decision is the caller's
 * (`require` throws UnknownModelPriceError); there is no silent zero.
 */
export class PriceTable {
  private readonly entries = new Map<string, Price>();

  constructor(entries: Readonly<Record<string, Price>> = BUILT_IN_PRICES) {
    for (const [id, price] of Object.entries(entries)) this.register(id, price);
  }

  register(modelId: string, price: Price): this {
    if (!modelId) throw new RangeError('model id is empty');
    for (const v of [price.inputPerMTokUsd, price.outputPerMTokUsd]) {
      if (!Number.isFinite(v) || v < 0) throw new RangeError(`price for ${modelId} must be finite and >= 0`);
    }
    this.entries.set(modelId, { inputPerMTokUsd: price.inputPerMTokUsd, outputPerMTokUsd: price.outputPerMTokUsd });
    return this;
  }

  lookup(modelId: string): Price | undefined {
    const bare = modelId.replace(PROVIDER_PREFIX, '');
    const candidates = [modelId, bare, bare.replace(PROFILE_PREFIX, '')];
    for (const id of candidates) {
      const price = this.entries.get(id);
      if (price) return { ...price };
    }
    return undefined;
  }

  require(modelId: string): Price {
    const price = this.lookup(modelId);
    if (!price) throw new UnknownModelPriceError(modelId);
    return price;
  }
}

/** The process-wide table: built-in prices plus whatever registerPrice added. */
export const defaultPrices = new PriceTable();

export function registerPrice(modelId: string, price: Price): void {
  defaultPrices.register(modelId, price);
}

/** The scripted model costs nothing; its id is priced explicitly rather than by a default. */
export const ZERO_PRICE: Price = Object.freeze({ inputPerMTokUsd: 0, outputPerMTokUsd: 0 });

/** USD for this usage at this price, rounded to 1e-9 USD so sums of equal usages stay equal. */
export function costUsd(usage: ModelUsage, price: Price): number {
  const raw = (usage.inputTokens * price.inputPerMTokUsd + usage.outputTokens * price.outputPerMTokUsd) / 1_000_000;
  return Math.round(raw * 1e9) / 1e9;
}
