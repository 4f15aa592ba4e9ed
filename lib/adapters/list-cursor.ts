import { z } from 'zod';
import { ValidationError } from '../core/errors.js';
import type { RunHead, RunStatus } from '../ports/run-heads.js';
import { RUN_ID_PATTERN } from '../core/run-ref.js';

/**
 * The `cursor` of a run listing: an opaque token naming where the last page ended, the position
 * of its last run in the listing order (createdAt, newest first; then runId). It carries no key,
 * no tenant and no index: the store rebuilds the start key from the caller's own tenant and the
 * listing asked for, so a forged cursor can at most move within the caller's own list. Its shape
 * is validated strictly (it is client input) and it must come from a listing with the same status
 * and parent filters; anything else is a ValidationError, never a store error.
 */
export interface ListPosition {
  createdAt: number;
  runId: string;
}

/** Largest createdAt a listing can order (tenantSk inverts it in 13 digits). */
export const MAX_LIST_TIME = 9_999_999_999_999;

const STATUSES = ['running', 'waiting', 'awaiting_approval', 'parked', 'completed', 'failed', 'cancelled'] as const satisfies readonly RunStatus[];

const CursorSchema = z
  .object({
    v: z.literal(1),
    /** The status filter of the listing the cursor came from; null for all runs. */
    s: z.enum(STATUSES).nullable(),
    /** The parent filter (children of one run), absent for other listings. */
    p: z.string().regex(RUN_ID_PATTERN).optional(),
    c: z.number().int().min(0).max(MAX_LIST_TIME),
    r: z.string().regex(RUN_ID_PATTERN),
  })
  .strict();

const MAX_CURSOR_CHARS = 512;

export function encodeListCursor(last: Pick<RunHead, 'createdAt' | 'runId'>, status: RunStatus | undefined, parent?: string): string {
  const body: z.infer<typeof CursorSchema> = { v: 1, s: status ?? null, ...(parent !== undefined ? { p: parent } : {}), c: last.createdAt, r: last.runId };
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
}

function invalid(message: string): ValidationError {
  return new ValidationError('invalid cursor', [{ path: 'cursor', message }]);
}

/** The position a cursor names, for a listing with this status filter; throws ValidationError. */
export function decodeListCursor(cursor: string, status: RunStatus | undefined, parent?: string): ListPosition {
  if (cursor.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid('not a cursor this API issued');
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(cursor, 'base64url')));
  } catch {
    throw invalid('not a cursor this API issued');
  }
  const parsed = CursorSchema.safeParse(value);
  if (!parsed.success) throw invalid('not a cursor this API issued');
  if (parsed.data.s !== (status ?? null)) throw invalid('the cursor belongs to a listing with another status filter');
  if (parsed.data.p !== parent) throw invalid('the cursor belongs to a listing with another parent filter');
  return { createdAt: parsed.data.c, runId: parsed.data.r };
}

/** Whether `head` comes after `position` in the listing order (newest first, then by run id). */
export function isAfter(head: Pick<RunHead, 'createdAt' | 'runId'>, position: ListPosition): boolean {
  return head.createdAt < position.createdAt || (head.createdAt === position.createdAt && head.runId > position.runId);
}
