// Every branch of every side-effect policy, on memory: the table is policy-table.ts.
import { describe, expect, it } from 'vitest';
import { POLICY_CASES, runPolicyCase, mismatches } from './policy-table.js';

describe('side-effect policies: every situation a started call with no result can meet (memory)', () => {
  it.each(POLICY_CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const observed = await runPolicyCase(c);
    expect(mismatches(c, observed), JSON.stringify(observed)).toEqual([]);
  });
});
