// What the run page derives from the log: tool names and policies per call, tokens and cost per
// step, calls started with no result and when their policy applies, and durations (a call cut off
// by a crash and answered by a person is drawn as "at most until its deadline", not as running).
import { describe, expect, it } from 'vitest';
import { emptyModel, facts, foldEvent, pendingCalls, spans } from '../../../dev/ui/client/run-model.js';
import type { LogEvent } from '../../../dev/ui/client/types.js';

const log: LogEvent[] = [
  { seq: 1, type: 'run_started', at: 1_000, graceMs: 5_000, tools: [{ name: 'search', policy: 'rerun' }, { name: 'refund', policy: 'escalate' }] },
  { seq: 2, type: 'model_started', at: 1_100, step: 1, maxOutputTokens: 100, reserved: { costUsd: 0.01 } },
  { seq: 3, type: 'model_response', at: 1_600, usage: { inputTokens: 40, outputTokens: 10 }, costUsd: 0.002, calls: [{ callId: '3-0', name: 'search' }, { callId: '3-1', name: 'refund' }] },
  { seq: 4, type: 'tool_started', at: 1_700, callId: '3-0', attempt: 1, notAfter: 11_700 },
  { seq: 5, type: 'tool_started', at: 1_800, callId: '3-1', attempt: 1, notAfter: 11_800 },
  { seq: 6, type: 'tool_result', at: 2_300, callId: '3-0', ok: true, source: 'tool', output: { kind: 'inline', value: 'x' } },
];

function fold(events: LogEvent[]) {
  const m = emptyModel();
  for (const e of events) foldEvent(m, e);
  return m;
}

describe('the run model', () => {
  it('names calls with their tool and pinned policy, and counts tokens and cost per step', () => {
    const m = fold(log);
    expect(facts(m, log[4] as LogEvent)).toMatchObject({ tool: 'refund (3-1)', policy: 'escalate', attempt: 1, notAfter: 11_800 });
    expect(facts(m, log[5] as LogEvent)).toMatchObject({ tool: 'search (3-0)', policy: 'rerun', ok: true });
    expect(m.steps).toEqual([{ step: 1, startedSeq: 2, startedAt: 1_100, endedAt: 1_600, inputTokens: 40, outputTokens: 10, costUsd: 0.002 }]);
    expect(m.previousAt.get(3)).toBe(1_100);
  });

  it('starts the next step at a tool_result that carries its reservation', () => {
    const m = fold([
      ...log,
      { seq: 7, type: 'tool_result', at: 2_400, callId: '3-1', ok: true, source: 'tool', output: { kind: 'inline', value: 'y' }, reservation: { step: 2, maxOutputTokens: 100, reserved: { inputTokens: 50, outputTokens: 100, costUsd: 0.01 } } },
      { seq: 8, type: 'model_response', at: 2_900, usage: { inputTokens: 60, outputTokens: 5 }, costUsd: 0.001, calls: [] },
    ]);
    expect(m.steps.map((s) => [s.step, s.startedSeq, s.endedAt, s.inputTokens])).toEqual([
      [1, 2, 1_600, 40],
      [2, 7, 2_900, 60],
    ]);
  });

  it('lists a call started with no result, with when its policy applies (notAfter + grace)', () => {
    const m = fold(log);
    expect(pendingCalls(m).map((c) => [c.callId, c.policy, c.appliesAt])).toEqual([['3-1', 'escalate', 16_800]]);
  });

  it("takes a person's answer as the call's result, and records which event ingested an inbox item", () => {
    const m = fold([
      ...log,
      { seq: 7, type: 'attention_required', at: 17_000, reason: 'unknown_outcome', callId: '3-1', detail: 'refund (3-1) started with no result' },
      { seq: 8, type: 'attention_resolved', at: 30_000, attentionSeq: 7, callId: '3-1', outcome: 'succeeded', resolvedBy: 'me', inboxId: 'in-1' },
    ]);
    expect(pendingCalls(m)).toEqual([]);
    expect(m.openAttention.size).toBe(0);
    expect(m.ingested.get('in-1')?.seq).toBe(8);
    const refund = spans(m).find((s) => s.label.startsWith('refund'));
    // Cut off by a crash: it ran at most until its deadline, whatever the person said later.
    expect(refund).toMatchObject({ start: 1_800, end: 11_800, unknown: true });
  });

  it('ignores an event it has already folded', () => {
    const m = fold([...log, log[5] as LogEvent]);
    expect(m.lastSeq).toBe(6);
    expect(m.calls.get('3-0')?.attempts).toHaveLength(1);
  });
});
