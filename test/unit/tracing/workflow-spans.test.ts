import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineWorkflow } from '../../../lib/authoring/define-workflow.js';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { defineAgents } from '../../../lib/authoring/define-agents.js';
import { ScriptedModel } from '../../../lib/models/scripted-model.js';
import { NonRetryableError } from '../../../lib/core/workflow-errors.js';
import { eventSchema, type RunEvent } from '../../../lib/core/events.js';
import { foldLog } from '../../../lib/core/fold.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { requestApproval, requestSignal } from '../../../lib/engine/control-requests.js';
import { SpanProjector } from '../../../lib/engine/tracing/log-spans.js';
import { rootSpanIdOf, stepSpanIdOf, traceIdOf, type TraceSpan } from '../../../lib/engine/tracing/trace-span.js';
import { agentsWorld, spawnWorker } from '../../../lib/testing/world.js';
import { formatHarnessReport, runCrashHarness } from '../../../lib/testing/crash-harness.js';
import { drain, headOf, later } from '../control/helpers.js';
import { collectTracer } from './collect-tracer.js';
import { logOf, traceFailures } from './trace-invariants.js';

const KEY = 'sk_live_abcdefghijklmnop1234';
const NOTE = 'ship-it-note-7781';
const run = { tenant: 't1', runId: 'wf-1' };
const childRun = { tenant: 't1', runId: 'wf-1-cop-6' };

const classifier = defineAgent({
  name: 'classifier',
  version: '1',
  input: z.object({ text: z.string() }),
  model: { id: 'scripted:classifier', maxOutputTokens: 256, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
  system: { version: 'v1', text: 'Classify the complaint.' },
  tools: [],
  budgets: { maxCostUsd: 0.05 },
});

/** Steps (a rerun, a retried idempotency_key one, one that fails), a sleep, a signal, a child agent, an approval. */
function ordersWorld(payloads: boolean) {
  let charges = 0;
  const flow = defineWorkflow({
    name: 'orders',
    version: '1',
    input: z.object({ order: z.string() }),
    async run(ctx, input) {
      const order = await ctx.step('load', () => ({ id: input.order, apiKey: KEY }), { policy: 'rerun' });
      const charged = await ctx.step(
        'charge',
        (s) => {
          if (charges++ === 0) throw new Error('gateway hiccup');
          return s.idempotencyKey;
        },
        { policy: 'idempotency_key', retry: { maxAttempts: 3, initialIntervalSeconds: 1 } },
      );
      let refused = 'no';
      try {
        await ctx.step(
          'refuse',
          () => {
            throw new NonRetryableError('declined', { code: 'card_declined' });
          },
          { policy: 'rerun' },
        );
      } catch {
        refused = 'yes';
      }
      await ctx.sleep(60);
      const go = await ctx.waitForSignal('go', { payload: z.object({ note: z.string() }), timeoutSeconds: 3600 });
      const verdict = await ctx.agent(classifier, { text: `order ${order.id}` });
      const approval = await ctx.approval('refund', { args: { amount: 5 } });
      return { charged: typeof charged, refused, go: go.timedOut ? 'late' : 'ok', verdict, approved: approval.approved };
    },
  });
  const agents = defineAgents({
    agents: [classifier],
    workflows: [flow],
    models: { 'scripted:classifier': () => new ScriptedModel([{ text: 'refund' }]) },
  });
  const tracer = { ...collectTracer(), ...(payloads ? { payloads: true } : {}) };
  const world = { ...agentsWorld(agents), tracer };
  return { world, tracer, worker: spawnWorker(world) };
}

async function recordedRun(payloads: boolean) {
  const t = ordersWorld(payloads);
  await startRun(t.worker.deps, { ...run, workflow: 'orders', input: { order: 'o-1' } });
  await drain(t.world, t.worker);
  await later(t.world, t.worker, 1_000, 1); // the charge's retry
  await later(t.world, t.worker, 60_000, 2); // the sleep
  expect((await headOf(t.world, run)).status).toBe('waiting');
  await requestSignal(t.worker.deps, run, { signal: 'go', payload: { note: NOTE } }, 'alice');
  await drain(t.world, t.worker); // the signal, the child run, its answer, the approval asked
  const asked = (await headOf(t.world, run)).waits?.[0];
  expect(asked).toMatchObject({ callId: 'op-7', kind: 'approval' });
  await requestApproval(t.worker.deps, run, { callId: 'op-7', decision: 'approve', argsHash: asked!.argsHash! }, 'bob');
  await drain(t.world, t.worker);
  const log = await logOf(t.world, run);
  expect(log.at(-1)?.type).toBe('run_completed');
  return { ...t, log, childLog: await logOf(t.world, childRun) };
}

const byName = (spans: readonly TraceSpan[], name: string) => {
  const found = spans.filter((s) => s.name === name);
  expect(found.map((s) => s.spanId).filter((id, i, all) => all.indexOf(id) === i), name).toHaveLength(1);
  return found[0]!;
};
const firstOf = (log: readonly RunEvent[], op: number) => log.find((e) => 'op' in e && e.op === op)!;
const resultOf = (log: readonly RunEvent[], op: number) => log.find((e) => e.type === 'op_result' && e.op === op)!;

describe('the spans of a workflow run', () => {
  it('one trace: each operation a span under the step that began it, with its attempts, retries, outcome and wait', async () => {
    const { tracer, log, childLog } = await recordedRun(false);
    const mine = tracer.spans.filter((s) => s.traceId === traceIdOf(run));
    const theirs = tracer.spans.filter((s) => s.traceId === traceIdOf(childRun));
    expect(mine.length + theirs.length).toBe(tracer.spans.length);
    expect(traceFailures(mine, log, run)).toEqual([]);
    expect(traceFailures(theirs, childLog, childRun)).toEqual([]);
    const parentOf = (e: RunEvent) => stepSpanIdOf(run, e.by.epoch);

    // A rerun step writes only its result: its span starts no later than that and sits under that step.
    const load = byName(mine, 'logbook.workflow.step load');
    expect(firstOf(log, 1).type).toBe('op_result');
    expect(load.parentSpanId).toBe(parentOf(firstOf(log, 1)));
    expect(load.attributes).toMatchObject({
      'logbook.op.number': 1,
      'logbook.op.call_id': 'op-1',
      'logbook.op.kind': 'step',
      'logbook.op.policy': 'rerun',
      'logbook.op.attempt': 1,
      'logbook.op.outcome': 'ok',
      'logbook.op.source': 'step',
    });
    expect(load.status).toEqual({ code: 'ok' });

    // A retried step: one span from its first marker to its result, the retry and the second attempt as events.
    const charge = byName(mine, 'logbook.workflow.step charge');
    expect(charge.parentSpanId).toBe(parentOf(firstOf(log, 2)));
    expect(charge.start).toBe(firstOf(log, 2).at);
    expect(charge.end).toBe(resultOf(log, 2).at);
    expect(charge.end - charge.start).toBeGreaterThanOrEqual(1_000);
    expect(charge.attributes).toMatchObject({ 'logbook.op.policy': 'idempotency_key', 'logbook.op.attempt': 2, 'logbook.op.idempotency_key': expect.any(String) });
    expect(charge.events?.map((e) => [e.name, e.attributes?.['logbook.op.attempt']])).toEqual([
      ['logbook.op.retry', 1],
      ['logbook.op.attempt', 2],
    ]);
    expect(charge.events?.[0]?.attributes?.['error.type']).toBe('Error');

    // A failed result: status ERROR with its code.
    const refuse = byName(mine, 'logbook.workflow.step refuse');
    expect(refuse.status).toEqual({ code: 'error', message: 'card_declined' });
    expect(refuse.attributes).toMatchObject({ 'error.type': 'card_declined', 'logbook.op.outcome': 'error' });

    // Waits: from the marker to the result, across steps (started in one, answered in another).
    const sleep = byName(mine, 'logbook.workflow.sleep');
    expect(sleep.attributes).toMatchObject({ 'logbook.wait.kind': 'timer', 'logbook.op.source': 'timer' });
    expect(sleep.end - sleep.start).toBeGreaterThanOrEqual(60_000);
    expect(sleep.parentSpanId).toBe(parentOf(firstOf(log, 4)));
    expect(resultOf(log, 4).by.epoch).not.toBe(firstOf(log, 4).by.epoch);
    const signal = byName(mine, 'logbook.workflow.signal go');
    expect(signal.attributes).toMatchObject({ 'logbook.wait.kind': 'signal', 'logbook.wait.signal': 'go', 'logbook.op.source': 'signal', 'logbook.op.sent_by': 'alice' });
    expect(signal.parentSpanId).toBe(parentOf(firstOf(log, 5)));

    // A child run: the operation's span links to the child's trace, whose root links back to this run's root.
    const child = byName(mine, 'logbook.workflow.child classifier');
    expect(child.kind).toBe('client');
    expect(child.attributes).toMatchObject({ 'logbook.child.run_id': childRun.runId, 'logbook.child.kind': 'agent', 'gen_ai.agent.name': 'classifier', 'logbook.op.source': 'child' });
    expect(child.links).toEqual([{ traceId: traceIdOf(childRun), spanId: rootSpanIdOf(childRun), attributes: { 'logbook.link': 'child_run' } }]);
    const childRoot = theirs.find((s) => s.spanId === rootSpanIdOf(childRun));
    expect(childRoot?.links).toEqual([{ traceId: traceIdOf(run), spanId: rootSpanIdOf(run), attributes: { 'logbook.link': 'parent_run' } }]);

    // An approval: a person's answer is its result.
    const approval = byName(mine, 'logbook.workflow.approval refund');
    expect(approval.attributes).toMatchObject({ 'logbook.wait.kind': 'approval', 'logbook.op.source': 'human', 'logbook.op.sent_by': 'bob', 'logbook.op.outcome': 'ok' });
    expect(approval.parentSpanId).toBe(parentOf(firstOf(log, 7)));

    // One span per operation, sent once each (a collector keeps one of a re-sent span).
    expect([...new Set(mine.filter((s) => s.name.startsWith('logbook.workflow.')).map((s) => s.attributes['logbook.op.number']))]).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it("the root carries the run's usage, its child runs' included (the workflow itself calls no model)", async () => {
    const { tracer, log, childLog } = await recordedRun(false);
    const childUsage = foldLog(childLog).usage;
    expect(childUsage.inputTokens).toBeGreaterThan(0);
    const state = foldLog(log);
    expect(state.usage.inputTokens).toBe(childUsage.inputTokens);
    const root = tracer.spans.find((s) => s.spanId === rootSpanIdOf(run))!;
    expect(root.attributes).toMatchObject({
      'logbook.run.kind': 'workflow',
      'gen_ai.usage.input_tokens': childUsage.inputTokens,
      'gen_ai.usage.output_tokens': childUsage.outputTokens,
    });
    expect(root.attributes['logbook.cost_usd']).toBeCloseTo(childUsage.costUsd, 12);
    expect(childUsage.costUsd).toBeGreaterThan(0);
    expect(tracer.spans.find((s) => s.spanId === rootSpanIdOf(childRun))?.attributes).toMatchObject({
      'logbook.run.kind': 'agent',
      'gen_ai.usage.input_tokens': childUsage.inputTokens,
    });
    // The child operation says what its child spent, apart from the gen_ai usage (never counted twice).
    const op = tracer.spans.find((s) => s.name === 'logbook.workflow.child classifier')!;
    expect(op.attributes).toMatchObject({ 'logbook.child.input_tokens': childUsage.inputTokens, 'logbook.child.output_tokens': childUsage.outputTokens });
    expect(op.attributes['gen_ai.usage.input_tokens']).toBeUndefined();
  });

  it('payloads only when opted in, and then as the log holds them (redacted)', async () => {
    const off = (await recordedRun(false)).tracer.spans;
    const text = JSON.stringify(off);
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(NOTE);
    expect(text).not.toContain('logbook.op.output');
    expect(text).not.toContain('logbook.op.input');
    const on = (await recordedRun(true)).tracer.spans;
    expect(JSON.parse(String(byName(on, 'logbook.workflow.step load').attributes['logbook.op.output']))).toEqual({ id: 'o-1', apiKey: expect.stringMatching(/^\[REDACTED:/) });
    expect(JSON.parse(String(byName(on, 'logbook.workflow.signal go').attributes['logbook.op.output']))).toEqual({ note: NOTE });
    expect(JSON.parse(String(byName(on, 'logbook.workflow.child classifier').attributes['logbook.op.input']))).toEqual({ text: 'order o-1' });
    expect(JSON.parse(String(byName(on, 'logbook.workflow.approval refund').attributes['logbook.op.input']))).toEqual({ amount: 5 });
    expect(JSON.stringify(on)).not.toContain(KEY);
  });

  it('an operation begun and never finished is closed at the run end as unknown, at most to its notAfter', async () => {
    const { log } = await recordedRun(false);
    const signalStart = firstOf(log, 5);
    if (signalStart.type !== 'op_started') throw new Error('no signal marker');
    const cut = log.slice(0, log.indexOf(signalStart) + 1);
    const failed = eventSchema.parse({ type: 'run_failed', code: 'worker_lost', message: 'gone', v: 1, seq: signalStart.seq + 1, at: signalStart.at + 5_000, by: signalStart.by });
    const state = foldLog(cut);
    const projector = new SpanProjector({ run, started: state.started, calls: () => state.calls, payloads: false });
    const spans = projector.feed([...cut, failed], true);
    const open = spans.find((s) => s.name === 'logbook.workflow.signal go')!;
    expect(open.attributes['logbook.op.outcome']).toBe('unknown');
    expect(open.status).toEqual({ code: 'error', message: 'unknown' });
    expect(open.end).toBe(failed.at);
    expect(spans.filter((s) => s.name.startsWith('logbook.workflow.')).map((s) => s.attributes['logbook.op.number'])).toEqual([1, 2, 3, 4, 5]);
    expect(spans.find((s) => s.spanId === rootSpanIdOf(run))?.attributes['logbook.run.outcome']).toBe('failed');
  });
});

describe('workflow spans across crashes', () => {
  it('every crash point, pair of crashes and frozen worker leaves one span per operation under the step that began it, no orphan; a child workflow linked both ways', { timeout: 240_000 }, async () => {
    const worlds: ReturnType<typeof ordersHarnessWorld>[] = [];
    const report = await runCrashHarness(
      {
        name: 'traced refunds',
        world: () => {
          const w = ordersHarnessWorld();
          worlds.push(w);
          return w;
        },
        request: { tenant: 't', runId: 'wf-h', workflow: 'refunds', input: { lines: [2, 3] } },
        sideEffects: () => [],
      },
      { doubleCrashStride: 5 },
    );
    expect(report.failed, formatHarnessReport(report)).toBe(0);
    expect(worlds.length).toBeGreaterThan(10);
    const harnessRun = { tenant: 't', runId: 'wf-h' };
    const subRun = { tenant: 't', runId: 'wf-h-cop-3' };
    let checked = 0;
    for (const [i, w] of worlds.entries()) {
      const log = await logOf(w, harnessRun);
      if (!log.some((e) => e.type === 'run_completed')) continue;
      const mine = w.tracer.spans.filter((s) => s.traceId === traceIdOf(harnessRun));
      const theirs = w.tracer.spans.filter((s) => s.traceId === traceIdOf(subRun));
      expect(mine.length + theirs.length, `world ${i}: every span in one of the two traces`).toBe(w.tracer.spans.length);
      expect(traceFailures(mine, log, harnessRun), `world ${i}`).toEqual([]);
      expect(traceFailures(theirs, await logOf(w, subRun), subRun), `world ${i} child`).toEqual([]);
      // A child workflow of a workflow: linked both ways.
      expect(mine.find((s) => s.name === 'logbook.workflow.child check')?.links?.[0], `world ${i}`).toMatchObject({ traceId: traceIdOf(subRun), spanId: rootSpanIdOf(subRun) });
      const subRoot = theirs.find((s) => s.spanId === rootSpanIdOf(subRun));
      expect(subRoot?.attributes['logbook.run.kind'], `world ${i}`).toBe('workflow');
      expect(subRoot?.links?.[0], `world ${i}`).toMatchObject({ traceId: traceIdOf(harnessRun), spanId: rootSpanIdOf(harnessRun) });
      checked++;
    }
    expect(checked).toBeGreaterThan(10);
  });
});

function ordersHarnessWorld() {
  const flow = defineWorkflow({
    name: 'refunds',
    version: '1',
    input: z.object({ lines: z.array(z.number()) }),
    async run(ctx, input) {
      const lines = await ctx.step('load', () => input.lines, { policy: 'rerun' });
      await ctx.sleep(60);
      const checked = await ctx.workflow(check, { n: lines.length });
      return ctx.step('refund', (s) => `${s.idempotencyKey}:${checked}`, { policy: 'idempotency_key' });
    },
  });
  const check = defineWorkflow({
    name: 'check',
    version: '1',
    input: z.object({ n: z.number() }),
    async run(ctx, input) {
      return ctx.step('count', () => input.n * 2, { policy: 'rerun' });
    },
  });
  const tracer = collectTracer();
  return { ...agentsWorld(defineAgents({ agents: [], workflows: [flow, check] })), tracer };
}

describe('a fan-out of waits under tracing', () => {
  it('closes each wait from the folded state: a step reads O(1) events of the log, not the ~n since the first wait opened', async () => {
    const n = 40;
    const fan = defineWorkflow({
      name: 'fan',
      version: '1',
      async run(ctx) {
        // n sleeps open together, each ending a second after the one before: n wake-ups, one result each.
        await ctx.all(Array.from({ length: n }, (_, i) => ctx.sleep(i + 1)));
        return 'done';
      },
    });
    const tracer = collectTracer();
    const world = { ...agentsWorld(defineAgents({ agents: [], workflows: [fan] })), tracer };
    const worker = spawnWorker(world);
    await startRun(worker.deps, { ...run, workflow: 'fan', input: {} });
    await drain(world, worker);
    // Count the events the log hands out from here on (the engine's warm load reads only what is new).
    const log = world.storage.log;
    const read = log.read.bind(log);
    let itemsRead = 0;
    log.read = async (...args: Parameters<typeof log.read>) => {
      const page = await read(...args);
      itemsRead += page.events.length;
      return page;
    };
    for (let i = 1; i <= n; i++) await later(world, worker, 1_000, i);
    const perWakeUp = itemsRead / n;
    const events = await logOf(world, run);
    expect(events.at(-1)?.type).toBe('run_completed');
    // Each wake-up reads its own few new events; before seeding, each re-read the ~n events back to the first sleep.
    expect(perWakeUp).toBeLessThan(6);
    // Every sleep still has its span, from its start (its op_started) to its result, under the step that started it.
    const sleeps = tracer.spans.filter((s) => s.name === 'logbook.workflow.sleep');
    expect(new Set(sleeps.map((s) => s.attributes['logbook.op.number'])).size).toBe(n);
    const started = events.filter((e) => e.type === 'op_started');
    for (const span of sleeps) {
      const first = started.find((e) => (e as { op: number }).op === span.attributes['logbook.op.number'])!;
      expect(span.start).toBe(first.at);
      expect(span.parentSpanId).toBe(stepSpanIdOf(run, first.by.epoch));
    }
    expect(traceFailures(tracer.spans, events, run)).toEqual([]);
  });
});
