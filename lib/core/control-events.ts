import { z } from 'zod';
import { bodySchema } from './body.js';
import { eventBase as base } from './event-base.js';

/**
 * The control events and the schemas they share with run_started and tool_started: durable
 * waits (signals, timers), approvals before a tool runs, and follow-up messages. events.ts puts
 * them in the one discriminated union.
 */

/**
 * A tool that waits for the outside world instead of running code: `signal` completes when
 * POST /runs/{id}/signals delivers a payload valid against `payloadSchema` (or times out),
 * `timer` (sleep) completes when its time has passed. Pinned, so a waiting run keeps its contract.
 */
export const pinnedWaitSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('signal'),
    signal: z.string().min(1),
    payloadSchema: z.record(z.string(), z.unknown()),
    timeoutMs: z.number().int().positive(),
  }),
  z.object({ kind: z.literal('timer'), maxMs: z.number().int().positive() }),
  /**
   * An agent used as a tool (agentTool): a call starts a child run of exactly this agent version,
   * so a deploy that changes the child agent changes the schema hash, and a pinned run parks for
   * the missing version instead of calling another child.
   */
  z.object({
    kind: z.literal('child'),
    agent: z.object({ name: z.string().min(1), version: z.string().min(1) }),
    /** The child's budgets as configured on the agentTool (each capped by what the parent has left). */
    budgets: z
      .object({
        maxSteps: z.number().int().positive().optional(),
        maxInputTokens: z.number().int().positive().optional(),
        maxOutputTokens: z.number().int().positive().optional(),
        maxCostUsd: z.number().positive().optional(),
        deadlineSeconds: z.number().int().positive().optional(),
      })
      .strict(),
  }),
]);
export type PinnedWait = z.infer<typeof pinnedWaitSchema>;

/** What a child run may spend: reserved on the parent when the call starts (counted as spent). */
export const childReservationSchema = z.object({
  inputTokens: z.number().int().positive(),
  outputTokens: z.number().int().positive(),
  costUsd: z.number().positive(),
});
export type ChildReservation = z.infer<typeof childReservationSchema>;

/**
 * A started call that completes later from outside, holding no Lambda: a signal delivered through
 * the inbox, a timer the sweeper fires at `until`, or a child run whose end reaches the parent's
 * inbox. A child wait records the child's run id and the exact budgets it was started with, so a
 * resumed parent re-issues the very same create (idempotent: same id, same request hash).
 */
export const callWaitSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('signal'), signal: z.string().min(1), until: z.number().int().positive() }),
  z.object({ kind: z.literal('timer'), until: z.number().int().positive() }),
  z.object({
    kind: z.literal('child'),
    runId: z.string().min(1),
    until: z.number().int().positive(),
    /** Reserved on the parent at the start; the child's real usage replaces it when it answers. */
    reserved: childReservationSchema,
    /** The child's steps and deadline (its tokens and cost are `reserved`). */
    maxSteps: z.number().int().positive(),
    deadlineAt: z.number().int().positive(),
  }),
]);
export type CallWait = z.infer<typeof callWaitSchema>;

const sha256Schema = z.string().regex(/^[0-9a-f]{64}$/);

/** The call waits for a person before it may start; written before any tool_started of it. */
export const approvalRequestedSchema = z.object({
  ...base,
  type: z.literal('approval_requested'),
  callId: z.string(),
  /** sha256 of the canonical arguments as logged: the approval is bound to exactly these. */
  argsHash: sha256Schema,
  /** When an unanswered request rejects the call (epoch ms). */
  expiresAt: z.number().int().positive().optional(),
});

export const approvalDecisionSchema = z.enum(['approve', 'reject', 'edit', 'expire']);
export type ApprovalDecision = z.infer<typeof approvalDecisionSchema>;

/**
 * The answer to an approval_requested. approve/edit bind the call to `argsHash` (for edit, of the
 * new `args`, which replace the model's); reject/expire settle the call as an error result.
 */
export const approvalDecidedSchema = z.object({
  ...base,
  type: z.literal('approval_decided'),
  callId: z.string(),
  decision: approvalDecisionSchema,
  argsHash: sha256Schema,
  args: bodySchema.optional(),
  comment: z.string().optional(),
  decidedBy: z.string(),
  /** Absent for an expiry (the lease holder decided it at expiresAt). */
  inboxId: z.string().optional(),
});

/** A follow-up user message: delivered at the run's next model call, reopening a completed run. */
export const userMessageSchema = z.object({
  ...base,
  type: z.literal('user_message'),
  input: bodySchema,
  sentBy: z.string(),
  inboxId: z.string(),
});
