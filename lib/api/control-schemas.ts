import { z } from '@hono/zod-openapi';

/**
 * Schemas of the control routes: approvals, signals, follow-up messages, forks. Kept beside
 * schemas.ts (which imports WaitViewSchema for the run view) so the two evolve separately.
 */

/** An agent's call (`<seq>-<index>`) or a workflow's operation (`op-<n>`). */
export const CALL_ID = /^(\d+-\d+|op-[1-9]\d{0,8})$/;
export const CALL_ID_MESSAGE = "call ids look like <seq>-<index> (an agent's call) or op-<n> (a workflow's operation)";

const CallIdSchema = z.string().regex(CALL_ID, CALL_ID_MESSAGE).openapi({ example: '9-0' });
const JsonSchema = z.unknown().openapi({ description: 'any JSON value' });

export const WaitViewSchema = z
  .object({
    callId: z.string(),
    tool: z.string(),
    kind: z.enum(['approval', 'signal', 'timer', 'child']),
    seq: z.number(),
    signal: z.string().optional().openapi({ description: 'for a signal: the name POST /signals must give' }),
    childRunId: z.string().optional().openapi({ description: 'for a child run (agentTool): its run id, same tenant' }),
    childStatus: z.string().optional().openapi({ description: 'for a child run: its status now (e.g. awaiting_approval when it waits for a person)' }),
    until: z.string().optional().openapi({ description: 'ISO time the wait ends (timeout, timer, approval expiry)' }),
    argsHash: z.string().optional().openapi({ description: 'for an approval: sha256 of the arguments asked about' }),
    args: JsonSchema.optional().openapi({ description: 'for an approval: the arguments asked about (inline, or a blob reference)' }),
  })
  .openapi('Wait');

export const ApproveBodySchema = z
  .object({
    callId: CallIdSchema,
    decision: z.enum(['approve', 'reject', 'edit']),
    args: z
      .record(z.string(), z.unknown())
      .optional()
      .openapi({ description: "for edit: the arguments that replace the model's, validated against the pinned schema" }),
    argsHash: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'a sha256 in hex')
      .optional()
      .openapi({ description: 'the argsHash you looked at: refused (409) if the call asks about other arguments' }),
    comment: z.string().max(2000).optional().openapi({ description: 'kept in the log; for a rejection, also what the model sees' }),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (body.decision === 'edit' && body.args === undefined) ctx.addIssue({ code: 'custom', path: ['args'], message: 'required when decision is edit' });
    if (body.decision !== 'edit' && body.args !== undefined) ctx.addIssue({ code: 'custom', path: ['args'], message: 'only an edit takes args' });
  })
  .openapi('ApproveRequest');
export type ApproveBody = z.infer<typeof ApproveBodySchema>;

export const SignalBodySchema = z
  .object({
    signal: z.string().regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'signal names match [A-Za-z0-9_.:-]{1,64}'),
    payload: JsonSchema.openapi({
      description: "validated against the waiting tool's payload schema, or the JSON Schema a workflow's waitForSignal operation pinned",
    }),
  })
  .strict()
  .openapi('SignalRequest');
export type SignalBody = z.infer<typeof SignalBodySchema>;

export const MessageBodySchema = z
  .object({
    input: z.union([z.string().min(1), z.record(z.string(), z.unknown()), z.array(z.unknown())]).openapi({
      description: 'the follow-up: text, or a JSON object or array',
      example: 'Thanks! Can you also send me the invoice?',
    }),
    messageId: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,80}$/, 'message ids match [A-Za-z0-9_-]{1,80}')
      .optional()
      .openapi({ description: 'makes a retry harmless: the same id is delivered once' }),
  })
  .strict()
  .openapi('MessageRequest');
export type MessageBody = z.infer<typeof MessageBodySchema>;

export const ForkBodySchema = z
  .object({
    atSeq: z.number().int().positive().openapi({
      description:
        "an agent run: a turn boundary (1, or a seq after which every call of the turn has its result); a workflow run: 1, or a seq where every operation has its result (an operation's seq - 1 forks before it)",
    }),
    runId: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,80}$/, 'run ids match [A-Za-z0-9_-]{1,80}')
      .optional()
      .openapi({ description: "the fork's id: creating it again is a no-op" }),
    input: z
      .union([z.string().min(1), z.record(z.string(), z.unknown()), z.array(z.unknown())])
      .optional()
      .openapi({ description: "replaces the last user message (a workflow run's input, at seq 1 only)" }),
    version: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .openapi({ description: 're-pin this version of the agent (every copied call must fit its schemas) or of the workflow' }),
  })
  .strict()
  .openapi('ForkRequest');
export type ForkBody = z.infer<typeof ForkBodySchema>;

export const AcceptedCallSchema = z
  .object({ runId: z.string(), accepted: z.literal(true), inboxId: z.string(), callId: z.string().optional() })
  .openapi('AcceptedControl');

export const ForkResponseSchema = z
  .object({
    runId: z.string(),
    status: z.string(),
    created: z.boolean(),
    forkedFrom: z.object({ runId: z.string(), seq: z.number() }),
  })
  .openapi('ForkResponse');
