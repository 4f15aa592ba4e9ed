// The run page offers exactly what the API accepts: an ended run shows no approve/reject/edit, no
// signal, no resolve, no retry and no cancel (each would be refused 409 run_ended); a completed one
// keeps its follow-up message form; a cancelled one lists its unresolved calls with no action.
import { describe, expect, it } from 'vitest';
import { allowedActions } from '../../../dev/ui/client/allowed-actions.js';
import type { RunView } from '../../../dev/ui/client/types.js';

const base: RunView = {
  runId: 'r-1',
  status: 'awaiting_approval',
  agent: { name: 'support', version: '1' },
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
  lastSeq: 4,
  usage: { steps: 1, inputTokens: 10, outputTokens: 5, costUsd: 0 },
  attention: [],
  waiting: [
    { callId: '3-0', tool: 'issue_refund', kind: 'approval', seq: 4, argsHash: 'a'.repeat(64) },
    { callId: '3-1', tool: 'wait_for_return', kind: 'signal', seq: 3, signal: 'parcel_returned' },
  ],
} as RunView;

describe('the actions the run page offers', () => {
  it('a run awaiting approval: approve/reject/edit, the signal, cancel, a message and a fork', () => {
    const a = allowedActions(base);
    expect(a.approvals.map((w) => w.callId)).toEqual(['3-0']);
    expect(a.signals.map((w) => w.callId)).toEqual(['3-1']);
    expect(a).toMatchObject({ cancel: true, message: true, fork: true });
  });

  it('the same run once cancelled, from a head that still lists its waits and attention: nothing but a fork', () => {
    const cancelled = {
      ...base,
      status: 'cancelled',
      attention: [{ seq: 5, reason: 'unknown_outcome', detail: 'x', callId: '3-0' }],
      park: { reason: 'poisoned', detail: 'x' },
      unresolved: ['3-0'],
    } as RunView;
    expect(allowedActions(cancelled)).toEqual({
      approvals: [],
      signals: [],
      attention: [],
      park: undefined,
      unresolved: ['3-0'],
      cancel: false,
      message: false,
      fork: true,
    });
  });

  it('completed: a follow-up message and a fork, nothing else', () => {
    expect(allowedActions({ ...base, status: 'completed' } as RunView)).toMatchObject({
      approvals: [],
      signals: [],
      attention: [],
      cancel: false,
      message: true,
      fork: true,
    });
  });

  it('failed (a head park failed by a person): no retry or fail card', () => {
    const failed = { ...base, status: 'failed', waiting: [], park: { reason: 'poisoned', detail: 'failed by ops' } } as RunView;
    expect(allowedActions(failed)).toMatchObject({ park: undefined, cancel: false, message: false });
  });

  it('parked on its head while running: retry or fail', () => {
    const parked = { ...base, status: 'parked', waiting: [], park: { reason: 'poisoned', detail: 'x' } } as RunView;
    expect(allowedActions(parked).park).toEqual({ reason: 'poisoned', detail: 'x' });
  });
});
