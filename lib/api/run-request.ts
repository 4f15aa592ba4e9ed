import { z } from 'zod';

/**
 * What asks for a run (of an agent or a workflow), whichever edge it comes through: the body of `POST /runs` is this plus an
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

/**
 * The request's fields, before the one rule across them (exactly one of `agent` and `workflow`):
 * an object a body schema can extend (zod refuses to extend a refined one).
 */
export const RunRequestFields = z
  .object({
    agent: z.string().min(1).max(128).optional().meta({ description: 'the agent to run; or `workflow`: exactly one of the two' }),
    workflow: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .meta({ description: 'the workflow to run (defineWorkflow; GET /workflows lists them); or `agent`: exactly one of the two' }),
    version: z.string().min(1).max(64).optional().meta({ description: "the agent's or workflow's version (default: the latest registered)" }),
    input: RunInputSchema,
    budgets: BudgetsSchema.optional(),
  })
  .strict();

/** Exactly one of `agent` and `workflow`, each refusal naming the field to fix. */
export function oneDefinition(request: { agent?: string | undefined; workflow?: string | undefined }, ctx: z.RefinementCtx): void {
  if (request.agent !== undefined && request.workflow !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['workflow'], message: 'not allowed with agent: a run runs one agent or one workflow' });
  } else if (request.agent === undefined && request.workflow === undefined) {
    ctx.addIssue({ code: 'custom', path: ['agent'], message: 'required: name an agent or a workflow' });
  }
}

export const RunRequestSchema = RunRequestFields.superRefine(oneDefinition);
export type RunRequest = z.infer<typeof RunRequestSchema>;
