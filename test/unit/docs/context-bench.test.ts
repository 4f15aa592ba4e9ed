import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONTEXT_POLICIES, contextBenchRun, runContextBench } from '../../../bench/context.js';

describe('the context-policy bench and its figures in docs/cost.md', () => {
  it('docs/cost.md holds the table the bench prints for 200 turns', async () => {
    const table = (await runContextBench(200)).split('\n').filter((l) => l.startsWith('|'));
    expect(table).toHaveLength(2 + CONTEXT_POLICIES.length);
    const doc = readFileSync('docs/cost.md', 'utf8');
    for (const row of table) expect(doc).toContain(row);
  }, 60_000);

  it('input tokens per turn grow without a policy and stay flat with drop or summaries', async () => {
    const [off, , drop, summarizing] = await Promise.all(CONTEXT_POLICIES.map((p) => contextBenchRun(120, p)));
    const peak = (xs: number[], from: number, to: number) => Math.max(...xs.slice(from, to));
    for (const r of [off!, drop!, summarizing!]) expect(r.status).toBe('completed');
    expect(peak(off!.estimated, 100, 120)).toBeGreaterThan(peak(off!.estimated, 20, 40) * 3);
    for (const r of [drop!, summarizing!]) {
      expect(r.estimated).toHaveLength(120);
      // The last 20 turns peak no higher than turns 20-40 did (a few characters for longer numbers).
      expect(peak(r.estimated, 100, 120)).toBeLessThanOrEqual(peak(r.estimated, 20, 40) * 1.01);
      expect(peak(r.reported, 100, 120)).toBeLessThanOrEqual(peak(r.reported, 20, 40) * 1.01);
    }
    expect(summarizing!.summaries).toBeGreaterThan(10);
  }, 60_000);
});
