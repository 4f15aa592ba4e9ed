import { describe, expect, it } from 'vitest';
import type { ModelMessage } from '../../../lib/core/messages.js';
import { assignWireIds } from '../../../lib/models/wire-ids.js';

const call = (callId: string, providerId: string) => ({ callId, providerId, name: 't', args: {} });
const turn = (...calls: ReturnType<typeof call>[]): ModelMessage => ({ role: 'assistant', text: '', calls });

describe('assignWireIds', () => {
  it('keeps unique provider ids unchanged', () => {
    const ids = assignWireIds([turn(call('2-0', 'tooluse_a'), call('2-1', 'tooluse_b'))]);
    expect(ids('2-0', 'tooluse_a')).toBe('tooluse_a');
    expect(ids('2-1', 'tooluse_b')).toBe('tooluse_b');
  });

  it('keeps the first use of a reused id and derives later ones from the callId', () => {
    const messages = [turn(call('2-0', 'call_0')), turn(call('5-0', 'call_0')), turn(call('8-0', 'call_0'))];
    const ids = assignWireIds(messages);
    expect(['2-0', '5-0', '8-0'].map((c) => ids(c, 'call_0'))).toEqual(['call_0', 'call_0_5-0', 'call_0_8-0']);
  });

  it('gives an earlier call the same id whatever later turns add (stable prompt prefix)', () => {
    const early = [turn(call('2-0', 'call_0'), call('2-1', 'call_1'))];
    const later = [...early, turn(call('5-0', 'call_1'), call('5-1', 'call_0'))];
    const a = assignWireIds(early);
    const b = assignWireIds(later);
    expect(b('2-0', 'call_0')).toBe(a('2-0', 'call_0'));
    expect(b('2-1', 'call_1')).toBe(a('2-1', 'call_1'));
    expect(b('5-0', 'call_1')).toBe('call_1_5-0');
    expect(b('5-1', 'call_0')).toBe('call_0_5-1');
  });

  it('handles duplicates within one turn and empty ids', () => {
    const ids = assignWireIds([turn(call('4-0', 'call_0'), call('4-1', 'call_0'), call('4-2', ''))]);
    expect(ids('4-0', 'call_0')).toBe('call_0');
    expect(ids('4-1', 'call_0')).toBe('call_0_4-1');
    expect(ids('4-2', '')).toBe('call_4-2');
  });

  it('never produces an id that a provider already used in the request', () => {
    // A derived id would be call_0_5-0, which the provider itself used later on.
    const messages = [turn(call('2-0', 'call_0')), turn(call('5-0', 'call_0')), turn(call('9-0', 'call_0_5-0'))];
    const ids = assignWireIds(messages);
    const all = ['2-0', '5-0', '9-0'].map((c, i) => ids(c, ['call_0', 'call_0', 'call_0_5-0'][i]!));
    expect(new Set(all).size).toBe(3);
    expect(all).toEqual(['call_0', 'call_0_5-0_', 'call_0_5-0']);
  });

  it('is deterministic: the same log gives the same ids', () => {
    const messages = [turn(call('2-0', 'call_0')), turn(call('5-0', 'call_0'))];
    expect(assignWireIds(messages)('5-0', 'call_0')).toBe(assignWireIds(structuredClone(messages))('5-0', 'call_0'));
  });
});
