// The conversation the inspector draws, folded from a run's log and its stream: the input with its
// attachments, each turn's text (streamed chunks by index, dropped on discard or a later attempt,
// replaced by the logged answer), tool calls with arguments, approvals, waits, child runs and
// results, follow-up messages, parks and the end. Each fold names only the entries it changed.
import { describe, expect, it } from 'vitest';
import { Conversation, attachmentsOf, partialText, type ToolEntry, type TurnEntry } from '../../../dev/ui/client/conversation.js';
import type { LogEvent } from '../../../dev/ui/client/types.js';

const w1 = { epoch: 1, nonce: 'a' };
const inline = (value: unknown) => ({ kind: 'inline' as const, value });
const blobRef = { kind: 'blob', key: 'k', sha256: 'a'.repeat(64), size: 40_000, summary: '{"html":"<script>…' };

const log: LogEvent[] = [
  {
    seq: 1,
    type: 'run_started',
    at: 1_000,
    by: { epoch: 0, nonce: 'create:x' },
    agent: { name: 'support', version: '1.0.0' },
    input: inline('Customer c_12: damaged order'),
    tools: [
      { name: 'search_orders', policy: 'rerun' },
      { name: 'issue_refund', policy: 'escalate' },
    ],
  },
  { seq: 2, type: 'model_started', at: 1_100, by: w1, step: 1 },
  {
    seq: 3,
    type: 'model_response',
    at: 1_600,
    by: w1,
    text: inline('Let me look.'),
    usage: { inputTokens: 40, outputTokens: 10 },
    costUsd: 0.002,
    stopReason: 'tool_use',
    calls: [
      { callId: '3-0', name: 'search_orders', providerId: 'p', args: inline({ customer: 'c_12' }) },
      { callId: '3-1', name: 'issue_refund', providerId: 'q', args: blobRef },
    ],
  },
  { seq: 4, type: 'tool_started', at: 1_700, by: w1, callId: '3-0', attempt: 1, notAfter: 11_700 },
  { seq: 5, type: 'approval_requested', at: 1_750, by: w1, callId: '3-1', argsHash: 'b'.repeat(64), expiresAt: 90_000 },
  { seq: 6, type: 'tool_result', at: 1_800, by: w1, callId: '3-0', ok: true, source: 'tool', output: inline({ orders: ['o1'] }) },
];

function fold(events: LogEvent[]) {
  const c = new Conversation();
  const changed = events.map((e) => c.apply(e));
  return { c, changed };
}

describe('the conversation', () => {
  it('reads like a transcript: input, the turn, its tool calls with arguments and results, in order', () => {
    const { c, changed } = fold(log);
    expect(c.entries.map((e) => e.id)).toEqual(['e1', 'turn:2', 'call:3-0', 'call:3-1']);
    expect(c.entries[0]).toMatchObject({ kind: 'input', agent: 'support@1.0.0', input: inline('Customer c_12: damaged order') });
    expect(c.entries[1]).toMatchObject({
      kind: 'turn',
      step: 1,
      attempt: 1,
      state: 'done',
      answer: { text: inline('Let me look.'), inputTokens: 40, outputTokens: 10, costUsd: 0.002 },
      callIds: ['3-0', '3-1'],
    });
    expect(c.get('call:3-0')).toMatchObject({
      name: 'search_orders',
      policy: 'rerun',
      args: inline({ customer: 'c_12' }),
      result: { ok: true, source: 'tool', output: inline({ orders: ['o1'] }) },
    });
    // The offloaded argument stays a reference: the view loads it on demand.
    expect(c.get('call:3-1')).toMatchObject({ name: 'issue_refund', policy: 'escalate', args: blobRef, approval: { asked: 1_750, expiresAt: 90_000 } });
    // Each fold names what it changed: the response touched its turn and both calls.
    expect(changed[2]).toEqual(['turn:2', 'call:3-0', 'call:3-1']);
    expect(changed[5]).toEqual(['call:3-0']);
  });

  it('shows an approval answered with edited arguments, by whom', () => {
    const { c } = fold([
      ...log,
      {
        seq: 7,
        type: 'approval_decided',
        at: 5_000,
        by: w1,
        callId: '3-1',
        decision: 'edit',
        argsHash: 'c'.repeat(64),
        args: inline({ amount: 5 }),
        comment: 'half',
        decidedBy: 'ops@example.com',
        inboxId: 'i1',
      },
    ]);
    expect((c.get('call:3-1') as ToolEntry).approval).toEqual({
      asked: 1_750,
      expiresAt: 90_000,
      decision: 'edit',
      decidedBy: 'ops@example.com',
      decidedAt: 5_000,
      editedArgs: inline({ amount: 5 }),
      comment: 'half',
    });
  });

  it('grows a turn with streamed chunks by index, ignores repeats, and replaces them with the logged answer', () => {
    const c = new Conversation();
    for (const e of log.slice(0, 2)) c.apply(e);
    expect(c.text({ type: 'text', callSeq: 2, attempt: 1, index: 0, text: 'Hel' })).toBe('turn:2');
    expect(c.text({ type: 'text', callSeq: 2, attempt: 1, index: 0, text: 'Hel' })).toBeUndefined();
    c.text({ type: 'text', callSeq: 2, attempt: 1, index: 2, text: '!' });
    c.text({ type: 'text', callSeq: 2, attempt: 1, index: 1, text: 'lo <img src=x onerror=alert(1)>' });
    const turn = c.turn(2) as TurnEntry;
    expect(turn.state).toBe('streaming');
    expect(partialText(turn)).toBe('Hello <img src=x onerror=alert(1)>!');
    c.apply(log[2] as LogEvent);
    expect(turn).toMatchObject({ state: 'done', chunks: [], answer: { text: inline('Let me look.') } });
    // A late chunk of an answered call changes nothing: the log is the truth.
    expect(c.text({ type: 'text', callSeq: 2, attempt: 1, index: 3, text: 'late' })).toBeUndefined();
    expect(partialText(turn)).toBe('');
  });

  it('drops an abandoned attempt’s text on discard, and shows the retry as attempt 2 of the same step', () => {
    const c = new Conversation();
    for (const e of log.slice(0, 2)) c.apply(e);
    c.text({ type: 'text', callSeq: 2, attempt: 1, index: 0, text: 'half an answ' });
    // The worker died; the next worker reserves the step again (a new callSeq).
    const changed = c.apply({ seq: 3, type: 'model_started', at: 9_000, by: { epoch: 2, nonce: 'b' }, step: 1 });
    expect(changed).toEqual(['turn:2', 'turn:3']);
    expect(c.turn(2)).toMatchObject({ state: 'abandoned', chunks: [] });
    expect(c.turn(3)).toMatchObject({ step: 1, attempt: 2, state: 'waiting' });
    c.text({ type: 'text', callSeq: 3, attempt: 2, index: 0, text: 'Whole' });
    expect(c.discard({ type: 'discard', callSeq: 3 })).toBe('turn:3');
    expect(partialText(c.turn(3) as TurnEntry)).toBe('');
    // A chunk for a discarded attempt of the old reservation is ignored.
    expect(c.text({ type: 'text', callSeq: 2, attempt: 1, index: 1, text: 'er' })).toBeUndefined();
  });

  it('marks a failed model call and drops its partial text', () => {
    const c = new Conversation();
    for (const e of log.slice(0, 2)) c.apply(e);
    c.text({ type: 'text', callSeq: 2, attempt: 1, index: 0, text: 'par' });
    c.apply({ seq: 3, type: 'model_failed', at: 2_000, by: w1, code: 'model_rate_limited', message: 'slow down', retryable: true });
    expect(c.turn(2)).toMatchObject({ state: 'failed', chunks: [], failure: { code: 'model_rate_limited', message: 'slow down', retryable: true } });
  });

  it('keeps a chunk that arrives before its reservation until the reservation is folded', () => {
    const c = new Conversation();
    c.apply(log[0] as LogEvent);
    expect(c.text({ type: 'text', callSeq: 2, attempt: 1, index: 0, text: 'early' })).toBeUndefined();
    c.apply(log[1] as LogEvent);
    expect(partialText(c.turn(2) as TurnEntry)).toBe('early');
  });

  it('starts the next turn at a tool_result carrying the reservation; the stream’s callSeq is that result’s seq', () => {
    const { c } = fold([
      ...log,
      {
        seq: 7,
        type: 'tool_result',
        at: 3_000,
        by: w1,
        callId: '3-1',
        ok: false,
        source: 'validation',
        errorCode: 'rejected',
        output: inline('no'),
        reservation: { step: 2 },
      },
    ]);
    expect(c.turn(7)).toMatchObject({ step: 2, attempt: 1, state: 'waiting' });
    expect(c.text({ type: 'text', callSeq: 7, attempt: 1, index: 0, text: 'Sorry' })).toBe('turn:7');
    expect(c.get('call:3-1')).toMatchObject({ result: { ok: false, source: 'validation', errorCode: 'rejected' } });
  });

  it('links a child run, shows a signal’s sender, parks and a person’s answer, messages and the end', () => {
    const { c } = fold([
      ...log,
      {
        seq: 7,
        type: 'tool_started',
        at: 2_000,
        by: w1,
        callId: '3-1',
        attempt: 1,
        notAfter: 99_000,
        wait: { kind: 'child', runId: 'parent-3-1', until: 99_000, reserved: {}, maxSteps: 3, deadlineAt: 99_000 },
      },
      { seq: 8, type: 'attention_required', at: 3_000, by: w1, reason: 'unknown_outcome', callId: '3-1', detail: 'issue_refund started with no result' },
      {
        seq: 9,
        type: 'attention_resolved',
        at: 4_000,
        by: w1,
        attentionSeq: 8,
        callId: '3-1',
        outcome: 'succeeded',
        result: inline({ refundId: 'r1' }),
        resolvedBy: 'ops',
        inboxId: 'i2',
      },
      { seq: 10, type: 'run_completed', at: 5_000, by: w1, answer: inline('Refunded.'), output: inline({ refunded: true }) },
      {
        seq: 11,
        type: 'user_message',
        at: 6_000,
        by: w1,
        input: inline({ text: 'and the receipt?', files: [{ kind: 'blob', sha256: 'd'.repeat(64), mediaType: 'image/png', bytes: 12, name: 'r.png' }] }),
        sentBy: 'alice',
        inboxId: 'i3',
      },
      { seq: 12, type: 'run_failed', at: 7_000, by: w1, code: 'budget_exceeded', message: 'maxSteps' },
    ]);
    expect(c.get('call:3-1')).toMatchObject({
      wait: { kind: 'child', runId: 'parent-3-1' },
      result: { ok: true, source: 'human', by: 'ops', output: inline({ refundId: 'r1' }) },
    });
    expect(c.get('e8')).toMatchObject({ kind: 'attention', reason: 'unknown_outcome', callId: '3-1', resolved: { outcome: 'succeeded', by: 'ops' } });
    expect(c.get('e10')).toMatchObject({ kind: 'end', status: 'completed', answer: inline('Refunded.'), output: inline({ refunded: true }) });
    expect(c.get('e11')).toMatchObject({
      kind: 'message',
      sentBy: 'alice',
      attachments: [{ sha256: 'd'.repeat(64), mediaType: 'image/png', bytes: 12, name: 'r.png' }],
    });
    expect(c.get('e12')).toMatchObject({ kind: 'end', status: 'failed', code: 'budget_exceeded' });
  });

  it('a signal result names who sent it', () => {
    const { c } = fold([
      ...log.slice(0, 3),
      {
        seq: 4,
        type: 'tool_started',
        at: 1_700,
        by: w1,
        callId: '3-0',
        attempt: 1,
        notAfter: 60_000,
        wait: { kind: 'signal', signal: 'approved', until: 60_000 },
      },
      { seq: 5, type: 'tool_result', at: 9_000, by: w1, callId: '3-0', ok: true, source: 'signal', sentBy: 'bob', inboxId: 'i', output: inline({ ok: 1 }) },
    ]);
    expect(c.get('call:3-0')).toMatchObject({ wait: { kind: 'signal', signal: 'approved' }, result: { source: 'signal', by: 'bob' } });
  });

  it('ignores an event it has already folded', () => {
    const { c } = fold([...log, log[3] as LogEvent]);
    expect((c.get('call:3-0') as ToolEntry).attempts).toHaveLength(1);
  });

  it('finds attachments in an input, bounded, and only well-formed refs', () => {
    expect(
      attachmentsOf(
        inline({
          a: [{ kind: 'blob', sha256: 'e'.repeat(64), mediaType: 'application/pdf', bytes: 12, name: 'x.pdf' }],
          b: { kind: 'blob', sha256: 'nothex', mediaType: 'x' },
        }),
      ),
    ).toEqual([{ sha256: 'e'.repeat(64), mediaType: 'application/pdf', bytes: 12, name: 'x.pdf' }]);
    expect(attachmentsOf({ kind: 'blob', key: 'k', sha256: 'f'.repeat(64), size: 1, summary: '' })).toEqual([]);
    let deep: unknown = { kind: 'blob', sha256: 'e'.repeat(64), mediaType: 'image/png', bytes: 3 };
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(attachmentsOf(inline(deep))).toEqual([]);
  });
});
