import { describe, expect, it } from 'vitest';
import type { LogbookClient } from '../../../dev/cli/api-client.js';
import type { Output } from '../../../dev/cli/output.js';
import { runsCommand } from '../../../dev/cli/runs-command.js';

function capture(): Output & { stdout: string[] } {
  const stdout: string[] = [];
  return { stdout, out: (t) => stdout.push(t), err: () => undefined, tty: false };
}

const base = {
  agent: { name: 'planner', version: '1' },
  createdAt: '2026-11-01T00:00:00.000Z',
  updatedAt: '2026-11-01T00:01:00.000Z',
  lastSeq: 4,
  usage: { steps: 1, inputTokens: 500, outputTokens: 100, costUsd: 0.003 },
  attention: [],
};
const parentRun = {
  ...base,
  runId: 'plan-1',
  status: 'waiting' as const,
  children: [{ runId: 'plan-1-c3-0', callId: '3-0', status: 'awaiting_approval' as const, summary: 'awaits approval: lookup (3-0)' }],
  waiting: [{ callId: '3-0', tool: 'research', kind: 'child' as const, seq: 3, childRunId: 'plan-1-c3-0', childStatus: 'awaiting_approval', until: '2026-11-02T00:00:00.000Z' }],
};
const childRun = { ...base, runId: 'plan-1-c3-0', status: 'awaiting_approval' as const, agent: { name: 'researcher', version: '1' }, parent: { runId: 'plan-1', callId: '3-0' } };

function fakeClient(calls: unknown[][]) {
  return () =>
    ({
      listRuns: async (q: unknown) => (calls.push(['list', q]), { runs: [childRun] }),
      getRun: async (id: string) => (calls.push(['get', id]), id === 'plan-1' ? parentRun : childRun),
    }) as unknown as LogbookClient;
}

describe('logbook runs: parent and child runs', () => {
  it('show prints the child runs of a parent, and the open child call with its status', async () => {
    const io = capture();
    await runsCommand(['show', 'plan-1'], io, fakeClient([]));
    const text = io.stdout.join('\n');
    expect(text).toMatch(/child runs:\nRUN\s+CALL\s+STATUS\s+SUMMARY\n[- ]+\nplan-1-c3-0\s+3-0\s+awaiting_approval\s+awaits approval: lookup \(3-0\)/);
    expect(text).toMatch(/3-0\s+research\s+child\s+2026-11-02T00:00:00.000Z\s+child plan-1-c3-0 awaiting_approval/);
    expect(text).toContain('the child:    logbook runs show plan-1-c3-0');
  });

  it('show prints the parent of a child run', async () => {
    const io = capture();
    await runsCommand(['show', 'plan-1-c3-0'], io, fakeClient([]));
    expect(io.stdout.join('\n')).toMatch(/parent\s+plan-1 \(call 3-0\)/);
  });

  it('list --parent asks for the children of that run', async () => {
    const io = capture();
    const calls: unknown[][] = [];
    expect(await runsCommand(['list', '--parent', 'plan-1'], io, fakeClient(calls))).toBe(0);
    expect(calls[0]).toEqual(['list', { parent: 'plan-1' }]);
    expect(io.stdout[0]).toContain('plan-1-c3-0  awaiting_approval');
  });
});
