import type { InboxItem } from '../core/inbox.js';
import type { RunRef } from './run-ref.js';

/**
 * Inbox items for a run. `put` is idempotent on the item id and bumps the head's inboxVersion so
 * that a lease holder about to release notices new work.
 */
export interface Inbox {
  put(run: RunRef, item: InboxItem): Promise<void>;
  /** Items in id order (ids are time-ordered). */
  list(run: RunRef): Promise<InboxItem[]>;
  delete(run: RunRef, id: string): Promise<void>;
}
