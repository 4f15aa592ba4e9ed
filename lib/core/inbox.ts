import { z } from 'zod';

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
]);
export type InboxItem = z.infer<typeof inboxItemSchema>;
export type InboxItemDraft = InboxItem extends infer I ? (I extends InboxItem ? Omit<I, 'id'> : never) : never;
