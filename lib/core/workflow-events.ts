import { z } from 'zod';
import { bodySchema } from './body.js';
import { childReservationSchema } from './control-events.js';
import { eventBase as base, policySchema } from './event-base.js';

/**
 * The events of a workflow run (defineWorkflow). A workflow's `run(ctx, input)` is re-run from the
 * top at every step over what these events recorded; each `ctx` call is operation n of the run
 * (1 for the first it asks for, in the order it asks), and every event of an operation names n, its
 * kind and its name, so a replay that asks for something else at n is caught (workflow-replay.ts).
 *
 * The shapes follow a tool call's: `op_started` (the started marker) before a step's function runs
 * and `op_result` after; a step whose policy is `rerun` skips the marker (one write per step); a
 * wait (sleep, signal, child run, approval) is started and completed from outside like a durable
 * wait; a recorded value (now, random, uuid) is a single `op_result`.
 */

export const OP_KINDS = ['step', 'sleep', 'signal', 'child', 'approval', 'now', 'random', 'uuid'] as const;
export const opKindSchema = z.enum(OP_KINDS);
export type OpKind = z.infer<typeof opKindSchema>;

/** Operation numbers start at 1; the call id an operation goes by in attention, the inbox and the API. */
const OP_CALL_ID = /^op-([1-9]\d{0,8})$/;
export function opCallId(op: number): string {
  return `op-${op}`;
}
/** The operation a call id names, or undefined for an agent's call id (`<seq>-<index>`). */
export function opOfCallId(callId: string): number | undefined {
  const m = OP_CALL_ID.exec(callId);
  return m ? Number(m[1]) : undefined;
}

/** Signal names, as POST /runs/{id}/signals takes them. */
export const SIGNAL_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;

const opRef = {
  op: z.number().int().positive(),
  kind: opKindSchema,
  /** The step's name, the signal's, the child's definition; the kind itself for sleeps and values. */
  name: z.string().min(1).max(256),
};

const sha256 = z.string().regex(/^[0-9a-f]{64}$/);

/** What a started operation waits for instead of running code: it completes from outside. */
export const opWaitSchema = z.discriminatedUnion('kind', [
  /** ctx.sleep / sleepUntil: completes at `until` (the sweeper or a delayed tick wakes the run). */
  z.object({ kind: z.literal('timer'), until: z.number().int().positive() }),
  /** ctx.waitForSignal: POST /runs/{id}/signals with a payload valid against `payloadSchema`, or a timeout at `until`. */
  z.object({
    kind: z.literal('signal'),
    signal: z.string().regex(SIGNAL_NAME),
    until: z.number().int().positive(),
    payloadSchema: z.record(z.string(), z.unknown()),
  }),
  /**
   * ctx.agent / ctx.workflow: a child run whose id, definition and budgets are fixed here, so a
   * resumed parent re-issues exactly the same create (idempotent on the id and request hash).
   */
  z.object({
    kind: z.literal('child'),
    runId: z.string().min(1),
    definition: z.object({ kind: z.enum(['agent', 'workflow']), name: z.string().min(1), version: z.string().min(1) }),
    /** The child's input as the code gave it: a re-issued create sends exactly this. */
    input: bodySchema,
    until: z.number().int().positive(),
    reserved: childReservationSchema,
    maxSteps: z.number().int().positive(),
    deadlineAt: z.number().int().positive(),
  }),
  /**
   * ctx.approval: a person approves, rejects or edits `args` (bound by their hash: a decision about
   * other arguments is refused); an edit must fit `argsSchema`. Unanswered by `until`, it expires.
   */
  z.object({
    kind: z.literal('approval'),
    argsHash: sha256,
    args: bodySchema,
    argsSchema: z.record(z.string(), z.unknown()).optional(),
    until: z.number().int().positive().optional(),
  }),
]);
export type OpWait = z.infer<typeof opWaitSchema>;

export const opStartedSchema = z.object({
  ...base,
  type: z.literal('op_started'),
  ...opRef,
  attempt: z.number().int().positive(),
  /** A step: start + its timeout (no policy applies before notAfter + grace). A wait: when it ends. */
  notAfter: z.number().int().positive(),
  /** A step's policy for "started, no result" (as a tool's). */
  policy: policySchema.optional(),
  wait: opWaitSchema.optional(),
});

export const OP_RESULT_SOURCES = ['step', 'verify', 'human', 'timer', 'signal', 'timeout', 'child', 'value', 'cancel', 'validation'] as const;

export const opResultSchema = z.object({
  ...base,
  type: z.literal('op_result'),
  ...opRef,
  ok: z.boolean(),
  /** A step's JSON result (or its error {error, message}), a signal's payload, a child's output, a value. */
  output: bodySchema,
  source: z.enum(OP_RESULT_SOURCES),
  errorCode: z.string().optional(),
  /** The step attempt that produced it (a rerun step's result is its first event). */
  attempt: z.number().int().positive().optional(),
  /** The step's function returned undefined: replay returns undefined, not the recorded null. */
  void: z.literal(true).optional(),
  inboxId: z.string().optional(),
  sentBy: z.string().optional(),
  /** A child run's answer: what it really spent (replaces the reservation, never above it). */
  childUsage: z
    .object({ inputTokens: z.number().int().nonnegative(), outputTokens: z.number().int().nonnegative(), costUsd: z.number().nonnegative() })
    .optional(),
});

/** A step attempt threw a retryable error: recorded, and the next attempt starts at `retryAt`. */
export const opRetrySchema = z.object({
  ...base,
  type: z.literal('op_retry'),
  ...opRef,
  attempt: z.number().int().positive(),
  error: z.object({ code: z.string(), message: z.string() }),
  retryAt: z.number().int().nonnegative(),
});

/** What a verify-policy step's verify() saw for its current attempt. */
export const opVerifiedSchema = z.object({
  ...base,
  type: z.literal('op_verified'),
  ...opRef,
  status: z.enum(['landed', 'not_landed', 'unknown']),
});

export const workflowEventSchemas = [opStartedSchema, opResultSchema, opRetrySchema, opVerifiedSchema] as const;

/** The workflow a run runs, as run_started pins it (kind: 'workflow'). */
export const pinnedWorkflowSchema = z.object({
  /** The output's JSON Schema and its hash, when the workflow declares one. */
  output: z.object({ schema: z.record(z.string(), z.unknown()), schemaHash: sha256 }).optional(),
});
