// The local stack's per-tenant limit: `--max-active-runs N` (startLocalStack's option) first, then
// LOGBOOK_MAX_ACTIVE_RUNS, then LOCAL_MAX_ACTIVE_RUNS; 0 is no limit, anything else is refused.
import { describe, expect, it } from 'vitest';
import { devCommand } from '../../../dev/cli/dev-command.js';
import { UsageError, type Output } from '../../../dev/cli/output.js';
import { LOCAL_MAX_ACTIVE_RUNS, localMaxActiveRuns } from '../../../dev/local/stack.js';

const silent: Output = { out: () => undefined, err: () => undefined, tty: false };

describe('the local stack per-tenant limit', () => {
  it('defaults to LOCAL_MAX_ACTIVE_RUNS, takes the environment, and the option over both', () => {
    expect(LOCAL_MAX_ACTIVE_RUNS).toBe(10);
    expect(localMaxActiveRuns(undefined, {})).toBe(10);
    expect(localMaxActiveRuns(undefined, { LOGBOOK_MAX_ACTIVE_RUNS: '' })).toBe(10);
    expect(localMaxActiveRuns(undefined, { LOGBOOK_MAX_ACTIVE_RUNS: '3' })).toBe(3);
    expect(localMaxActiveRuns(undefined, { LOGBOOK_MAX_ACTIVE_RUNS: '0' })).toBe(0);
    expect(localMaxActiveRuns(4, { LOGBOOK_MAX_ACTIVE_RUNS: '3' })).toBe(4);
    expect(localMaxActiveRuns(0, {})).toBe(0);
    expect(() => localMaxActiveRuns(undefined, { LOGBOOK_MAX_ACTIVE_RUNS: 'many' })).toThrow('LOGBOOK_MAX_ACTIVE_RUNS must be a whole number (0: no limit), not "many"');
  });

  it('`logbook dev --max-active-runs` refuses what is not 0..1000 before starting anything', async () => {
    for (const bad of ['-1', '2.5', 'ten', '1001']) {
      await expect(devCommand(['--agents', 'src/agents.ts', '--max-active-runs', bad], silent)).rejects.toThrow(UsageError);
    }
    await expect(devCommand(['--agents', 'src/agents.ts', '--max-active-runs', 'ten'], silent)).rejects.toThrow('--max-active-runs must be an integer from 0 (no limit) to 1000');
  });
});
