import { z } from 'zod';

/** Version of the event schema written today. Older versions are upcast on read. */
export const EVENT_SCHEMA_VERSION = 1;

export const writerSchema = z.object({ epoch: z.number().int().nonnegative(), nonce: z.string().min(1) });
export type Writer = z.infer<typeof writerSchema>;

/**
 * What to do with a started call (a tool's, or a workflow step's) that has no result: one closed
 * set, written by pinnedToolSchema and op_started, decided by decideStarted (lib/core/decide.ts).
 */
export const policySchema = z.enum(['rerun', 'idempotency_key', 'verify', 'escalate']);
export type Policy = z.infer<typeof policySchema>;

/** The fields every event carries. */
export const eventBase = {
  v: z.literal(EVENT_SCHEMA_VERSION),
  seq: z.number().int().positive(),
  /** Epoch ms from the writer's clock; informational, never used for ordering. */
  at: z.number().int().nonnegative(),
  by: writerSchema,
};
