import type { InboxItem } from '../core/inbox.js';
import type { RunRef } from '../core/run-ref.js';

/**
 * Inbox items for a run. `put` is idempotent on the item id and bumps the head's inboxVersion so
 * that a lease holder about to release notices new work.
 */
export interface Inbox {
  /**
   * True when this call stored the item, false when one with this id was there already (also
   * after a retried request whose first attempt landed: compare the stored item to tell).
   */
  put(run: RunRef, item: InboxItem): Promise<boolean>;
  /** Items in id order (ids are time-ordered). */
  list(run: RunRef): Promise<InboxItem[]>;
  delete(run: RunRef, id: string): Promise<void>;
}
