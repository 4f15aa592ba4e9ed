import type { LoggedMessage } from './messages.js';

/**
 * Values derived from each message of a run's conversation (its share of the token estimate, the
 * prompt's resolved copy), kept between model calls: a long run rebuilds its whole conversation
 * before every one, and would otherwise pay for its history again each turn.
 *
 * One memo per conversation, found by its first message (the run's input, which every copy of
 * the state that the fold or a preview makes shares), holding the value of each position with
 * the message object it came from. A value is reused only for that very object: messages are
 * never changed in place (the fold replaces the one an approval edits), so a new object at a
 * position is all a change can look like. One weak-map entry per run, not one per message: a
 * cold container that derives a thousand turns of history at once does not pay a thousand
 * weak-map entries and their garbage collection.
 */
export class MessageMemo<T> {
  private readonly memos = new WeakMap<LoggedMessage, { sources: LoggedMessage[]; values: T[] }>();

  /** Reads and writes of the memo of `messages`, position by position. */
  of(messages: readonly LoggedMessage[]): { get(i: number): T | undefined; set(i: number, value: T): T } {
    const first = messages[0];
    let memo = first && this.memos.get(first);
    if (first && !memo) this.memos.set(first, (memo = { sources: [], values: [] }));
    return {
      get: (i) => (memo && memo.sources[i] === messages[i] ? memo.values[i] : undefined),
      set: (i, value) => {
        const source = messages[i];
        if (memo && source) {
          memo.sources[i] = source;
          memo.values[i] = value;
        }
        return value;
      },
    };
  }
}
