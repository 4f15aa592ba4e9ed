import { describe, expect, it } from 'vitest';
import { foldLog } from '../../../lib/core/fold.js';
import { decide, type DecideContext } from '../../../lib/core/decide.js';
import { answerJson, repairMessage } from '../../../lib/core/output.js';
import { CorruptLogError } from '../../../lib/core/errors.js';

const by = { epoch: 1, nonce: 'n' };
const output = { schema: { type: 'object' }, schemaHash: 'a'.repeat(64), maxRepairs: 1 };
const started = (extra: Record<string, unknown> = {}) => ({
  v: 1,
  seq: 1,
  at: 1,
  by,
  type: 'run_started',
  tenant: 't',
  runId: 'r',
  requestHash: 'h',
  agent: { name: 'a', version: '1' },
  model: { id: 'm', maxOutputTokens: 100, price: { inputPerMTokUsd: 0, outputPerMTokUsd: 0 } },
  prompt: { version: '1', text: { kind: 'inline', value: 'sys' }, sha256: 's' },
  tools: [],
  input: { kind: 'inline', value: 'go' },
  budgets: { maxSteps: 10, maxInputTokens: 100_000, maxOutputTokens: 10_000, maxCostUsd: 1, deadlineAt: 10_000_000 },
  graceMs: 0,
  expiresAt: 20_000_000,
  ...extra,
});
const modelStarted = (seq: number, step: number) => ({ v: 1, seq, at: seq, by, type: 'model_started', step, maxOutputTokens: 100, reserved: { inputTokens: 10, outputTokens: 100, costUsd: 0 } });
const response = (seq: number, text: string, verdict: Record<string, unknown>) => ({
  v: 1,
  seq,
  at: seq,
  by,
  type: 'model_response',
  text: { kind: 'inline', value: text },
  calls: [],
  usage: { inputTokens: 5, outputTokens: 5 },
  costUsd: 0,
  stopReason: 'end_turn',
  ...verdict,
});
const ctx: DecideContext = { now: 100, hasTool: () => true, hasModel: () => true, maxToolAttempts: 3 };

describe('structured output in fold and decide (pure)', () => {
  it('an old run_started without `output` folds unchanged, and a text answer completes with no output', () => {
    const state = foldLog([started(), modelStarted(2, 1), response(3, 'hello', {})]);
    expect(state.started.output).toBeUndefined();
    expect(state.answerOutput).toBeUndefined();
    expect(state.outputRepairs).toBeUndefined();
    expect(decide(state, ctx)).toEqual({ kind: 'complete', answer: { kind: 'inline', value: 'hello' } });
  });

  it('a fitting answer completes with its output; an invalid one asks the model again, then fails output_invalid', () => {
    const ok = foldLog([started({ output }), modelStarted(2, 1), response(3, '{"a":1}', { output: { kind: 'inline', value: { a: 1 } } })]);
    expect(decide(ok, ctx)).toEqual({ kind: 'complete', answer: { kind: 'inline', value: '{"a":1}' }, output: { kind: 'inline', value: { a: 1 } } });

    const once = foldLog([started({ output }), modelStarted(2, 1), response(3, 'x', { outputError: 'bad' })]);
    expect(once.outputRepairs).toBe(1);
    expect(once.messages.at(-1)).toEqual({ role: 'user', content: { kind: 'inline', value: repairMessage('bad', 1, 1) } });
    expect(decide(once, ctx)).toMatchObject({ kind: 'call_model', step: 2 });

    const twice = foldLog([started({ output }), modelStarted(2, 1), response(3, 'x', { outputError: 'bad' }), modelStarted(4, 2), response(5, 'y', { outputError: 'worse' })]);
    expect(twice.outputRepairs).toBe(2);
    // No repair message past the last repair: nobody will read it.
    expect(twice.messages.at(-1)).toMatchObject({ role: 'assistant' });
    const action = decide(twice, ctx);
    expect(action).toMatchObject({ kind: 'fail', code: 'output_invalid' });
    expect((action as { message: string }).message).toBe('the answer does not match the output schema after 1 repair (the last answer is the model_response at seq 5): worse');
  });

  it('a fitting answer resets the count: repairs are counted in a row', () => {
    const state = foldLog([
      started({ output }),
      modelStarted(2, 1),
      response(3, 'x', { outputError: 'bad' }),
      modelStarted(4, 2),
      response(5, '{}', { output: { kind: 'inline', value: {} } }),
    ]);
    expect(state.outputRepairs).toBe(0);
    expect(state.answerOutput).toEqual({ ok: true, output: { kind: 'inline', value: {} } });
  });

  it('a final answer with no verdict under an output schema never completes unchecked', () => {
    const state = foldLog([started({ output: { ...output, maxRepairs: 0 } }), modelStarted(2, 1), response(3, '{}', {})]);
    expect(decide(state, ctx)).toMatchObject({ kind: 'fail', code: 'output_invalid', message: expect.stringMatching(/not checked/) });
  });

  it('a verdict without an output schema, or both verdicts at once, is a corrupt log', () => {
    expect(() => foldLog([started(), modelStarted(2, 1), response(3, '{}', { output: { kind: 'inline', value: {} } })])).toThrow(CorruptLogError);
    expect(() => foldLog([started({ output }), modelStarted(2, 1), response(3, '{}', { output: { kind: 'inline', value: {} }, outputError: 'x' })])).toThrow(/both/);
  });

  it('reads an answer as JSON: whitespace and one code fence around it, nothing else', () => {
    expect(answerJson(' {"a":1}\n')).toEqual({ ok: true, value: { a: 1 } });
    expect(answerJson('```json\n{"a":1}\n```')).toEqual({ ok: true, value: { a: 1 } });
    expect(answerJson('Here: {"a":1}')).toMatchObject({ ok: false, error: expect.stringMatching(/not valid JSON/) });
    expect(answerJson('')).toMatchObject({ ok: false, error: expect.stringMatching(/empty/) });
  });
});
