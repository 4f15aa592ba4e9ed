import { z } from 'zod';
import { bodySchema } from './body.js';
import { CorruptLogError } from './errors.js';
import { zodIssuesText } from './zod-issues.js';
import { approvalDecidedSchema, approvalRequestedSchema, callWaitSchema, pinnedWaitSchema, userMessageSchema } from './control-events.js';
import { EVENT_SCHEMA_VERSION, eventBase as base, policySchema } from './event-base.js';
import { pinnedContextSchema } from './context-events.js';
import { modelSettingsSchema } from './model-settings.js';
import { pinnedWorkflowSchema, workflowEventSchemas } from './workflow-events.js';

export { EVENT_SCHEMA_VERSION, policySchema, writerSchema, type Policy, type Writer } from './event-base.js';
export * from './control-events.js';
export * from './workflow-events.js';

export const budgetsSchema = z.object({
  maxSteps: z.number().int().positive(),
  maxInputTokens: z.number().int().positive(),
  maxOutputTokens: z.number().int().positive(),
  maxCostUsd: z.number().positive(),
  /** Absolute deadline, epoch milliseconds. */
  deadlineAt: z.number().int().positive(),
});
export type Budgets = z.infer<typeof budgetsSchema>;

export const priceSchema = z.object({
  inputPerMTokUsd: z.number().nonnegative(),
  outputPerMTokUsd: z.number().nonnegative(),
});
export type Price = z.infer<typeof priceSchema>;

export const pinnedToolSchema = z.object({
  name: z.string().min(1),
  version: z.string().min(1),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
  /** sha256 of the canonical {name, inputSchema} (+ wait): the contract an implementation must match. */
  schemaHash: z.string().regex(/^[0-9a-f]{64}$/),
  policy: policySchema,
  timeoutMs: z.number().int().positive(),
  /** A person approves each call before it runs: always, or when the tool's predicate says so. */
  approval: z.enum(['always', 'conditional']).optional(),
  /** An approval not given within this time rejects the call. */
  approvalTimeoutMs: z.number().int().positive().optional(),
  wait: pinnedWaitSchema.optional(),
});
export type PinnedTool = z.infer<typeof pinnedToolSchema>;

/**
 * An agent's structured output as pinned at run start: the JSON Schema the model is asked for,
 * its hash (the contract the agent's zod schema must match to validate this run's answers), and
 * how many invalid answers are fed back to the model before the run fails with output_invalid.
 */
export const pinnedOutputSchema = z.object({
  schema: z.record(z.string(), z.unknown()),
  schemaHash: z.string().regex(/^[0-9a-f]{64}$/),
  maxRepairs: z.number().int().nonnegative(),
});
export type PinnedOutput = z.infer<typeof pinnedOutputSchema>;

const usageSchema = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
});

export const runStartedSchema = z
  .object({
    ...base,
    type: z.literal('run_started'),
    tenant: z.string().min(1),
    runId: z.string().min(1),
    /** sha256 of the canonical create request: the same id with another request is a conflict. */
    requestHash: z.string(),
    /** The definition this run runs: an agent, or (with `workflow`) a workflow, by name and version. */
    agent: z.object({ name: z.string(), version: z.string() }),
    /**
     * Present on a workflow run (defineWorkflow): what it pins besides its name and version. A
     * workflow calls no model itself, so it pins no model, prompt or tools (its child agents do).
     */
    workflow: pinnedWorkflowSchema.optional(),
    /** An agent run's model (absent on a workflow run). */
    model: z
      .object({
        id: z.string(),
        maxOutputTokens: z.number().int().positive(),
        price: priceSchema,
        /** The agent's sampling settings, as every call of this run sends them (absent: the provider's defaults). */
        settings: modelSettingsSchema.optional(),
      })
      .optional(),
    /**
     * The system prompt as the model reads it (absent on a workflow run). `resolved` marks text an instructions function built
     * from the run's input when the run started: it is never built again (resume, fork, replay).
     */
    prompt: z.object({ version: z.string(), text: bodySchema, sha256: z.string(), resolved: z.literal(true).optional() }).optional(),
    tools: z.array(pinnedToolSchema),
    input: bodySchema,
    /** The JSON Schema the input was validated against when the run started, and its hash (agents with `input`). */
    inputSchema: z.object({ jsonSchema: z.record(z.string(), z.unknown()), sha256: z.string().regex(/^[0-9a-f]{64}$/) }).optional(),
    budgets: budgetsSchema,
    /** How long the engine waits past a call's notAfter before applying its policy. */
    graceMs: z.number().int().nonnegative(),
    /** Retention horizon for events and blobs of this run (epoch ms), set at creation. */
    expiresAt: z.number().int().positive(),
    /** Set on a fork: the source run and the seq up to which its events were copied. */
    forkedFrom: z.object({ runId: z.string().min(1), seq: z.number().int().positive() }).optional(),
    /** Set on a child run (agentTool): the parent run and the call that started it. */
    parent: z.object({ runId: z.string().min(1), callId: z.string().min(1) }).optional(),
    /** Set when the agent has an output schema: the answer must be JSON that fits it (output.ts). */
    output: pinnedOutputSchema.optional(),
    /** The agent's context policy (core/context-policy.ts); absent: every turn goes to the model. */
    context: pinnedContextSchema.optional(),
  })
  .refine((e) => e.workflow !== undefined || (e.model !== undefined && e.prompt !== undefined), {
    message: 'an agent run pins its model and prompt',
    path: ['model'],
  });

type RunStartedEvent = z.infer<typeof runStartedSchema>;
/** What an agent run pins beyond any run: its model and prompt. */
export interface AgentPins {
  model: NonNullable<RunStartedEvent['model']>;
  prompt: NonNullable<RunStartedEvent['prompt']>;
}

/** An agent run's model and prompt; a workflow run has none, and agent code never reaches one. */
export function agentPins(started: RunStartedEvent): AgentPins {
  if (!started.model || !started.prompt) throw new CorruptLogError(`run ${started.runId} is a workflow run: it pins no model or prompt`, started.seq);
  return { model: started.model, prompt: started.prompt };
}

/** Whether a run_started is a workflow's (defineWorkflow) rather than an agent's. */
export function isWorkflowStart(started: Pick<RunStartedEvent, 'workflow'>): boolean {
  return started.workflow !== undefined;
}

/** What a model call reserves before it is made: the fields of model_started, also carried by a tool_result. */
export const modelReservationSchema = z.object({
  step: z.number().int().positive(),
  maxOutputTokens: z.number().int().positive(),
  /** Upper bound charged to the budgets now; replaced by actual usage when a response lands. */
  reserved: z.object({ inputTokens: z.number().int().nonnegative(), outputTokens: z.number().int(), costUsd: z.number() }),
});
export type ModelReservation = z.infer<typeof modelReservationSchema>;

/** What a model call is for, when it is not the conversation's next turn. */
export const modelPurposeSchema = z.literal('summary');

export const modelStartedSchema = z.object({
  ...base,
  type: z.literal('model_started'),
  ...modelReservationSchema.shape,
  /**
   * `summary`: a call that folds the older turns into the run's context summary (context policy),
   * not a turn of the conversation; `covers` says which turns the new summary replaces (1..turns).
   */
  purpose: modelPurposeSchema.optional(),
  covers: z.object({ turns: z.number().int().positive() }).optional(),
});

export const loggedCallSchema = z.object({
  callId: z.string().regex(/^\d+-\d+$/),
  providerId: z.string(),
  name: z.string(),
  args: bodySchema,
  /** Set when the provider sent arguments that are not valid JSON, or nest too deep to record (then args are not recorded). */
  argsError: z.string().optional(),
});

export const modelResponseSchema = z.object({
  ...base,
  type: z.literal('model_response'),
  text: bodySchema.nullable(),
  calls: z.array(loggedCallSchema),
  usage: usageSchema,
  costUsd: z.number().nonnegative(),
  stopReason: z.string(),
  /**
   * Under an output schema, for a response that asks for no tools: the parsed answer when it fits
   * (`output`), or why it does not (`outputError`, fed back to the model as a repair). Checked
   * before the response is written, so a resumed run never checks it again.
   */
  output: bodySchema.optional(),
  outputError: z.string().optional(),
  /** Set on the answer to a `summary` model_started: its text is the new context summary. */
  purpose: modelPurposeSchema.optional(),
});

export const modelFailedSchema = z.object({
  ...base,
  type: z.literal('model_failed'),
  code: z.string(),
  message: z.string(),
  retryable: z.boolean(),
});

export const toolStartedSchema = z.object({
  ...base,
  type: z.literal('tool_started'),
  callId: z.string(),
  attempt: z.number().int().positive(),
  /** start + the tool's timeout: no policy is applied to this call before notAfter + grace. */
  notAfter: z.number().int().positive(),
  /** Present for a durable wait: the call is completed by a signal or a timer, not by code. */
  wait: callWaitSchema.optional(),
});

export const toolResultSchema = z.object({
  ...base,
  type: z.literal('tool_result'),
  callId: z.string(),
  ok: z.boolean(),
  output: bodySchema,
  /** Who produced it: the tool, its verify(), a person, input validation, the cancel path, a timeout, a signal or a timer. */
  source: z.enum(['tool', 'verify', 'human', 'validation', 'cancel', 'timeout', 'signal', 'timer', 'child']),
  errorCode: z.string().optional(),
  /** The inbox item this result came from (a signal): each item is ingested once. */
  inboxId: z.string().optional(),
  /** Who sent it, for results that came through the inbox. */
  sentBy: z.string().optional(),
  /** For a child run's answer: what the child really spent (replaces the reservation, never above it). */
  childUsage: z
    .object({ inputTokens: z.number().int().nonnegative(), outputTokens: z.number().int().nonnegative(), costUsd: z.number().nonnegative() })
    .optional(),
  /**
   * The next model call's reservation, carried by the result that resolves the turn's last open
   * call (one write fewer per turn). Folds exactly as this tool_result followed by a model_started
   * with these fields: charged at once, and spent if no model_response follows.
   */
  reservation: modelReservationSchema.optional(),
});

export const toolVerifiedSchema = z.object({
  ...base,
  type: z.literal('tool_verified'),
  callId: z.string(),
  status: z.enum(['landed', 'not_landed', 'unknown']),
});

export const attentionReasonSchema = z.enum([
  'unknown_outcome',
  'missing_tool_version',
  'missing_model',
  'model_stalled',
  'tool_attempts_exhausted',
  'call_does_not_fit',
  /** A workflow's code asked for another operation than its log holds at that position (workflow-replay.ts). */
  'workflow_nondeterministic',
  /** The workflow version a run pinned is not registered in this deployment. */
  'missing_workflow_version',
]);
export type AttentionReason = z.infer<typeof attentionReasonSchema>;

export const attentionRequiredSchema = z.object({
  ...base,
  type: z.literal('attention_required'),
  reason: attentionReasonSchema,
  /** Present for a call-level attention; absent for a run-level park. */
  callId: z.string().optional(),
  detail: z.string(),
});

export const resolutionOutcomeSchema = z.enum(['succeeded', 'failed', 'rerun', 'retry', 'fail']);
export type ResolutionOutcome = z.infer<typeof resolutionOutcomeSchema>;

export const attentionResolvedSchema = z.object({
  ...base,
  type: z.literal('attention_resolved'),
  /** seq of the attention_required this answers. */
  attentionSeq: z.number().int().positive(),
  callId: z.string().optional(),
  outcome: resolutionOutcomeSchema,
  result: bodySchema.optional(),
  resolvedBy: z.string(),
  inboxId: z.string(),
});

export const cancelRequestedSchema = z.object({
  ...base,
  type: z.literal('cancel_requested'),
  requestedBy: z.string(),
  inboxId: z.string(),
  reason: z.string().optional(),
});

export const runCompletedSchema = z.object({
  ...base,
  type: z.literal('run_completed'),
  answer: bodySchema,
  /** The parsed structured output (JSON), when the agent has an output schema. */
  output: bodySchema.optional(),
});

export const runFailedSchema = z.object({
  ...base,
  type: z.literal('run_failed'),
  code: z.string(),
  message: z.string(),
  inboxId: z.string().optional(),
});

export const runCancelledSchema = z.object({
  ...base,
  type: z.literal('run_cancelled'),
  unresolved: z.array(z.string()),
});

export const eventSchema = z.discriminatedUnion('type', [
  runStartedSchema,
  modelStartedSchema,
  modelResponseSchema,
  modelFailedSchema,
  toolStartedSchema,
  toolResultSchema,
  toolVerifiedSchema,
  attentionRequiredSchema,
  attentionResolvedSchema,
  cancelRequestedSchema,
  runCompletedSchema,
  runFailedSchema,
  runCancelledSchema,
  approvalRequestedSchema,
  approvalDecidedSchema,
  userMessageSchema,
  ...workflowEventSchemas,
]);

export type RunEvent = z.infer<typeof eventSchema>;
export type EventType = RunEvent['type'];
export type EventOf<T extends EventType> = Extract<RunEvent, { type: T }>;
/** An event before the writer assigns seq, time and writer identity. */
export type EventDraft = RunEvent extends infer E ? (E extends RunEvent ? Omit<E, 'v' | 'seq' | 'at' | 'by'> : never) : never;

/**
 * The model reservation an event records, whether as its own model_started or carried by the
 * tool_result before it: what counts a run's model calls (steps) must read both.
 */
export function reservationOf(event: { type: string; step?: unknown; reservation?: unknown }): ModelReservation | undefined {
  if (event.type === 'model_started') return event as unknown as ModelReservation;
  if (event.type === 'tool_result' && event.reservation) return event.reservation as ModelReservation;
  return undefined;
}

export const TERMINAL_EVENTS: ReadonlySet<EventType> = new Set(['run_completed', 'run_failed', 'run_cancelled']);

/**
 * Upcasters from older schema versions, keyed by the version they read. Version 1 is the first;
 * the table exists so that a v2 can be added without touching fold.
 */
const upcasters: Record<number, (raw: Record<string, unknown>) => Record<string, unknown>> = {};

/** Validate one event read back from storage, upcasting older versions. */
export function parseEvent(raw: unknown): RunEvent {
  let candidate = raw;
  if (candidate !== null && typeof candidate === 'object') {
    let record = candidate as Record<string, unknown>;
    let version = typeof record.v === 'number' ? record.v : EVENT_SCHEMA_VERSION;
    while (version < EVENT_SCHEMA_VERSION) {
      const up = upcasters[version];
      if (!up) break;
      record = up(record);
      version += 1;
    }
    candidate = record;
  }
  const parsed = eventSchema.safeParse(candidate);
  if (!parsed.success) {
    const seq = (raw as { seq?: unknown } | null)?.seq;
    // The first problem is enough to find the event; the count says how broken it is.
    const where = zodIssuesText(parsed.error, { max: 1 }) || 'invalid';
    throw new CorruptLogError(`event fails validation at ${where}`, typeof seq === 'number' ? seq : undefined);
  }
  return parsed.data;
}
