import { z } from 'zod';
import type { Body } from './body.js';

/**
 * An agent's context policy as pinned in run_started (a resumed or forked run keeps it): what a
 * long run's prompt holds. The system prompt, the run's input and every message a person sent are
 * always there, and the last `keepTurns` turns verbatim (a turn: one model response and the
 * results of its calls). Older turns keep their calls, with each tool result replaced by its
 * stored summary (`summary`), by a one-line reference to the stored result (`reference`), or are
 * left out whole (`drop`). With `summarize`, every `everyTurns` older turns are folded by a model
 * call into one running summary, which then stands in for all the turns it covers.
 */
export const pinnedContextSchema = z.object({
  keepTurns: z.number().int().positive(),
  olderToolResults: z.enum(['summary', 'reference', 'drop']),
  summarize: z
    .object({
      /** Resolved at definition: the agent's model unless another was named. */
      model: z.string().min(1),
      price: z.object({ inputPerMTokUsd: z.number().nonnegative(), outputPerMTokUsd: z.number().nonnegative() }),
      maxOutputTokens: z.number().int().positive(),
      everyTurns: z.number().int().positive(),
    })
    .optional(),
});
export type PinnedContext = z.infer<typeof pinnedContextSchema>;

/** The running summary of a run's oldest turns, as the fold keeps it. */
export interface ContextSummaryState {
  /** The summary model's answer (its model_response text). */
  summary: Body;
  /** It covers turns 1..turns (a turn: the n-th model response of the conversation). */
  turns: number;
}
