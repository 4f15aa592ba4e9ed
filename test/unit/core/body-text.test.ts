import { describe, expect, it } from 'vitest';
import { inlineText } from '../../../lib/core/body.js';

describe('inlineText', () => {
  it('writes every value as JSON does (strings as they are)', () => {
    const values = [0, -0, 7, -12, 1.5, 1e21, 1e-7, 2 ** 53 + 2, Number.MAX_VALUE, Number.MIN_VALUE, NaN, Infinity, -Infinity, true, null, { n: 1 }, [1, 'a']];
    for (const value of values) expect(inlineText({ kind: 'inline', value: value as never })).toBe(JSON.stringify(value));
    expect(inlineText({ kind: 'inline', value: 'plain' })).toBe('plain');
  });
});
