/**
 * The pieces of runEval that decide what a regression is: how a candidate's call finds its
 * recorded result (canonical arguments, repeats in order), and what each built-in scorer and the
 * report's thresholds say.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, type AgentDefinition, type JsonValue } from 'logbook';
import {
  builtInScorers,
  costDelta,
  defineScorer,
  outputSchemaValid,
  sameOutput,
  sameToolCalls,
  tokensDelta,
  type EvalSide,
  type ScorerInput,
} from 'logbook/testing';
import { RecordedResults, callKey } from '../../../../lib/testing/eval/served-tools.js';
import { firstDifference, scoreResult } from '../../../../lib/testing/eval/scorers.js';
import { summarize, type EvalRunResult } from '../../../../lib/testing/eval/eval-report.js';

const call = (callId: string, name: string, args: JsonValue, output?: JsonValue) => ({
  callId,
  name,
  args,
  ...(output === undefined ? {} : { result: { ok: true, output } }),
});

function side(overrides: Partial<EvalSide> = {}): EvalSide {
  return {
    runId: 'r',
    agent: { name: 'a', version: '1' },
    status: 'completed',
    answer: 'done',
    toolCalls: [],
    usage: { steps: 2, inputTokens: 100, outputTokens: 20, costUsd: 0.01 },
    ...overrides,
  };
}

const agent = defineAgent({ name: 'a', version: '1', model: { id: 'scripted:x', maxOutputTokens: 100 }, system: { version: 'p', text: 'hi' }, tools: [] });
const withOutput = defineAgent({ ...agent, output: z.object({ total: z.number() }) });

function input(recorded: EvalSide, candidate: EvalSide, def: AgentDefinition = agent): ScorerInput {
  return { runId: 'r', recorded, candidate, agent: def, wouldCall: [] };
}

async function score(scorer: ReturnType<typeof sameOutput>, i: ScorerInput) {
  return scoreResult(await scorer.score(i));
}

describe('matching a candidate call to a recorded result', () => {
  it('keys by tool name and canonical JSON of the arguments: key order does not matter, values and names do', () => {
    expect(callKey('search', { a: 1, b: [1, 2] })).toBe(callKey('search', { b: [1, 2], a: 1 }));
    expect(callKey('search', { a: 1 })).not.toBe(callKey('search', { a: 2 }));
    expect(callKey('search', { a: 1 })).not.toBe(callKey('lookup', { a: 1 }));
    expect(callKey('search', [1, 2])).not.toBe(callKey('search', [2, 1]));
  });

  it('serves repeated identical calls in recorded order, each recorded call once, then none', () => {
    const results = new RecordedResults([
      call('3-0', 'search', { q: 'x' }, 'first'),
      call('6-0', 'search', { q: 'x' }, 'second'),
      call('9-0', 'search', { q: 'y' }, 'other'),
    ]);
    expect(results.take('search', { q: 'y' })?.callId).toBe('9-0');
    expect(results.take('search', { q: 'x' })?.result?.output).toBe('first');
    expect(results.take('search', { q: 'x' })?.result?.output).toBe('second');
    expect(results.take('search', { q: 'x' })).toBeUndefined();
    expect(results.take('search', { q: 'y' })).toBeUndefined();
  });

  it('never serves a recorded call that got no result or whose arguments were not JSON', () => {
    const results = new RecordedResults([
      call('3-0', 'charge', { amount: 5 }),
      { callId: '3-1', name: 'charge', argsError: 'Unexpected token', result: { ok: true, output: 'x' } },
      call('6-0', 'charge', { amount: 5 }, 'later'),
    ]);
    expect(results.take('charge', { amount: 5 })?.callId).toBe('6-0');
    expect(results.take('charge', { amount: 5 })).toBeUndefined();
  });
});

describe('built-in scorers', () => {
  it('same_output compares structured output deep (canonical), else the answer text; a recorded run that has not ended is not scored', async () => {
    const s = sameOutput();
    expect((await score(s, input(side({ output: { a: 1, b: [1] } }), side({ output: { b: [1], a: 1 } })))).score).toBe(1);
    const diff = await score(s, input(side({ output: { flight: { number: 'LB1' } } }), side({ output: { flight: { number: 'LB2' } } })));
    expect(diff).toEqual({ score: 0, detail: 'output .flight.number: "LB1" → "LB2"' });
    expect((await score(s, input(side({ answer: 'yes' }), side({ answer: 'yes' })))).score).toBe(1);
    expect((await score(s, input(side({ answer: 'yes' }), side({ answer: 'no' })))).score).toBe(0);
    expect((await score(s, input(side({ status: 'running' }), side()))).score).toBeNull();
    const failed = { status: 'failed' as const, failure: { code: 'output_invalid', message: 'm' } };
    expect(await score(s, input(side(), side(failed)))).toMatchObject({ score: 0, detail: 'recorded completed, candidate failed (output_invalid)' });
    expect((await score(s, input(side(failed), side(failed)))).score).toBe(1);
    expect((await score(s, input(side(failed), side({ status: 'failed', failure: { code: 'budget_exceeded', message: '' } })))).score).toBe(0);
  });

  it('same_tool_calls is 1 only for the same calls in the same order, else 2·LCS/(m+n), naming the first difference', async () => {
    const s = sameToolCalls();
    const a = [call('1-0', 'search', { q: 1 }), call('2-0', 'hold', { id: 1 }), call('3-0', 'charge', { card: 'c' }), call('4-0', 'ticket', {})];
    expect((await score(s, input(side({ toolCalls: a }), side({ toolCalls: a.map((c) => ({ ...c, callId: `9-${c.callId}` })) })))).score).toBe(1);
    const changed = [a[0]!, a[1]!, call('3-0', 'charge', { card: '?' }), a[3]!];
    const r = await score(s, input(side({ toolCalls: a }), side({ toolCalls: changed })));
    expect(r.score).toBe(0.75);
    expect(r.detail).toBe('call 3: charge({"card":"c"}) → charge({"card":"?"})');
    expect(r.metrics).toEqual({ recordedCalls: 4, candidateCalls: 4, commonCalls: 3 });
    const swapped = [a[1]!, a[0]!, a[2]!, a[3]!];
    expect((await score(s, input(side({ toolCalls: a }), side({ toolCalls: swapped })))).score).toBe(0.75);
    expect((await score(s, input(side({ toolCalls: a }), side({ toolCalls: [] })))).score).toBe(0);
    expect((await score(s, input(side(), side()))).score).toBe(1);
  });

  it('output_schema_valid checks the candidate output against the candidate agent schema; null without one', async () => {
    const s = outputSchemaValid();
    expect((await score(s, input(side(), side({ output: { total: 3 } }), withOutput))).score).toBe(1);
    expect((await score(s, input(side(), side({ output: { total: 'x' } }), withOutput))).score).toBe(0);
    expect((await score(s, input(side(), side({ status: 'failed', failure: { code: 'output_invalid', message: '' } }), withOutput))).score).toBe(0);
    expect((await score(s, input(side(), side({ output: { total: 3 } }), agent))).score).toBeNull();
  });

  it('cost and tokens: 1 when the candidate spends no more, recorded/candidate when it does, with the deltas', async () => {
    const more = side({ usage: { steps: 2, inputTokens: 200, outputTokens: 40, costUsd: 0.04 } });
    expect(await score(tokensDelta(), input(side(), more))).toEqual({ score: 0.5, metrics: { recordedTokens: 120, candidateTokens: 240, deltaTokens: 120 } });
    expect((await score(costDelta(), input(side(), more))).score).toBe(0.25);
    expect((await score(costDelta(), input(more, side()))).score).toBe(1);
    expect(builtInScorers().map((x) => x.name)).toEqual(['same_output', 'same_tool_calls', 'output_schema_valid', 'tokens', 'cost']);
  });

  it('a scorer answer outside [0, 1] is refused, as is a bad scorer name', () => {
    expect(() => scoreResult(1.5)).toThrow(/\[0, 1\]/);
    expect(() => scoreResult(Number.NaN)).toThrow(/\[0, 1\]/);
    expect(scoreResult(null)).toEqual({ score: null });
    expect(() => defineScorer({ name: 'Has Space', score: () => 1 })).toThrow(/must match/);
  });

  it('firstDifference names the path of the first differing leaf', () => {
    expect(firstDifference({ a: [1, 2], b: 'x' }, { a: [1, 3], b: 'x' })).toBe('.a.1: 2 → 3');
    expect(firstDifference({ a: 1 }, { a: 1 })).toBeUndefined();
    expect(firstDifference([1], [1, 2])).toBe('(root): [1] → [1,2]');
  });
});

describe('the report and its thresholds', () => {
  const run = (runId: string, scores: Record<string, number | null>, status: EvalRunResult['status'] = 'evaluated'): EvalRunResult => {
    const s = Object.fromEntries(Object.entries(scores).map(([k, v]) => [k, { score: v }]));
    const values = Object.values(scores).filter((v): v is number => v !== null);
    return {
      runId,
      status,
      scores: s,
      score: values.length ? values.reduce((a, b) => a + b, 0) / values.length : null,
      calls: { served: 0, notExecuted: 0, executed: 0 },
      wouldCall: [],
    };
  };

  it('means per scorer over the runs it applies to, the overall score over runs, and each threshold checked', () => {
    const report = summarize(
      [run('a', { x: 1, y: null }), run('b', { x: 0.5, y: 1 })],
      ['x', 'y'],
      { minScore: 0.8, thresholds: { x: 0.7, y: 1 } },
      { agent: '2' },
    );
    expect(report.scorers).toEqual([
      { name: 'x', mean: 0.75, scored: 2 },
      { name: 'y', mean: 1, scored: 1 },
    ]);
    expect(report.score).toBe(0.875);
    expect(report.thresholds.map((t) => [t.name, t.passed])).toEqual([
      ['score', true],
      ['x', true],
      ['y', true],
    ]);
    expect(report.passed).toBe(true);
    const strict = summarize([run('a', { x: 1 }), run('b', { x: 0.5 })], ['x'], { minScore: 0.9 }, {});
    expect(strict.passed).toBe(false);
    expect(strict.failures).toEqual(['score 0.750 is under 0.9']);
  });

  it('fails on a run that could not be evaluated, on nothing evaluated, but not on a skipped run beside evaluated ones', () => {
    expect(summarize([run('a', { x: 1 }), run('b', {}, 'error')], ['x'], {}, {}).failures).toEqual(['1 run(s) could not be evaluated']);
    expect(summarize([run('w', {}, 'skipped')], ['x'], {}, {}).failures).toEqual(['no run was evaluated']);
    expect(summarize([run('a', { x: 1 }), run('w', {}, 'skipped')], ['x'], {}, {}).passed).toBe(true);
    expect(summarize([], ['x'], {}, {}).failures).toEqual(['no recorded run was given']);
  });
});
