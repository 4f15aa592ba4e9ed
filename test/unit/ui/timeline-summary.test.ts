import { describe as suite, expect, it } from 'vitest';
import { describe } from '../../../dev/ui/client/timeline.js';

suite('the inspector timeline: context summary calls', () => {
  it('says a model call is a summary, which turns it replaces, and what it said', () => {
    const started = { type: 'model_started', seq: 40, at: 0, step: 12, maxOutputTokens: 300, purpose: 'summary', covers: { turns: 8 } };
    const answer = { type: 'model_response', seq: 41, at: 0, text: { kind: 'inline', value: 'found 8 items' }, calls: [], stopReason: 'end_turn', purpose: 'summary' };
    expect(describe(started as never)).toBe('step 12: summary of turns 1-8');
    expect(describe(answer as never)).toBe('summary: found 8 items');
    expect(describe({ ...answer, purpose: undefined } as never)).toBe('answers (end_turn)');
  });
});
