import { describe, expect, it } from 'vitest';
import type { LoggedMessage } from '../../../lib/core/messages.js';
import { MessageMemo } from '../../../lib/core/message-memo.js';

const user = (text: string): LoggedMessage => ({ role: 'user', content: { kind: 'inline', value: text } });

describe('MessageMemo', () => {
  it('gives back a value only for the very message object it was derived from, at its position', () => {
    const memo = new MessageMemo<string>();
    const first = user('go');
    const second = user('more');
    const messages = [first, second];
    const view = memo.of(messages);
    expect(view.get(1)).toBeUndefined();
    expect(view.set(1, 'derived from second')).toBe('derived from second');
    expect(memo.of(messages).get(1)).toBe('derived from second');
    // A copy of the conversation (a preview, the same messages) shares what was derived.
    expect(memo.of([...messages, user('new')]).get(1)).toBe('derived from second');
    // A message replaced at that position (an approval edit replaces its message): derived anew.
    expect(memo.of([first, { ...second }]).get(1)).toBeUndefined();
    // Another conversation (another first message): its own memo.
    expect(memo.of([user('go'), second]).get(1)).toBeUndefined();
  });

  it('keeps nothing for an empty conversation', () => {
    const memo = new MessageMemo<number>();
    const view = memo.of([]);
    expect(view.set(0, 1)).toBe(1);
    expect(view.get(0)).toBeUndefined();
  });
});
