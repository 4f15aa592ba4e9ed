import { z } from 'zod';
import { ConfigError } from '../core/errors.js';
import type { PinnedContext } from '../core/context-events.js';
import type { Price } from '../core/events.js';
import { zodIssuesText } from '../core/zod-issues.js';
import type { AgentSpec } from './types.js';

export type { ContextSpec } from './types.js';

const priceSchema = z.object({ inputPerMTokUsd: z.number().nonnegative(), outputPerMTokUsd: z.number().nonnegative() }).strict();

const contextSpecSchema = z
  .object({
    keepTurns: z.number().int().positive(),
    olderToolResults: z.enum(['summary', 'reference', 'drop']),
    summarize: z
      .object({
        model: z.string().min(1).optional(),
        price: priceSchema.optional(),
        maxOutputTokens: z.number().int().positive(),
        everyTurns: z.number().int().positive(),
      })
      .strict()
      .optional(),
  })
  .strict();

/** Refuse a malformed policy when the agent is defined, naming the field. */
export function checkContextSpec(spec: Pick<AgentSpec, 'name' | 'context' | 'model'>): void {
  if (spec.context === undefined) return;
  const parsed = contextSpecSchema.safeParse(spec.context);
  if (!parsed.success) throw new ConfigError(`agent ${spec.name}: context ${zodIssuesText(parsed.error)}`);
  const s = spec.context.summarize;
  if (s?.model !== undefined && s.model !== spec.model.id && s.price === undefined) {
    throw new ConfigError(`agent ${spec.name}: context.summarize.model ${s.model} is not the agent's model: give context.summarize.price`);
  }
}

/**
 * The policy as run_started pins it, defaults resolved: the summary model is the agent's unless
 * named, priced as the agent's model (`price`, what the run pins for it) unless priced.
 */
export function pinContext(spec: Pick<AgentSpec, 'context' | 'model'>, price: Price): PinnedContext | undefined {
  const c = spec.context;
  if (!c) return undefined;
  const s = c.summarize;
  return {
    keepTurns: c.keepTurns,
    olderToolResults: c.olderToolResults,
    ...(s ? { summarize: { model: s.model ?? spec.model.id, price: s.price ?? price, maxOutputTokens: s.maxOutputTokens, everyTurns: s.everyTurns } } : {}),
  };
}
