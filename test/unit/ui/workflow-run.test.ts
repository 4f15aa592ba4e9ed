// A workflow run (defineWorkflow) as the inspector reads it, from a log recorded by the memory
// world: the run model folds op_* events into calls `op-<n>` (a wait is not "started with no
// result"), the timeline describes every op event, the waterfall draws each step attempt from its
// op_started to its result (a retried attempt failed, a rerun step from the worker's previous
// write), sleeps and signals as wait bars, the child run as a bar naming the child, value ops
// (ctx.now) as no bar; the operations table's rows come from GET /runs/{id}/operations' shape; the
// run page offers the signal for `op-<n>`, cancel, and no follow-up message or fork.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { defineWorkflow } from '../../../lib/authoring/define-workflow.js';
import { ScriptedModel } from '../../../lib/models/scripted-model.js';
import { requestSignal } from '../../../lib/engine/control-requests.js';
import { operationsPage } from '../../../lib/api/workflow-views.js';
import { runView } from '../../../lib/api/run-views.js';
import { allowedActions } from '../../../dev/ui/client/allowed-actions.js';
import { operationRow } from '../../../dev/ui/client/operation-rows.js';
import { emptyModel, foldEvent, pendingCalls, spans } from '../../../dev/ui/client/run-model.js';
import type { LogEvent, Operation, RunView } from '../../../dev/ui/client/types.js';
import { layoutWaterfall } from '../../../dev/ui/client/waterfall.js';
import type { World } from '../../../lib/testing/world.js';
import { drain, headOf, later } from '../control/helpers.js';
import { logOf } from '../engine/helpers.js';
import { startAndDrain, workflowWorld } from './../workflows/world.js';

const HOSTILE = '<img src=x onerror="window.__xss=1">';

const classifier = defineAgent({
  name: 'classifier',
  version: '1',
  input: z.object({ text: z.string() }),
  model: { id: 'scripted:classifier', maxOutputTokens: 256, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
  system: { version: 'v1', text: 'Classify.' },
  tools: [],
});
const models = { 'scripted:classifier': () => new ScriptedModel([{ text: 'refund' }]) };

let world: World | undefined;
let chargeAttempts = 0;
const fulfil = defineWorkflow({
  name: 'fulfil',
  version: '2',
  input: z.object({ order: z.string() }),
  async run(ctx, input) {
    const charge = await ctx.step(
      'charge',
      async () => {
        chargeAttempts++;
        await world?.clock.advance(40);
        if (chargeAttempts === 1) throw new Error('card network down');
        return { charged: input.order };
      },
      { policy: 'idempotency_key' },
    );
    const note = await ctx.step(
      'lookup',
      async () => {
        await world?.clock.advance(30);
        return { note: HOSTILE };
      },
      { policy: 'rerun' },
    );
    await ctx.sleep(60);
    const shipped = await ctx.waitForSignal('shipped', { payload: z.object({ tracking: z.string() }), timeoutSeconds: 3_600 });
    const verdict = await ctx.agent(classifier, { text: 'broken' });
    const at = await ctx.now();
    return { charge, note, shipped: shipped.timedOut ? null : shipped.payload.tracking, verdict, at: at.toISOString() };
  },
});

describe('a workflow run in the inspector', () => {
  it('folds, describes, lays out and tabulates a recorded workflow log', async () => {
    chargeAttempts = 0;
    const t = workflowWorld({ workflows: [fulfil], agents: [classifier], models });
    world = t.world;
    await startAndDrain(t, 'fulfil', { order: 'o-1' });
    // The first charge attempt threw: the next starts at retryAt (1 s later). Meanwhile the step is
    // retrying, not a call a crash cut off.
    const retrying = emptyModel();
    for (const e of (await logOf(t.world, t.run)).events) foldEvent(retrying, e as unknown as LogEvent);
    expect(retrying.calls.get('op-1')?.attempts.map((a) => a.threw?.code !== undefined)).toEqual([true]);
    expect(pendingCalls(retrying)).toEqual([]);
    await later(t.world, t.worker, 1_500, 1);
    // The sleep: 60 s.
    await later(t.world, t.worker, 61_000, 2);
    const waiting = await headOf(t.world, t.run);
    expect(waiting.status).toBe('waiting');

    // While the signal is awaited: the page offers the signal for op-4 (no message: a workflow takes none).
    const { events: mid } = await logOf(t.world, t.run);
    const started = mid.find((e) => e.type === 'run_started');
    const view = JSON.parse(JSON.stringify(runView(waiting, started as never, undefined))) as RunView;
    expect(view).toMatchObject({ kind: 'workflow', workflow: { name: 'fulfil', version: '2' } });
    const allowed = allowedActions(view);
    expect(allowed.signals).toMatchObject([{ callId: 'op-4', kind: 'signal', signal: 'shipped' }]);
    // No fork either: the engine's fork copies an agent's run_started only (a workflow's is refused as corrupt).
    expect(allowed).toMatchObject({ message: false, cancel: true, fork: true });
    const midModel = emptyModel();
    for (const e of mid) foldEvent(midModel, e as unknown as LogEvent);
    // The form's schema comes from the op's own op_started; a wait is not a call cut off by a crash.
    expect(midModel.calls.get('op-4')?.op?.wait).toMatchObject({ kind: 'signal', signal: 'shipped', payloadSchema: { type: 'object' } });
    expect(pendingCalls(midModel)).toEqual([]);

    await t.world.clock.advance(5_000);
    await requestSignal(t.worker.deps, t.run, { signal: 'shipped', payload: { tracking: 'TRK-9' } }, 'alice');
    await drain(t.world, t.worker);
    const { events, state } = await logOf(t.world, t.run);
    expect(state.outcome, JSON.stringify(state.outcome)).toMatchObject({ type: 'completed' });
    const log = events as unknown as LogEvent[];

    // The model: every operation as a call op-<n>, with its kind, attempts and result.
    const model = emptyModel();
    for (const e of log) foldEvent(model, e);
    const calls = [...model.calls.values()].filter((c) => c.op);
    expect(calls.map((c) => [c.callId, c.name, c.op?.kind, c.attempts.length, c.result?.ok, c.result?.source])).toEqual([
      ['op-1', 'step charge', 'step', 2, true, 'step'],
      ['op-2', 'step lookup', 'step', 0, true, 'step'],
      ['op-3', 'sleep', 'sleep', 1, true, 'timer'],
      ['op-4', 'signal shipped', 'signal', 1, true, 'signal'],
      ['op-5', 'child classifier', 'child', 1, true, 'child'],
      ['op-6', 'now', 'now', 0, true, 'value'],
    ]);
    expect(model.calls.get('op-1')).toMatchObject({ policy: 'idempotency_key', lastError: expect.any(String) });
    // The duration strip: the step attempts (the first failed), not the waits.
    expect(
      spans(model)
        .filter((x) => x.label.includes('op-'))
        .map((x) => [x.label, x.end !== undefined && x.end - x.start, x.ok]),
    ).toEqual([
      [expect.stringMatching(/^step charge \(op-1\) attempt 1, threw \S+ \(retried\)$/), 40, false],
      ['step charge (op-1) attempt 2', 40, true],
    ]);
    expect(model.calls.get('op-5')?.op?.wait).toMatchObject({ kind: 'child', childRunId: 'wf-1-cop-5', child: { kind: 'agent', name: 'classifier' } });

    // The timeline: each op event says what happened (timeline.ts builds DOM rows too: imported by
    // path, so this file's typecheck does not take in the page's DOM types).
    const timelineFile = new URL('../../../dev/ui/client/timeline.ts', import.meta.url).pathname;
    const { describe: describeEvent } = (await import(timelineFile)) as { describe: (e: LogEvent) => string };
    const text = (type: string, op: number) => describeEvent(log.find((e) => e.type === type && e.op === op) as LogEvent);
    expect(text('op_started', 1)).toBe('step charge (op-1) starts, attempt 1 (idempotency_key)');
    expect(text('op_retry', 1)).toMatch(/^charge \(op-1\) attempt 1 threw \S+: card network down; retries at /);
    expect(text('op_started', 4)).toBe('signal shipped (op-4) waits for signal shipped');
    expect(text('op_result', 4)).toBe('signal shipped (op-4): ok from signal by alice');
    expect(text('op_started', 5)).toBe('child classifier (op-5) starts child run wf-1-cop-5 (agent classifier)');
    expect(describeEvent(log[0] as LogEvent)).toBe('workflow fulfil@2');

    // The waterfall: the operations' bars, from their events' times.
    const at = (type: string, op: number, nth = 0) => (log.filter((e) => e.type === type && e.op === op)[nth] as LogEvent).at;
    const layout = layoutWaterfall(log, t.world.clock.now());
    const ops = layout.bars.filter((b) => b.kind === 'op' || b.kind === 'wait' || b.kind === 'child');
    expect(ops.map((b) => [b.kind, b.label, b.start, b.end, b.failed ?? false, b.open ?? false])).toEqual([
      ['op', 'step charge (op-1)', at('op_started', 1), at('op_retry', 1), true, false],
      ['op', 'step charge (op-1), attempt 2', at('op_started', 1, 1), at('op_result', 1), false, false],
      ['op', 'step lookup (op-2)', at('op_result', 1), at('op_result', 2), false, false],
      ['wait', 'sleep (op-3)', at('op_started', 3), at('op_result', 3), false, false],
      ['wait', 'signal shipped (op-4)', at('op_started', 4), at('op_result', 4), false, false],
      ['child', 'child classifier (op-5) → wf-1-cop-5', at('op_started', 5), at('op_result', 5), false, false],
    ]);
    // Real durations: the attempts took 40 ms, the rerun step 30, the sleep 60 s, the signal 5 s more.
    expect(ops[0]!.end - ops[0]!.start).toBe(40);
    expect(ops[2]!.end - ops[2]!.start).toBe(30);
    expect(ops[3]!.end - ops[3]!.start).toBeGreaterThanOrEqual(60_000);
    expect(ops[4]!.end - ops[4]!.start).toBe(5_000);
    expect(ops.find((b) => b.kind === 'child')?.childRunId).toBe('wf-1-cop-5');
    // The run waited between steps for what its operations wait for.
    expect(layout.gaps.map((g) => g.reason)).toEqual(['waits for a retry', 'waits for a timer', 'waits for signal shipped']);

    // The operations table's rows, from the API's own operations page.
    const page = JSON.parse(JSON.stringify(await operationsPage(t.worker.deps, t.run, { after: 0, limit: 100 }))) as { operations: Operation[] };
    const rows = page.operations.map(operationRow);
    expect(rows.map((r) => [r.callId, r.kind, r.name, r.status, r.attempts])).toEqual([
      ['op-1', 'step', 'charge', 'succeeded', '2 (idempotency_key)'],
      ['op-2', 'step', 'lookup', 'succeeded', '1'],
      ['op-3', 'sleep', 'sleep', 'succeeded', ''],
      ['op-4', 'signal', 'shipped', 'succeeded', ''],
      ['op-5', 'child', 'classifier', 'succeeded', ''],
      ['op-6', 'now', 'now', 'succeeded', ''],
    ]);
    expect(rows[1]!.outcome).toBe(`${JSON.stringify({ note: HOSTILE }, null, 2)} (from step)`);
    expect(rows[3]!.outcome).toContain('"tracking": "TRK-9"');
    expect(rows[3]!.outcome).toContain('by alice');
    expect(rows[4]!.child).toEqual({ runId: 'wf-1-cop-5', label: 'agent classifier@1' });
    expect(rows.every((r) => r.started !== '' && r.ended !== '')).toBe(true);
  });

  it('a retrying step and a failed one say their error; a waiting signal what it waits for', () => {
    const base = { callId: 'op-1', op: 1, kind: 'step' as const, name: 'charge', seq: 2, attempt: 2 };
    expect(operationRow({ ...base, status: 'retrying', error: { code: 'step_failed', message: 'down' }, retryAt: '2026-01-01T00:00:01Z' }).outcome).toMatch(
      /^last attempt threw step_failed: down; next at /,
    );
    expect(operationRow({ ...base, status: 'failed', source: 'step', error: { code: 'E_CARD', message: HOSTILE } }).outcome).toBe(
      `E_CARD: ${HOSTILE} (from step)`,
    );
    expect(
      operationRow({ ...base, op: 4, callId: 'op-4', kind: 'signal', name: 'shipped', status: 'started', waitsFor: { kind: 'signal', signal: 'shipped' } })
        .outcome,
    ).toBe('waits for signal shipped');
  });
});
