import { describe, expect, it } from 'vitest';
import type { LogbookClient } from '../../../dev/cli/api-client.js';
import { main } from '../../../dev/cli/main.js';
import type { Output } from '../../../dev/cli/output.js';
import { runsCommand } from '../../../dev/cli/runs-command.js';

function capture(): Output & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => stdout.push(t), err: (t) => stderr.push(t), tty: false };
}

const waitingRun = {
  runId: 'g-1',
  status: 'awaiting_approval' as const,
  agent: { name: 'support-guarded', version: '1.0.0' },
  createdAt: '2026-11-01T00:00:00.000Z',
  updatedAt: '2026-11-01T00:01:00.000Z',
  lastSeq: 16,
  usage: { steps: 4, inputTokens: 500, outputTokens: 100, costUsd: 0.003 },
  attention: [],
  waiting: [{ callId: '15-0', tool: 'issue_refund', kind: 'approval' as const, seq: 16, argsHash: 'a'.repeat(64), args: { orderId: 'o_eb70', amountCents: 1299 } }],
  forkedFrom: { runId: 'g-0', seq: 9 },
};

function fakeClient(calls: unknown[][]) {
  return () =>
    ({
      getRun: async (id: string) => (calls.push(['get', id]), waitingRun),
      approve: async (id: string, body: unknown) => (calls.push(['approve', id, body]), { inboxId: 'approval-15-0', callId: '15-0' }),
      signal: async (id: string, body: unknown) => (calls.push(['signal', id, body]), { inboxId: 'signal-12-0', callId: '12-0' }),
      message: async (id: string, body: unknown) => (calls.push(['message', id, body]), { inboxId: 'message-m1' }),
      fork: async (id: string, body: unknown) => (calls.push(['fork', id, body]), { runId: 'g-2', status: 'running', created: true, forkedFrom: { runId: id, seq: 9 } }),
    }) as unknown as LogbookClient;
}

describe('logbook runs approve|signal|message|fork', () => {
  it('sends each request with parsed JSON options', async () => {
    const calls: unknown[][] = [];
    const io = capture();
    const run = (argv: string[]) => runsCommand(argv, io, fakeClient(calls));
    expect(await run(['approve', 'g-1', '--call', '15-0', '--decision', 'edit', '--args', '{"orderId":"o_eb70","amountCents":1000}', '--comment', 'partial'])).toBe(0);
    expect(await run(['approve', 'g-1', '--call', '15-0', '--decision', 'reject', '--comment', 'needs a photo'])).toBe(0);
    expect(await run(['signal', 'g-1', '--signal', 'parcel_returned', '--payload', '{"trackingId":"TRK-1","condition":"damaged"}'])).toBe(0);
    expect(await run(['message', 'g-1', '--input', 'thanks, and the invoice?', '--message-id', 'm1'])).toBe(0);
    expect(await run(['fork', 'g-1', '--at', '9', '--run-id', 'g-2', '--version', '1.0.0'])).toBe(0);
    expect(calls).toEqual([
      ['approve', 'g-1', { callId: '15-0', decision: 'edit', args: { orderId: 'o_eb70', amountCents: 1000 }, comment: 'partial' }],
      ['approve', 'g-1', { callId: '15-0', decision: 'reject', comment: 'needs a photo' }],
      ['signal', 'g-1', { signal: 'parcel_returned', payload: { trackingId: 'TRK-1', condition: 'damaged' } }],
      ['message', 'g-1', { input: 'thanks, and the invoice?', messageId: 'm1' }],
      ['fork', 'g-1', { atSeq: 9, runId: 'g-2', version: '1.0.0' }],
    ]);
    expect(io.stdout[2]).toBe('signal parcel_returned queued for call 12-0 of g-1 (inbox signal-12-0)');
    expect(io.stdout.at(-1)).toMatch(/forked from\s+g-1 at seq 9/);
  });

  it('prints JSON with --json', async () => {
    const io = capture();
    await runsCommand(['approve', 'g-1', '--call', '15-0', '--decision', 'approve', '--json'], io, fakeClient([]));
    expect(JSON.parse(io.stdout[0] ?? '')).toEqual({ runId: 'g-1', inboxId: 'approval-15-0', callId: '15-0' });
  });

  it('shows what a run waits for and the command that answers it', async () => {
    const io = capture();
    await runsCommand(['show', 'g-1'], io, fakeClient([]));
    const text = io.stdout.join('\n');
    expect(text).toContain('waiting for:');
    expect(text).toContain('15-0  issue_refund  approval');
    expect(text).toContain('logbook runs approve g-1 --call 15-0 --decision approve|reject|edit');
    expect(text).toMatch(/forked from\s+g-0 at seq 9/);
  });

  it('reports usage mistakes with exit code 2', async () => {
    for (const argv of [
      ['runs', 'approve', 'g-1', '--call', '15-0'],
      ['runs', 'approve', 'g-1', '--call', '15-0', '--decision', 'maybe'],
      ['runs', 'approve', 'g-1', '--call', '15-0', '--decision', 'edit'],
      ['runs', 'approve', 'g-1', '--call', '15-0', '--decision', 'approve', '--args', '{}'],
      ['runs', 'approve', 'g-1', '--call', '15-0', '--decision', 'edit', '--args', '{nope'],
      ['runs', 'signal', 'g-1'],
      ['runs', 'signal', 'g-1', '--signal', 's', '--payload', '{x'],
      ['runs', 'message', 'g-1'],
      ['runs', 'fork', 'g-1'],
      ['runs', 'fork', 'g-1', '--at', 'zero'],
      ['runs', 'fork'],
      ['runs', 'fork', 'g-1', '--bogus'],
    ]) {
      const io = capture();
      expect(await main(argv, io), argv.join(' ')).toBe(2);
      expect(io.stderr[0]).toMatch(/^logbook: /);
    }
  });
});
