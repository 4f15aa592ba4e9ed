import { z } from 'zod';

/**
 * A run's status as its head shows it (the API's `RunStatus`, the listings by status): one closed
 * set. The fold's own status (RunStatusState, lib/core/state.ts) is the part of it the log alone
 * decides; `waiting` and `awaiting_approval` come from the open waits (head-projection.ts).
 */
export const runStatusSchema = z.enum(['running', 'waiting', 'awaiting_approval', 'parked', 'completed', 'failed', 'cancelled']);
export type RunStatus = z.infer<typeof runStatusSchema>;
