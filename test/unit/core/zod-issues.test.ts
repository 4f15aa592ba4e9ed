import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { issuesText, zodIssues, zodIssuesText } from '../../../lib/core/zod-issues.js';

const schema = z
  .object({
    agent: z.string().min(1),
    budgets: z.object({ maxSteps: z.number().int().positive() }).strict().optional(),
    input: z.union([z.string().min(1), z.array(z.string())]),
  })
  .strict();

function errorOf(value: unknown) {
  const parsed = schema.safeParse(value);
  if (parsed.success) throw new Error('expected a failure');
  return parsed.error;
}

describe('zodIssues', () => {
  it('names each bad field by its path, under an optional prefix', () => {
    const error = errorOf({ agent: '', budgets: { maxSteps: 0 }, input: 'x' });
    expect(zodIssues(error).map((i) => i.path)).toEqual(['agent', 'budgets.maxSteps']);
    expect(zodIssues(error, { prefix: 'body' }).map((i) => i.path)).toEqual(['body.agent', 'body.budgets.maxSteps']);
  });

  it('reports each unknown key of a strict object as its own field', () => {
    const error = errorOf({ agent: 'a', input: 'x', tenant: 'evil', budgets: { maxSteps: 1, extra: 1 } });
    const issues = zodIssues(error, { prefix: 'detail' }).sort((a, b) => a.path.localeCompare(b.path));
    expect(issues).toEqual([
      { path: 'detail.budgets.extra', message: 'unknown field' },
      { path: 'detail.tenant', message: 'unknown field' },
    ]);
  });

  it('reports the closest branch of a union, not a generic "invalid input"', () => {
    const error = errorOf({ agent: 'a', input: ['ok', 7] });
    expect(zodIssues(error)).toEqual([{ path: 'input.1', message: expect.stringContaining('string') }]);
  });

  it('gives an issue about the value itself an empty path, or the prefix alone', () => {
    const error = errorOf('not an object');
    expect(zodIssues(error)[0]?.path).toBe('');
    expect(zodIssues(error, { prefix: 'detail' })[0]?.path).toBe('detail');
  });
});

describe('issuesText', () => {
  it('joins issues into one line, naming an empty path as the caller says', () => {
    const issues = [
      { path: '', message: 'expected object' },
      { path: 'a.b', message: 'too small' },
    ];
    expect(issuesText(issues)).toBe('(root): expected object; a.b: too small');
    expect(issuesText(issues, { root: '(env)' })).toBe('(env): expected object; a.b: too small');
    expect(issuesText(issues, { max: 1 })).toBe('(root): expected object; and 1 more');
  });

  it('zodIssuesText is zodIssues then issuesText', () => {
    const error = errorOf({ agent: '', input: 'x' });
    expect(zodIssuesText(error, { prefix: 'body' })).toBe(issuesText(zodIssues(error, { prefix: 'body' })));
  });
});
