// The crash harness crashes before and after every write of every handler (run creation, the
// person's answers through the API, worker steps, the sweeper), and its invariants notice a write
// that is skipped or two neighbours that are swapped: each mutation below makes points fail that
// hold without it. The mutation is applied to every process after the uninterrupted run.
import { describe, expect, it } from 'vitest';
import { formatHarnessReport, runCrashHarness } from '../../../lib/testing/crash-harness.js';
import { WRITE_METHODS, type WriteMutation } from '../../../lib/testing/write-points.js';
import { supportScenario as scenario } from '../../../examples/support-agent/support-world.js';

const quick = { doubleCrashStride: 0, pausePoints: [] };

describe('crash points at every write', () => {
  it('crashes before and after every write the uninterrupted run makes, of every kind', async () => {
    const report = await runCrashHarness(scenario, quick);
    expect(report.failed, formatHarnessReport(report)).toBe(0);
    const labels = report.points.map((p) => p.at[0]?.label ?? '');
    const writes = labels.filter((l) => l.startsWith('before-write:'));
    expect(writes.length).toBe(labels.filter((l) => l.startsWith('after-write:')).length);
    // Run creation, the answers, the steps, the notices: every kind of write is a crash point.
    // (The person's answers, inbox.put and inbox.delete, happen only in runs a crash parked: they
    // are crash points of the processes that follow a crash, in the double-crash points.)
    for (const label of ['log.append', 'heads.createHead', 'heads.claimLease', 'heads.project', 'heads.releaseLease', 'heads.markNotified', 'queue.enqueue', 'publisher.publish']) {
      expect(writes, label).toContain(`before-write:${label}`);
    }
    for (const label of writes) {
      const [port, method] = label.slice('before-write:'.length).split('.') as [keyof typeof WRITE_METHODS, string];
      expect(WRITE_METHODS[port] as readonly string[]).toContain(method);
    }
  }, 120_000);

  const mutations: [string, WriteMutation][] = [
    ['the outcome notice skipped', { kind: 'skip', label: 'publisher.publish' }],
    ['the head projection skipped', { kind: 'skip', label: 'heads.project' }],
    ['the ingested inbox item never deleted', { kind: 'skip', label: 'inbox.delete' }],
    [
      'the inbox item deleted before its event is appended',
      { kind: 'swap', label: 'log.append', next: 'inbox.delete', match: (args) => typeof (args[1] as { inboxId?: unknown })?.inboxId === 'string' },
    ],
  ];
  it.each(mutations)('fails points when %s', async (_name, mutation) => {
    // Answers are ingested only after a crash parked the run: a swap there needs a second crash,
    // in the successor that ingests the answer. The pairs: every first crash that led to an
    // answer, with the successor dying at each of its first 40 points (a sampled stride can miss
    // the one write it takes, as the run's shape changes).
    const pairs = mutation.kind === 'swap' ? await answeredPairs(40) : [];
    const report = await runCrashHarness(scenario, { ...quick, doubleCrashPairs: pairs, mutation });
    expect(report.failed, formatHarnessReport(report, 3)).toBeGreaterThan(0);
    if (pairs.length > 0) {
      // The same pairs hold without the mutation: the failures are the swap's.
      const clean = await runCrashHarness(scenario, { ...quick, doubleCrashPairs: pairs });
      expect(clean.failed, formatHarnessReport(clean, 3)).toBe(0);
    }
  }, 120_000);
});

/** Double-crash pairs whose first crash parks the run for a person's answer; the successor dies at 0..n-1. */
async function answeredPairs(n: number): Promise<[number, number][]> {
  const single = await runCrashHarness(scenario, quick);
  const firsts = single.points.filter((p) => p.resolutions > 0).map((p) => p.at[0]?.index ?? 0);
  expect(firsts.length).toBeGreaterThan(0);
  return firsts.flatMap((i) => Array.from({ length: n }, (_, j): [number, number] => [i, j]));
}
