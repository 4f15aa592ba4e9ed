import { z } from 'zod';
import type { JsonValue } from './json.js';

/**
 * How an agent asks its model to sample: pinned in run_started (`model.settings`), handed to the
 * provider adapter on every call (`ModelRequest.settings`), mapped by each adapter to its wire
 * fields. Which settings a model accepts is checked when the agent is defined
 * (lib/models/model-capabilities.ts): a setting the model has no switch for is refused there,
 * never dropped on the way.
 */

const jsonValue = z.json() as unknown as z.ZodType<JsonValue>;

export const toolChoiceSchema = z.union([z.enum(['auto', 'required', 'none']), z.object({ tool: z.string().min(1) }).strict()]);
export type ToolChoice = z.infer<typeof toolChoiceSchema>;

export const reasoningSchema = z.union([
  z.object({ effort: z.enum(['minimal', 'low', 'medium', 'high']) }).strict(),
  z.object({ budgetTokens: z.number().int().min(1024) }).strict(),
]);
export type ReasoningSetting = z.infer<typeof reasoningSchema>;

export const modelSettingsSchema = z
  .object({
    temperature: z.number().min(0).max(2).optional(),
    topP: z.number().gt(0).max(1).optional(),
    stopSequences: z.array(z.string().min(1)).min(1).max(8).optional(),
    /** `auto` (the model decides), `required` (some tool), `none` (no tool), or one named tool. */
    toolChoice: toolChoiceSchema.optional(),
    /** Whether the model may ask for several tool calls in one turn. */
    parallelToolCalls: z.boolean().optional(),
    /** A reasoning effort (OpenAI reasoning models) or a thinking budget in tokens (Claude on Bedrock). */
    reasoning: reasoningSchema.optional(),
    /**
     * Provider fields sent as given, for what Logbook has no name for: merged into Bedrock's
     * `additionalModelRequestFields`, or into the top level of an OpenAI-compatible body (a key
     * Logbook sets itself is refused at definition time).
     */
    providerOptions: z.record(z.string(), jsonValue).optional(),
  })
  .strict();
export type ModelSettings = z.infer<typeof modelSettingsSchema>;

/** The names of the settings an agent set, in a stable order (for capability checks and messages). */
export function settingNames(settings: ModelSettings): (keyof ModelSettings)[] {
  return (Object.keys(modelSettingsSchema.shape) as (keyof ModelSettings)[]).filter((k) => settings[k] !== undefined);
}
