import { z } from 'zod';

/**
 * What asks for a run, whichever edge it comes through: the body of `POST /runs` is this plus an
 * optional client-chosen `runId`; the detail of an EventBridge `Agent Run Requested` event is
 * exactly this. Strict: the tenant is the authorized caller or the event's account, never a
 * field, so a `tenant` field is refused rather than ignored.
 *
 * Plain zod (no OpenAPI import), so that the trigger function's bundle does not pull in the API's
 * document generator; `.meta` describes the fields in the API's OpenAPI document. (No `.meta` id:
 * zod's global registry refuses a second schema with the same id, which a second copy of this
 * module in one process would be; lib/api/schemas.ts names the components instead.)
 */

const positiveInt = z.number().int().positive();

export const BudgetsSchema = z
  .object({
    maxSteps: positiveInt.optional(),
    maxInputTokens: positiveInt.optional(),
    maxOutputTokens: positiveInt.optional(),
    maxCostUsd: z.number().positive().optional(),
    deadlineSeconds: positiveInt.optional().meta({ description: 'seconds from the start of the run' }),
  })
  .strict()
  .meta({ description: 'limits for this run; absent fields take the agent defaults, the tenant ceiling clamps all' });

export const RunInputSchema = z.union([z.string().min(1), z.record(z.string(), z.unknown()), z.array(z.unknown())]).meta({
  description:
    'the task: a message for the agent, or a JSON object or array. An agent with an input schema takes only input that fits it ' +
    '(GET /agents/{name}/schema publishes it per version); a misfit is a 400 whose issues name each field (`body.input.<path>`)',
  example: 'Customer alice@example.com says order 1001 arrived broken.',
});

export const RunRequestSchema = z
  .object({
    agent: z.string().min(1).max(128),
    version: z.string().min(1).max(64).optional(),
    input: RunInputSchema,
    budgets: BudgetsSchema.optional(),
  })
  .strict();
export type RunRequest = z.infer<typeof RunRequestSchema>;
