import { z } from '@hono/zod-openapi';
import { USD_DECIMALS } from '../core/money.js';
import { RUN_ID_PATTERN } from '../core/run-ref.js';
import { runStatusSchema } from '../core/run-status.js';
import { BudgetsSchema, RunRequestFields, oneDefinition } from './run-request.js';
import { CALL_ID, CALL_ID_MESSAGE, WaitViewSchema } from './control-schemas.js';

/** Run ids are scoped by tenant and double as the SQS MessageGroupId. */
export const RunIdSchema = z.string().regex(RUN_ID_PATTERN, 'run ids match [A-Za-z0-9_-]{1,80}').openapi({ example: 'order-4711-refund' });

export const RunStatusSchema = z.enum(runStatusSchema.options).openapi('RunStatus');

/** Any JSON value; the body parser already guarantees it is JSON. */
const JsonSchema = z.unknown().openapi({ description: 'any JSON value' });

/**
 * The shared run request (also the EventBridge detail) plus the client's idempotent run id.
 * Zod copies methods onto a schema when it is made, so a schema made before this module extended
 * zod has no `.openapi`: name a clone (same checks, same description) instead.
 */
export const StartRunBodySchema = RunRequestFields.extend({
  budgets: BudgetsSchema.clone().openapi('BudgetRequest').optional(),
  runId: RunIdSchema.optional(),
})
  .strict()
  .superRefine(oneDefinition)
  .openapi('StartRunRequest');
export type StartRunBody = z.infer<typeof StartRunBodySchema>;

export const StartRunResponseSchema = z.object({ runId: z.string(), status: RunStatusSchema, created: z.boolean() }).openapi('StartRunResponse');

export const ResolveBodySchema = z
  .union([
    z
      .object({
        callId: z.string().regex(CALL_ID, CALL_ID_MESSAGE).openapi({ description: "an agent's call (`<seq>-<index>`) or a workflow's operation (`op-<n>`)" }),
        outcome: z.enum(['succeeded', 'failed', 'rerun']),
        result: JsonSchema.optional(),
      })
      .strict(),
    z.object({ action: z.enum(['retry', 'fail']) }).strict(),
  ])
  .openapi('ResolveRequest');
export type ResolveBody = z.infer<typeof ResolveBodySchema>;

export const CancelBodySchema = z
  .object({ reason: z.string().max(500).optional() })
  .strict()
  .openapi('CancelRequest');

export const AcceptedSchema = z.object({ runId: z.string(), accepted: z.literal(true), inboxId: z.string() }).openapi('Accepted');

export const UsageSchema = z
  .object({
    steps: z.number(),
    inputTokens: z.number(),
    outputTokens: z.number(),
    costUsd: z.number().openapi({ description: `dollars spent, rounded to ${USD_DECIMALS} decimals (the log keeps each call's exact cost)` }),
  })
  .openapi('Usage');

export const AttentionSchema = z
  .object({
    seq: z.number(),
    reason: z.string(),
    callId: z.string().optional(),
    detail: z.string(),
    rerunNotBefore: z.string().optional().openapi({ description: 'ISO time before which "rerun" is refused' }),
  })
  .openapi('Attention');

/** The budgets pinned in run_started: the request's, with defaults filled in and the ceiling applied. */
export const RunBudgetsSchema = z
  .object({
    maxSteps: z.number(),
    maxInputTokens: z.number(),
    maxOutputTokens: z.number(),
    maxCostUsd: z.number(),
    deadlineAt: z.number().openapi({ description: 'absolute deadline, epoch milliseconds' }),
  })
  .openapi('Budgets');

export const RunSummarySchema = z
  .object({
    runId: z.string(),
    status: RunStatusSchema,
    kind: z.enum(['agent', 'workflow']).openapi({ description: 'what the run runs: an agent, or a workflow (defineWorkflow)' }),
    agent: z
      .object({ name: z.string(), version: z.string() })
      .openapi({ description: 'the definition the run pinned, by name and version: the agent, or for a workflow run the workflow (as in `workflow`)' }),
    workflow: z
      .object({ name: z.string(), version: z.string() })
      .optional()
      .openapi({ description: 'for a workflow run: the workflow and the version it pinned' }),
    createdAt: z.string(),
    updatedAt: z.string(),
    lastSeq: z.number(),
    usage: UsageSchema,
    summary: z.string().optional(),
    parent: z
      .object({ runId: z.string(), callId: z.string() })
      .optional()
      .openapi({ description: 'for a child run (agentTool, or a workflow operation `op-<n>`): the parent run and the call that started it' }),
  })
  .openapi('RunSummary');

export const ChildRunSchema = z.object({ runId: z.string(), callId: z.string(), status: RunStatusSchema, summary: z.string().optional() }).openapi('ChildRun');

export const RunViewSchema = RunSummarySchema.extend({
  pinned: z
    .object({
      model: z.string(),
      prompt: z.object({ version: z.string(), sha256: z.string() }),
      tools: z.array(
        z.object({
          name: z.string(),
          version: z.string(),
          policy: z.string(),
          schemaHash: z.string(),
          approval: z.enum(['always', 'conditional']).optional(),
          wait: z.enum(['signal', 'timer', 'child']).optional(),
        }),
      ),
      output: z
        .object({ schema: z.record(z.string(), z.unknown()), schemaHash: z.string(), maxRepairs: z.number().int() })
        .optional()
        .openapi({
          description: "the agent's output schema (JSON Schema) the run's answer must fit, and how many invalid answers are fed back before it fails",
        }),
    })
    .optional(),
  budgets: RunBudgetsSchema.optional(),
  result: JsonSchema.optional().openapi({ description: 'the answer of a completed run (inline or a blob reference)' }),
  output: JsonSchema.optional().openapi({
    description: "a completed run's structured output: the parsed answer, as JSON, when its agent has an output schema",
  }),
  failure: z.object({ code: z.string(), message: z.string() }).optional(),
  attention: z.array(AttentionSchema),
  unresolved: z.array(z.string()).optional().openapi({
    description:
      'for a cancelled run: the calls it ended with no known outcome (a verify or escalate write that may have landed); check them by hand, nothing in the run answers them any more',
  }),
  /** Approvals, signals and timers the run waits on (control-schemas.ts). */
  waiting: z.array(WaitViewSchema).optional(),
  forkedFrom: z.object({ runId: z.string(), seq: z.number() }).optional(),
  children: z
    .array(ChildRunSchema)
    .optional()
    .openapi({ description: 'child runs this run started (newest first, at most 100; GET /runs?parent= pages through all)' }),
  park: z.object({ reason: z.string(), detail: z.string() }).optional(),
}).openapi('Run');
export type RunView = z.infer<typeof RunViewSchema>;
export type RunSummary = z.infer<typeof RunSummarySchema>;

export const RunListSchema = z.object({ runs: z.array(RunSummarySchema), cursor: z.string().optional() }).openapi('RunList');

const count = z.number().int().nonnegative();

/** Every status with its count: a client sums them for "all" and never misses a status it did not know. */
export const RunCountsSchema = z
  .object({
    counts: z.object({
      running: count,
      waiting: count,
      awaiting_approval: count,
      parked: count,
      completed: count,
      failed: count,
      cancelled: count,
    }),
    total: count.openapi({ description: 'the sum of `counts`: every run of the caller' }),
  })
  .openapi('RunCounts');
export type RunCounts = z.infer<typeof RunCountsSchema>;

export const EventPageSchema = z
  .object({
    runId: z.string(),
    events: z.array(z.record(z.string(), z.unknown())),
    next: z.number().optional().openapi({ description: 'pass as `after` for the next page' }),
  })
  .openapi('EventPage');

export const ListQuerySchema = z.object({
  status: RunStatusSchema.optional(),
  parent: RunIdSchema.optional().openapi({ description: 'only the child runs of this run (same tenant)' }),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(2048).optional(),
});

/** API Gateway gives up on an integration after 30 s: a long poll must answer well before. */
export const MAX_WAIT_SECONDS = 20;

export const EventsQuerySchema = z.object({
  after: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  waitSeconds: z.coerce
    .number()
    .int()
    .min(0)
    .max(MAX_WAIT_SECONDS)
    .default(0)
    .openapi({
      description: `long poll: when no event after \`after\` exists yet, wait up to this many seconds (at most ${MAX_WAIT_SECONDS}) for one, then answer an empty page`,
    }),
});

export const BlobContentSchema = z.unknown().openapi({ description: 'the payload as stored, byte for byte: its sha256 is the one in the path' });

/** A payload offloaded to the blob store, named by the sha256 its reference carries. */
export const BlobParamsSchema = z.object({
  runId: RunIdSchema.openapi({ param: { name: 'runId', in: 'path' } }),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'a sha256 is 64 lowercase hex digits')
    .openapi({ param: { name: 'sha256', in: 'path' } }),
});

export const RunParamsSchema = z.object({
  runId: RunIdSchema.openapi({ param: { name: 'runId', in: 'path' } }),
});

export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    }),
  })
  .openapi('Error');
