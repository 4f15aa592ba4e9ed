export interface Ids {
  /** A random nonce identifying one writer (worker invocation) in the events it writes. */
  nonce(): string;
  /** A time-ordered unique id (ULID) for inbox items. */
  inboxId(): string;
}
