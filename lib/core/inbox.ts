import { z } from 'zod';
import { bodySchema } from './body.js';

/**
 * Inbox items: how everyone but the lease holder talks to a run (API, EventBridge trigger,
 * sweeper, people). Only the lease holder turns them into events, each exactly once: the event
 * carries the inbox id and fold remembers which ids it has seen.
 */
export const inboxItemSchema = z.discriminatedUnion('kind', [
  z.object({ id: z.string().min(1), kind: z.literal('cancel'), by: z.string(), reason: z.string().optional() }),
  z.object({
    id: z.string().min(1),
    kind: z.literal('resolve'),
    by: z.string(),
    callId: z.string(),
    outcome: z.enum(['succeeded', 'failed', 'rerun']),
    result: z.json().optional(),
  }),
  z.object({ id: z.string().min(1), kind: z.literal('run_action'), by: z.string(), action: z.enum(['retry', 'fail']) }),
  /** A person's answer to an approval_requested (id `approval-<callId>`: one decision per call). */
  z.object({
    id: z.string().min(1),
    kind: z.literal('approval'),
    by: z.string(),
    callId: z.string(),
    decision: z.enum(['approve', 'reject', 'edit']),
    /** For edit: the arguments that replace the model's (validated against the pinned schema). */
    args: z.json().optional(),
    /** The hash of the arguments the person saw; a decision about other arguments is ignored. */
    argsHash: z.string().optional(),
    comment: z.string().optional(),
  }),
  /**
   * Completes a waiting call from outside (id `<via>-<callId>`: once per call): a signal, or the
   * end of a child run (`via: 'child'`, put by the child's last step into its parent's inbox).
   */
  z.object({
    id: z.string().min(1),
    kind: z.literal('complete_call'),
    by: z.string(),
    callId: z.string(),
    via: z.enum(['signal', 'child']),
    /** For a signal: its name. */
    signal: z.string().optional(),
    /** For a child: its run id (a completion from another run is ignored). */
    childRunId: z.string().optional(),
    /** For a child: what it spent. */
    usage: z
      .object({ inputTokens: z.number().int().nonnegative(), outputTokens: z.number().int().nonnegative(), costUsd: z.number().nonnegative() })
      .optional(),
    ok: z.boolean(),
    output: z.json(),
    /**
     * For a child's large answer: the body already offloaded under the parent's blob prefix (the
     * item stays far below DynamoDB's item limit); `output` is then null.
     */
    body: bodySchema.optional(),
  }),
  /** A follow-up user message for the run's next model call. */
  z.object({ id: z.string().min(1), kind: z.literal('message'), by: z.string(), input: z.json() }),
]);
export type InboxItem = z.infer<typeof inboxItemSchema>;
export type InboxItemDraft = InboxItem extends infer I ? (I extends InboxItem ? Omit<I, 'id'> : never) : never;
