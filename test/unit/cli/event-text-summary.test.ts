import { describe, expect, it } from 'vitest';
import { describeEvent } from '../../../dev/cli/event-text.js';

describe('describeEvent: context summary calls', () => {
  it('says a model call is a summary and which turns it replaces', () => {
    const started = { type: 'model_started', seq: 40, step: 12, maxOutputTokens: 300, purpose: 'summary', covers: { turns: 8 } };
    const answer = { type: 'model_response', seq: 41, text: { kind: 'inline', value: 'found 8 items' }, calls: [], usage: { inputTokens: 900, outputTokens: 40 }, purpose: 'summary' };
    expect(describeEvent(started as never)).toBe('step 12, summary of turns 1-8, up to 300 output tokens reserved');
    expect(describeEvent(answer as never)).toBe('summary: found 8 items; 900+40 tokens');
    expect(describeEvent({ ...answer, purpose: undefined } as never)).toBe('says found 8 items; 900+40 tokens');
  });
});
