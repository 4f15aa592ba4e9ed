import { describe, expect, it } from 'vitest';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { inline } from '../../../lib/core/body.js';
import { contextPlan, messageFate } from '../../../lib/core/context-policy.js';
import { CorruptLogError, ConfigError } from '../../../lib/core/errors.js';
import { reservationOf, type RunEvent } from '../../../lib/core/events.js';
import { foldLog } from '../../../lib/core/fold.js';
import type { ModelRequest } from '../../../lib/core/messages.js';
import type { RunState } from '../../../lib/core/state.js';
import { buildSummaryRequest } from '../../../lib/engine/context-summary.js';
import { ScriptedModel } from '../../../lib/models/scripted-model.js';
import { forkRun } from '../../../lib/engine/fork.js';
import { buildModelRequest } from '../../../lib/engine/prompt.js';
import { decodeSnapshot, encodeSnapshot } from '../../../lib/engine/snapshot-codec.js';
import { startRun } from '../../../lib/engine/start-run.js';
import type { ContextSpec } from '../../../lib/authoring/context-spec.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { spawnWorker } from '../../../lib/testing/world.js';
import { haltAt, logOf } from './helpers.js';
import { contextWorld, page, pairingProblems } from './context-world.js';

const run = { tenant: 't', runId: 'r' };

async function runToEnd(context: ContextSpec | undefined, turns: number) {
  const t = contextWorld(context, turns);
  const worker = spawnWorker(t.world);
  await startRun(worker.deps, { tenant: 't', runId: 'r', agent: 'agent', input: 'read the pages' });
  const result = await driveRun(t.world, run, { worker: () => worker, maxIterations: 1000 });
  const log = await logOf(t.world, run);
  return { ...t, result, log, turnRequests: t.model.requests.filter((r) => r.purpose !== 'summary'), summaryRequests: t.model.requests.filter((r) => r.purpose === 'summary') };
}

const chars = (r: ModelRequest) => JSON.stringify(r.messages).length;
const toolTexts = (r: ModelRequest) => r.messages.flatMap((m) => (m.role === 'tool' ? [m.content] : []));

describe('context policy: older tool results', () => {
  it('summary: the last keepTurns turns verbatim, older results shortened to their stored summaries, every call still paired', async () => {
    const off = await runToEnd(undefined, 12);
    const on = await runToEnd({ keepTurns: 2, olderToolResults: 'summary' }, 12);
    expect(on.result.head.status).toBe('completed');
    expect(on.log.events[0]).toMatchObject({ type: 'run_started', context: { keepTurns: 2, olderToolResults: 'summary' } });
    const last = on.turnRequests.at(-1)!;
    expect(last.turns).toBe(11);
    expect(last.messages[0]).toEqual({ role: 'user', content: 'read the pages' });
    // Every turn keeps its call (summary mode drops no turn); results are what changes.
    expect(last.messages.filter((m) => m.role === 'assistant')).toHaveLength(11);
    expect(pairingProblems(last.messages)).toEqual([]);
    const results = toolTexts(last);
    expect(results).toHaveLength(11);
    // The last two turns' results whole, the older ones cut to 200 characters and marked.
    for (const text of results.slice(-2)) expect(text.length).toBeGreaterThan(600);
    for (const text of results.slice(0, -2)) {
      expect(text.length).toBeLessThan(300);
      expect(text).toContain('… [result');
    }
    // Page 3 was offloaded to the blob store: its stored summary stands in, with its hash.
    expect(results[3]).toMatch(/^page 3: B{192}… \[result shortened: \d+ bytes stored as sha256:[0-9a-f]{16}\]$/);
    expect(chars(last)).toBeLessThan(chars(off.turnRequests.at(-1)!) / 4);
    // Without a policy the request is exactly as before: no turns field, every result whole.
    expect('turns' in off.turnRequests.at(-1)!).toBe(false);
    expect(toolTexts(off.turnRequests.at(-1)!).every((t) => t.length > 600)).toBe(true);
  });

  it('reference: older results become one line naming the stored result', async () => {
    const on = await runToEnd({ keepTurns: 1, olderToolResults: 'reference' }, 6);
    const results = toolTexts(on.turnRequests.at(-1)!);
    expect(results[0]).toBe('[result of page (call 3-0) left out of the prompt: 622 characters, kept in the run log]');
    expect(results[3]).toMatch(/^\[result of page \(call \d+-0\) left out of the prompt: \d+ characters, stored as sha256:[0-9a-f]{16}\]$/);
    expect(results.at(-1)!.length).toBeGreaterThan(600);
    expect(pairingProblems(on.turnRequests.at(-1)!.messages)).toEqual([]);
  });

  it('drop: older turns leave whole (call and results together), the input stays', async () => {
    const on = await runToEnd({ keepTurns: 3, olderToolResults: 'drop' }, 10);
    const last = on.turnRequests.at(-1)!;
    expect(last.messages[0]).toEqual({ role: 'user', content: 'read the pages' });
    expect(last.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'tool']);
    expect(pairingProblems(last.messages)).toEqual([]);
    // The scripted model still counts the whole conversation: the run took its 10 turns.
    expect(last.turns).toBe(9);
    expect(on.turnRequests).toHaveLength(10);
    // Bounded: the last turn's reservation is no larger than the fifth's (page numbers grow by a digit).
    const reserved = on.log.events.map((e) => reservationOf(e as RunEvent)).filter((r) => r !== undefined).map((r) => r.reserved.inputTokens);
    expect(reserved.at(-1)!).toBeLessThanOrEqual(reserved[4]! + 2);
  });

  it('keeps every message a person sent, wherever it falls', () => {
    const state = {
      started: { context: { keepTurns: 1, olderToolResults: 'drop' } },
      messages: [
        { role: 'user', content: inline('go') },
        { role: 'assistant', text: null, calls: [{ callId: '3-0', providerId: 'c', name: 'page', args: inline({ n: 0 }) }] },
        { role: 'tool', callId: '3-0', providerId: 'c', name: 'page', isError: false, content: inline('p0') },
        { role: 'user', content: inline('also page 9') },
        { role: 'assistant', text: null, calls: [{ callId: '6-0', providerId: 'c', name: 'page', args: inline({ n: 9 }) }] },
        { role: 'tool', callId: '6-0', providerId: 'c', name: 'page', isError: false, content: inline('p9') },
        { role: 'assistant', text: null, calls: [{ callId: '9-0', providerId: 'c', name: 'page', args: inline({ n: 1 }) }] },
        { role: 'tool', callId: '9-0', providerId: 'c', name: 'page', isError: false, content: inline('p1') },
      ],
    } as unknown as RunState;
    const plan = contextPlan(state)!;
    expect(state.messages.map((m, i) => messageFate(plan, i, m))).toEqual(['keep', 'drop', 'drop', 'keep', 'drop', 'drop', 'keep', 'keep']);
  });
});

describe('context policy: summarization', () => {
  const summarizing: ContextSpec = { keepTurns: 2, olderToolResults: 'summary', summarize: { maxOutputTokens: 300, everyTurns: 4 } };

  it('records each summary call before and after it, budgets it as a step, and puts the summary in place of the turns it covers', async () => {
    const on = await runToEnd(summarizing, 20);
    expect(on.result.head.status).toBe('completed');
    const starts = on.log.events.filter((e) => e.type === 'model_started' && e.purpose === 'summary');
    const answers = on.log.events.filter((e) => e.type === 'model_response' && e.purpose === 'summary');
    // Turns 1-4 once 6 turns are in (4 older than the last 2), then every 4 older turns.
    expect(starts.map((e) => (e.covers as { turns: number }).turns)).toEqual([4, 8, 12, 16]);
    expect(answers).toHaveLength(4);
    for (const s of starts) expect(on.log.events[s.seq]).toMatchObject({ type: 'model_response', purpose: 'summary', calls: [] });
    expect(on.summaryRequests).toHaveLength(4);
    expect(on.summaryRequests[0]).toMatchObject({ modelId: 'scripted:ctx', tools: [], maxOutputTokens: 300, purpose: 'summary' });
    // Summary calls are steps: reserved, charged at their price, counted.
    const reservations = on.log.events.filter((e) => reservationOf(e as RunEvent) !== undefined).length;
    expect(on.log.state.usage.steps).toBe(reservations);
    expect(reservations).toBe(20 + 4);
    expect(on.log.state.context).toMatchObject({ turns: 16 });
    // The last turn's prompt: input, the summary, then only the turns the summary does not cover.
    const last = on.turnRequests.at(-1)!;
    expect(last.messages[1]).toMatchObject({ role: 'user' });
    expect((last.messages[1] as { content: string }).content).toMatch(/^Summary of turns 1-16 of this conversation .*\nsummary [0-9a-f]{16}$/);
    expect(last.messages.filter((m) => m.role === 'assistant')).toHaveLength(19 - 16);
    expect(pairingProblems(last.messages)).toEqual([]);
    // The summary model read the previous summary and the turns it had not covered.
    expect(on.summaryRequests[1]!.messages[0]!.role === 'user' && on.summaryRequests[1]!.messages[0]!.content).toMatch(/^Summary so far \(turns 1-4\):\nsummary /);
  });

  it('keeps the prompt bounded: the reservation of the last turns no larger than that of the early ones', async () => {
    const off = await runToEnd(undefined, 40);
    const on = await runToEnd(summarizing, 40);
    const turnReservations = (events: RunEvent[]) =>
      events.filter((e) => !(e.type === 'model_started' && e.purpose === 'summary')).flatMap((e) => reservationOf(e)?.reserved.inputTokens ?? []);
    const offIn = turnReservations(off.log.events as unknown as RunEvent[]);
    const onIn = turnReservations(on.log.events as unknown as RunEvent[]);
    expect(onIn).toHaveLength(40);
    // Without a policy each turn adds its page; with it the last ten turns peak where turns 10-20 did.
    for (let i = 1; i < offIn.length; i++) expect(offIn[i]!).toBeGreaterThan(offIn[i - 1]! + 150);
    expect(Math.max(...onIn.slice(30))).toBeLessThanOrEqual(Math.max(...onIn.slice(10, 20)) + 4);
  });

  it('builds the same prompt from the log at every model call as the live run sent (fold, cold codec, snapshot)', async () => {
    const on = await runToEnd(summarizing, 14);
    const events = on.log.events as unknown as RunEvent[];
    const cold = spawnWorker(on.world).deps.codec;
    const rebuilt: ModelRequest[] = [];
    const fromSnapshot: ModelRequest[] = [];
    for (const e of events) {
      const r = reservationOf(e);
      if (!r) continue;
      const state = foldLog(events.filter((x) => x.seq <= e.seq));
      const decoded = decodeSnapshot(encodeSnapshot(state))!;
      const summary = e.type === 'model_started' && e.purpose === 'summary';
      const build = (s: RunState) => (summary ? buildSummaryRequest(s, cold, 'scripted:ctx', r.maxOutputTokens) : buildModelRequest(s, cold, r.maxOutputTokens));
      rebuilt.push(await build(state));
      fromSnapshot.push(await build(decoded));
    }
    // 14 turns and two summaries (turns 1-4 and 1-8; turn 14 is called with 11 older turns).
    expect(on.model.requests.length).toBe(14 + 2);
    expect(rebuilt).toEqual(on.model.requests);
    expect(fromSnapshot).toEqual(on.model.requests);
  });

  it('never asks for a summary again on resume: a worker that dies after it reads it from the log', async () => {
    const t = contextWorld(summarizing, 10);
    const first = spawnWorker(t.world, haltAt('before-model:step 8'));
    await startRun(first.deps, { tenant: 't', runId: 'r', agent: 'agent', input: 'read the pages' });
    const fresh = () => (first.deps.checkpoints && (first.deps.checkpoints as { fired?: boolean }).fired ? (second ??= spawnWorker(t.world)) : first);
    let second: ReturnType<typeof spawnWorker> | undefined;
    const result = await driveRun(t.world, run, { worker: fresh, maxIterations: 1000 });
    expect(result.head.status).toBe('completed');
    expect(second).toBeDefined();
    const log = await logOf(t.world, run);
    // Step 7 was the first summary; the worker died at the next turn's call; the successor used it.
    expect(log.events.find((e) => e.type === 'model_started' && e.step === 7)).toMatchObject({ purpose: 'summary' });
    const answered = log.events.filter((e) => e.type === 'model_response' && e.purpose === 'summary').length;
    expect(t.model.requests.filter((r) => r.purpose === 'summary')).toHaveLength(answered);
  });

  it('asks again when a worker dies inside the summary call: the lost reservation stays spent', async () => {
    const t = contextWorld(summarizing, 10);
    const base = await runToEnd(summarizing, 10);
    const first = spawnWorker(t.world, haltAt('after-summary'));
    await startRun(first.deps, { tenant: 't', runId: 'r', agent: 'agent', input: 'read the pages' });
    let second: ReturnType<typeof spawnWorker> | undefined;
    const result = await driveRun(t.world, run, { worker: () => (first.dead || (first.deps.checkpoints as { fired?: boolean }).fired ? (second ??= spawnWorker(t.world)) : first), maxIterations: 1000 });
    expect(result.head.status).toBe('completed');
    const log = await logOf(t.world, run);
    const types = log.events.filter((e) => e.purpose === 'summary' || e.type === 'model_started').map((e) => `${e.type}${e.purpose ? `:${e.purpose}` : ''}`);
    // The summary's first reservation has no answer; the second one has.
    expect(types.filter((x) => x === 'model_started:summary').length).toBe(types.filter((x) => x === 'model_response:summary').length + 1);
    expect(log.state.usage.inputTokens).toBeGreaterThan(base.log.state.usage.inputTokens);
    // Same prompt, same answer (the answer is a digest of the last prompt).
    expect(log.state.outcome).toEqual({ ...base.log.state.outcome, seq: log.state.outcome!.seq });
  });
});

describe('ScriptedModel under a context policy', () => {
  it('counts the turns the policy left out, and answers a summary call with a text of the request alone', async () => {
    const model = new ScriptedModel([{ text: 'first' }, { text: 'second' }, { text: 'third' }]);
    const signal = new AbortController().signal;
    const base = { modelId: 'm', system: 's', tools: [], maxOutputTokens: 100 };
    const one = [{ role: 'user' as const, content: 'go' }];
    expect((await model.complete({ ...base, messages: one }, { signal })).text).toBe('first');
    expect((await model.complete({ ...base, messages: one, turns: 2 }, { signal })).text).toBe('third');
    const summary = { ...base, purpose: 'summary' as const, messages: [{ role: 'user' as const, content: 'Turns:\nassistant: x\nresult of page (3-0): page 0' }] };
    const a = await model.complete(summary, { signal });
    expect(a).toMatchObject({ text: 'scripted summary of 3 lines; last: result of page (3-0): page 0', calls: [] });
    expect((await model.complete(summary, { signal })).text).toBe(a.text);
  });
});

describe('context policy: pinned, validated, old logs', () => {
  it('is pinned in run_started with its defaults resolved, and a fork keeps the source\'s pin', async () => {
    const on = await runToEnd({ keepTurns: 2, olderToolResults: 'drop', summarize: { maxOutputTokens: 100, everyTurns: 3 } }, 4);
    expect(on.log.events[0]!.context).toEqual({
      keepTurns: 2,
      olderToolResults: 'drop',
      summarize: { model: 'scripted:ctx', price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 }, maxOutputTokens: 100, everyTurns: 3 },
    });
    const worker = spawnWorker(on.world);
    const fork = await forkRun(worker.deps, { tenant: 't', from: 'r', atSeq: 5, runId: 'f' });
    const forked = await logOf(on.world, { tenant: 't', runId: fork.runId });
    expect(forked.events[0]!.context).toEqual(on.log.events[0]!.context);
  });

  it('an old run_started without the field folds unchanged, and its prompt holds the whole history', async () => {
    const off = await runToEnd(undefined, 5);
    const events = off.log.events;
    expect('context' in events[0]!).toBe(false);
    expect(foldLog(events).context).toBeUndefined();
    const again = await buildModelRequest(foldLog(events.filter((e) => e.seq < events.length)), spawnWorker(off.world).deps.codec, 512);
    expect(again.messages.filter((m) => m.role === 'tool')).toHaveLength(4);
  });

  it('refuses at definition a malformed policy, naming the field', () => {
    const agent = (context: unknown) => () =>
      defineAgent({ name: 'a', version: '1', model: { id: 'm', maxOutputTokens: 10 }, system: { version: '1', text: 's' }, tools: [page], context: context as ContextSpec });
    expect(agent({ keepTurns: 0, olderToolResults: 'drop' })).toThrow(ConfigError);
    expect(agent({ keepTurns: 0, olderToolResults: 'drop' })).toThrow(/keepTurns/);
    expect(agent({ keepTurns: 1, olderToolResults: 'shorten' })).toThrow(/olderToolResults/);
    expect(agent({ keepTurns: 1, olderToolResults: 'drop', summarize: { maxOutputTokens: 10, everyTurns: 2, model: 'cheap' } })).toThrow(/summarize.price/);
    expect(agent({ keepTurns: 1, olderToolResults: 'drop', summarise: {} })).toThrow(/summarise/);
    expect(agent({ keepTurns: 1, olderToolResults: 'drop', summarize: { maxOutputTokens: 10, everyTurns: 2, model: 'cheap', price: { inputPerMTokUsd: 0.1, outputPerMTokUsd: 0.2 } } })).not.toThrow();
  });

  it('refuses a log whose summary events do not add up', async () => {
    const on = await runToEnd({ keepTurns: 1, olderToolResults: 'summary', summarize: { maxOutputTokens: 100, everyTurns: 2 } }, 6);
    const events = on.log.events;
    const start = events.find((e) => e.type === 'model_started' && e.purpose === 'summary')!;
    const answer = events[start.seq]!;
    const broken = (edit: (copy: typeof events) => void) => {
      const copy = structuredClone(events);
      edit(copy);
      return () => foldLog(copy);
    };
    expect(broken(() => undefined)).not.toThrow();
    expect(broken((c) => void (c[start.seq - 1]!.covers = { turns: 99 }))).toThrow(CorruptLogError);
    expect(broken((c) => void delete c[start.seq - 1]!.covers)).toThrow(CorruptLogError);
    expect(broken((c) => void delete c[answer.seq - 1]!.purpose)).toThrow(CorruptLogError);
    expect(broken((c) => void (c[answer.seq - 1]!.calls = [{ callId: `${answer.seq}-0`, providerId: 'x', name: 'page', args: inline({ n: 1 }) }]))).toThrow(CorruptLogError);
  });
});
