import { describe, expect, it } from 'vitest';
import { priceSchema } from '../../../lib/core/events.js';
import { PriceTable, UnknownModelPriceError, costUsd, defaultPrices, registerPrice } from '../../../lib/models/prices.js';

describe('PriceTable', () => {
  it('finds built-in prices by pinned id, bare id and Bedrock inference-profile id', () => {
    const table = new PriceTable();
    const sonnet = { inputPerMTokUsd: 3, outputPerMTokUsd: 15 };
    expect(table.lookup('anthropic.claude-sonnet-4-20250514-v1:0')).toEqual(sonnet);
    expect(table.lookup('bedrock:anthropic.claude-sonnet-4-20250514-v1:0')).toEqual(sonnet);
    expect(table.lookup('bedrock:us.anthropic.claude-sonnet-4-20250514-v1:0')).toEqual(sonnet);
    expect(table.lookup('openai:gpt-4o')).toEqual({ inputPerMTokUsd: 2.5, outputPerMTokUsd: 10 });
  });

  it('has no price for an unknown model: lookup is undefined and require throws a named error', () => {
    const table = new PriceTable();
    expect(table.lookup('openai:llama3.1:8b')).toBeUndefined();
    expect(() => table.require('openai:llama3.1:8b')).toThrow(UnknownModelPriceError);
    try {
      table.require('openai:llama3.1:8b');
    } catch (e) {
      expect((e as UnknownModelPriceError).code).toBe('model_price_unknown');
    }
  });

  it('lets a user register prices; a more specific id wins over the bare one', () => {
    const table = new PriceTable({});
    table.register('openai:llama3.1:8b', { inputPerMTokUsd: 0, outputPerMTokUsd: 0 });
    table.register('gpt-4o', { inputPerMTokUsd: 2.5, outputPerMTokUsd: 10 });
    table.register('bedrock:eu.anthropic.claude-sonnet-4-20250514-v1:0', { inputPerMTokUsd: 3.3, outputPerMTokUsd: 16.5 });
    table.register('anthropic.claude-sonnet-4-20250514-v1:0', { inputPerMTokUsd: 3, outputPerMTokUsd: 15 });
    expect(table.require('openai:llama3.1:8b')).toEqual({ inputPerMTokUsd: 0, outputPerMTokUsd: 0 });
    expect(table.require('bedrock:eu.anthropic.claude-sonnet-4-20250514-v1:0').inputPerMTokUsd).toBe(3.3);
    expect(table.require('bedrock:us.anthropic.claude-sonnet-4-20250514-v1:0').inputPerMTokUsd).toBe(3);
  });

  it('rejects negative or non-finite prices', () => {
    const table = new PriceTable({});
    expect(() => table.register('m', { inputPerMTokUsd: -1, outputPerMTokUsd: 0 })).toThrow(RangeError);
    expect(() => table.register('m', { inputPerMTokUsd: 0, outputPerMTokUsd: Number.NaN })).toThrow(RangeError);
  });

  it('returns copies, so a caller cannot edit the table through a result', () => {
    const table = new PriceTable();
    const price = table.require('gpt-4o');
    price.inputPerMTokUsd = 0;
    expect(table.require('gpt-4o').inputPerMTokUsd).toBe(2.5);
  });

  it('registerPrice extends the process-wide table', () => {
    registerPrice('openai:acme-internal-70b', { inputPerMTokUsd: 0.5, outputPerMTokUsd: 1 });
    expect(defaultPrices.require('openai:acme-internal-70b')).toEqual({ inputPerMTokUsd: 0.5, outputPerMTokUsd: 1 });
  });

  it('every built-in price is a valid pinned price', () => {
    const table = new PriceTable();
    for (const id of ['gpt-5', 'amazon.nova-micro-v1:0', 'anthropic.claude-opus-4-1-20250805-v1:0']) {
      expect(priceSchema.safeParse(table.require(id)).success).toBe(true);
    }
  });
});

describe('costUsd', () => {
  it('prices input and output tokens per million', () => {
    expect(costUsd({ inputTokens: 1_000_000, outputTokens: 0 }, { inputPerMTokUsd: 3, outputPerMTokUsd: 15 })).toBe(3);
    expect(costUsd({ inputTokens: 2000, outputTokens: 500 }, { inputPerMTokUsd: 3, outputPerMTokUsd: 15 })).toBe(0.0135);
    expect(costUsd({ inputTokens: 0, outputTokens: 0 }, { inputPerMTokUsd: 3, outputPerMTokUsd: 15 })).toBe(0);
  });

  it('drops floating-point noise', () => {
    expect(costUsd({ inputTokens: 1, outputTokens: 2 }, { inputPerMTokUsd: 0.1, outputPerMTokUsd: 0.1 })).toBe(3e-7);
  });
});
