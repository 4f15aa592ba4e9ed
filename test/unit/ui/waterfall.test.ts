// The waterfall's layout from a log: steps are the events one worker wrote (the API's create is not
// a step), model calls run from their reservation to the response (with tokens and cost) or
// failure, tool attempts from tool_started to their result, a retried call is a second bar marked
// as attempt 2, a call cut off by a crash stays open, and the time between steps is a gap that
// says what the run waited for. Positions are fractions of the run's span.
import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../../dev/ui/client/types.js';
import { layoutWaterfall } from '../../../dev/ui/client/waterfall.js';

const api = { epoch: 0, nonce: 'create:1' };
const w1 = { epoch: 1, nonce: 'a' };
const w2 = { epoch: 2, nonce: 'b' };
const w3 = { epoch: 3, nonce: 'c' };

const log: LogEvent[] = [
  { seq: 1, type: 'run_started', at: 0, by: api },
  { seq: 2, type: 'model_started', at: 100, by: w1, step: 1 },
  { seq: 3, type: 'model_failed', at: 200, by: w1, code: 'model_rate_limited', retryable: true },
  { seq: 4, type: 'model_started', at: 300, by: w1, step: 1 },
  {
    seq: 5,
    type: 'model_response',
    at: 500,
    by: w1,
    usage: { inputTokens: 40, outputTokens: 10 },
    costUsd: 0.002,
    calls: [
      { callId: '5-0', name: 'search' },
      { callId: '5-1', name: 'wait_ok' },
    ],
  },
  { seq: 6, type: 'tool_started', at: 500, by: w1, callId: '5-0', attempt: 1, notAfter: 10_500 },
  { seq: 7, type: 'tool_result', at: 700, by: w1, callId: '5-0', ok: true, source: 'tool' },
  { seq: 8, type: 'tool_started', at: 700, by: w1, callId: '5-1', attempt: 1, notAfter: 5_000, wait: { kind: 'signal', signal: 'ok', until: 5_000 } },
  // The run waits for the signal with no worker: a gap, then the next step.
  { seq: 9, type: 'tool_result', at: 1_700, by: w2, callId: '5-1', ok: true, source: 'signal', reservation: { step: 2 } },
  // Worker 2 dies inside the model call; worker 3 reserves step 2 again.
  { seq: 10, type: 'model_started', at: 1_900, by: w3, step: 2 },
  { seq: 11, type: 'model_response', at: 2_000, by: w3, usage: { inputTokens: 60, outputTokens: 5 }, costUsd: 0.001, calls: [] },
  { seq: 12, type: 'run_completed', at: 2_000, by: w3 },
];

describe('the waterfall layout', () => {
  it('draws one bar per step, model call and tool attempt, on the log’s time axis', () => {
    const layout = layoutWaterfall(log, 99_999);
    expect(layout.start).toBe(0);
    expect(layout.end).toBe(2_000);
    expect(layout.bars.map((b) => [b.kind, b.label, b.start, b.end])).toEqual([
      ['step', 'step 1 (lease epoch 1)', 100, 700],
      ['model', 'model step 1 (model_rate_limited)', 100, 200],
      ['model', 'model step 1, attempt 2', 300, 500],
      ['tool', 'search (5-0)', 500, 700],
      ['tool', 'wait_ok (5-1)', 700, 1_700],
      ['step', 'step 2 (lease epoch 2)', 1_700, 1_700],
      ['model', 'model step 2', 1_700, 1_900],
      ['step', 'step 3 (lease epoch 3)', 1_900, 2_000],
      ['model', 'model step 2, attempt 2', 1_900, 2_000],
    ]);
  });

  it('marks failures, retries and a call cut off with no answer, and keeps tokens and cost per model call', () => {
    const bars = layoutWaterfall(log, 99_999).bars.filter((b) => b.kind === 'model');
    expect(bars.map((b) => [b.attempt, b.failed ?? false, b.open ?? false, b.inputTokens, b.costUsd])).toEqual([
      [1, true, false, undefined, undefined],
      [2, false, false, 40, 0.002],
      [1, false, true, undefined, undefined],
      [2, false, false, 60, 0.001],
    ]);
  });

  it('places bars as fractions of the span, and the wait between steps as a gap with its reason', () => {
    const layout = layoutWaterfall(log, 99_999);
    const search = layout.bars.find((b) => b.label.startsWith('search'));
    expect(search).toMatchObject({ x: 0.25, width: 0.1 });
    expect(layout.gaps).toEqual([
      { start: 0, end: 100, reason: 'queued for a worker', x: 0, width: 0.05 },
      { start: 700, end: 1_700, reason: 'waits for signal ok', x: 0.35, width: 0.5 },
      { start: 1_700, end: 1_900, reason: 'between steps', x: 0.85, width: 0.1 },
    ]);
  });

  it('draws a running call up to now (never past its deadline) while the run is not finished', () => {
    const running = log.slice(0, 6);
    const layout = layoutWaterfall(running, 800);
    expect(layout.end).toBe(800);
    expect(layout.bars.find((b) => b.kind === 'tool')).toMatchObject({ start: 500, end: 800, open: true });
    expect(layoutWaterfall(running, 20_000).bars.find((b) => b.kind === 'tool')).toMatchObject({ end: 10_500, open: true });
  });

  it('says a gap waited for an approval, or for a person when the run parked', () => {
    const layout = layoutWaterfall(
      [
        { seq: 1, type: 'run_started', at: 0, by: api },
        { seq: 2, type: 'model_started', at: 10, by: w1, step: 1 },
        { seq: 3, type: 'model_response', at: 20, by: w1, usage: { inputTokens: 1, outputTokens: 1 }, costUsd: 0, calls: [{ callId: '3-0', name: 'pay' }] },
        { seq: 4, type: 'approval_requested', at: 20, by: w1, callId: '3-0' },
        { seq: 5, type: 'approval_decided', at: 100, by: w2, callId: '3-0', decision: 'approve' },
        { seq: 6, type: 'tool_started', at: 100, by: w2, callId: '3-0', attempt: 1, notAfter: 200 },
        { seq: 7, type: 'attention_required', at: 300, by: w3, reason: 'unknown_outcome', callId: '3-0' },
        { seq: 8, type: 'attention_resolved', at: 400, by: { epoch: 4, nonce: 'd' }, attentionSeq: 7, callId: '3-0', outcome: 'succeeded' },
        { seq: 9, type: 'run_completed', at: 400, by: { epoch: 4, nonce: 'd' } },
      ],
      0,
    );
    expect(layout.gaps.map((g) => [g.start, g.end, g.reason])).toEqual([
      [0, 10, 'queued for a worker'],
      [20, 100, 'waits for an approval'],
      [100, 300, 'between steps'],
      [300, 400, 'parked: waits for a person'],
    ]);
    // The call cut off by the crash stays open, drawn to its deadline, never to the person's answer.
    expect(layout.bars.find((b) => b.kind === 'tool')).toMatchObject({ start: 100, end: 200, open: true });
  });

  it('is empty for an empty log, and linear in the events (a 5,000-event log in one pass)', () => {
    expect(layoutWaterfall([], 5)).toEqual({ start: 5, end: 5, bars: [], gaps: [] });
    const big: LogEvent[] = [{ seq: 1, type: 'run_started', at: 0, by: api }];
    for (let i = 0; i < 2_500; i++) {
      const seq = big.length + 1;
      big.push({ seq, type: 'model_started', at: seq, by: w1, step: i + 1 });
      big.push({ seq: seq + 1, type: 'model_response', at: seq + 1, by: w1, usage: { inputTokens: 1, outputTokens: 1 }, costUsd: 0, calls: [] });
    }
    const layout = layoutWaterfall(big, 0);
    expect(layout.bars.filter((b) => b.kind === 'model')).toHaveLength(2_500);
    expect(layout.bars.filter((b) => b.kind === 'step')).toHaveLength(1);
  });
});
