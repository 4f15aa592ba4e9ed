/**
 * What an eval never does: execute a side-effecting tool. A candidate that asks for calls the
 * recorded run never made (and repeats one more often than it did) leaves the fake services'
 * ledger empty; it sees an error result for each call that was not executed and goes on. Only
 * with the opt-in, a read-only (rerun) tool runs for real, and still no write does.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ScriptedModel, defineAgent, defineAgents, defineTool, type JsonValue, type ScriptStep } from 'logbook';
import { requestApproval, startRun } from 'logbook/engine';
import { agentsWorld, driveRun, effectLog, exportRuns, runEval, spawnWorker, type EffectRecorder, type ExportedRun } from 'logbook/testing';

function deskAgents(effects: EffectRecorder<JsonValue>, script: ScriptStep[], version = '1') {
  const tools = [
    defineTool({
      name: 'lookup',
      version: '1',
      description: 'Stock of a product.',
      input: z.object({ sku: z.string() }),
      policy: 'rerun',
      execute: async ({ sku }, ctx) => (effects.read('lookup', ctx.idempotencyKey, sku), { sku, stock: 3 }),
    }),
    defineTool({
      name: 'order',
      version: '1',
      description: 'Order a product.',
      input: z.object({ sku: z.string(), qty: z.number() }),
      policy: 'idempotency_key',
      execute: async (args, ctx) => (effects.writeOnce('order', ctx.idempotencyKey, args), { orderId: `o-${args.sku}-${args.qty}` }),
    }),
    defineTool({
      name: 'notify',
      version: '1',
      description: 'Tell a person.',
      input: z.object({ to: z.string() }),
      approval: 'always',
      execute: async (args, ctx) => (effects.write('notify', ctx.idempotencyKey, args), { sent: true }),
    }),
  ];
  const agent = defineAgent({
    name: 'desk',
    version,
    model: { id: 'scripted:desk', maxOutputTokens: 200, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
    system: { version: `p${version}`, text: 'You order things.' },
    tools,
  });
  return defineAgents({ agents: [agent], models: { 'scripted:desk': () => new ScriptedModel(script) } });
}

const RECORDED: ScriptStep[] = [
  { text: 'looking', calls: [{ name: 'lookup', args: { sku: 'mug' } }] },
  { text: 'ordering', calls: [{ name: 'order', args: { sku: 'mug', qty: 1 } }] },
  { text: 'telling', calls: [{ name: 'notify', args: { to: 'ops' } }] },
  { text: 'ordered one mug' },
];

/** A candidate that looks up a new product, repeats a lookup, orders more and still notifies. */
const CANDIDATE: ScriptStep[] = [
  { text: 'looking', calls: [{ name: 'lookup', args: { sku: 'cup' } }] },
  { text: 'looking', calls: [{ name: 'lookup', args: { sku: 'mug' } }] },
  { text: 'again', calls: [{ name: 'lookup', args: { sku: 'mug' } }] },
  { text: 'ordering', calls: [{ name: 'order', args: { qty: 2, sku: 'mug' } }] },
  { text: 'telling', calls: [{ name: 'notify', args: { to: 'ops' } }] },
  { text: 'ordered two mugs' },
];

async function recordDesk(): Promise<{ runs: ExportedRun[]; effects: EffectRecorder<JsonValue> }> {
  const effects = effectLog<JsonValue>();
  const world = agentsWorld(deskAgents(effects, RECORDED));
  const worker = spawnWorker(world);
  const run = { tenant: 't', runId: 'desk-1' };
  await startRun(worker.deps, { ...run, agent: 'desk', input: 'order a mug' });
  const { head } = await driveRun(world, run, {
    worker: () => worker,
    outside: async (h, deps) => {
      const wait = h.waits?.find((w) => w.kind === 'approval');
      if (!wait) return false;
      await requestApproval(deps, run, { callId: wait.callId, decision: 'approve' }, 'ops');
      return true;
    },
  });
  expect(head.status).toBe('completed');
  return { runs: await exportRuns(world.storage, [run]), effects };
}

describe('no side effect under eval', () => {
  it('a candidate asking new calls executes none of them: the ledger stays empty, each gets a "not executed" result', async () => {
    const { runs, effects: recordedEffects } = await recordDesk();
    expect(recordedEffects.all().filter((e) => !e.readOnly)).toHaveLength(2);
    const effects = effectLog<JsonValue>();
    const report = await runEval({ runs, candidate: () => deskAgents(effects, CANDIDATE, '2') });
    expect(effects.all()).toEqual([]);
    const [result] = report.runs;
    expect(result?.calls).toEqual({ served: 2, notExecuted: 3, executed: 0 });
    expect(result?.wouldCall.map((c) => `${c.tool} ${JSON.stringify(c.args)}`)).toEqual([
      'lookup {"sku":"cup"}',
      'lookup {"sku":"mug"}',
      'order {"qty":2,"sku":"mug"}',
    ]);
    // The candidate saw an error result for each, and went on to its answer.
    const seen = result?.candidate?.toolCalls.map((c) => [c.name, c.result?.ok, (c.result?.output as { error?: string }).error]);
    expect(seen).toEqual([
      ['lookup', false, 'not_executed_under_eval'],
      ['lookup', true, undefined],
      ['lookup', false, 'not_executed_under_eval'],
      ['order', false, 'not_executed_under_eval'],
      ['notify', true, undefined],
    ]);
    expect((result?.candidate?.toolCalls[3]?.result?.output as { message: string }).message).toBe(
      'not executed under eval: the recorded run has no result for this call; would call order({"qty":2,"sku":"mug"})',
    );
    expect(result?.candidate?.status).toBe('completed');
    expect(result?.scores.same_output?.score).toBe(0);
    expect(report.counts).toMatchObject({ served: 2, notExecuted: 3, executed: 0 });
  });

  it('with allowReadOnlyTools, only rerun tools run for real: reads happen, writes still do not', async () => {
    const { runs } = await recordDesk();
    const effects = effectLog<JsonValue>();
    const report = await runEval({ runs, candidate: () => deskAgents(effects, CANDIDATE, '2'), allowReadOnlyTools: true });
    expect(effects.all().map((e) => [e.op, e.readOnly])).toEqual([
      ['lookup', true],
      ['lookup', true],
    ]);
    expect(report.runs[0]?.calls).toEqual({ served: 2, notExecuted: 1, executed: 2 });
    expect(report.runs[0]?.wouldCall.map((c) => c.tool)).toEqual(['order']);
  });

  it('the recorded candidate itself is served whole: every call from the log, the same answer, the approval not asked again', async () => {
    const { runs } = await recordDesk();
    const effects = effectLog<JsonValue>();
    const report = await runEval({ runs, candidate: () => deskAgents(effects, RECORDED), minScore: 1 });
    expect(report.passed).toBe(true);
    expect(report.runs[0]?.calls).toEqual({ served: 3, notExecuted: 0, executed: 0 });
    expect(report.runs[0]?.candidate?.answer).toBe('ordered one mug');
    expect(effects.all()).toEqual([]);
  });
});

describe('runs an eval does not replay', () => {
  it('refuses a workflow run by name (skipped, not folded as an agent run), and says when the candidate lacks the agent', async () => {
    const { runs } = await recordDesk();
    const recorded = runs[0]!;
    const workflow: ExportedRun = { ...recorded, runId: 'wf-1', events: [{ ...recorded.events[0], kind: 'workflow' }, ...recorded.events.slice(1)] };
    const workflowStarted: ExportedRun = { ...recorded, runId: 'wf-2', events: [{ type: 'workflow_started', seq: 1 }] };
    const effects = effectLog<JsonValue>();
    const report = await runEval({ runs: [recorded, workflow, workflowStarted], candidate: () => deskAgents(effects, RECORDED) });
    expect(report.runs.map((r) => [r.runId, r.status, r.reason?.code])).toEqual([
      ['desk-1', 'evaluated', undefined],
      ['wf-1', 'skipped', 'unsupported_run_kind'],
      ['wf-2', 'skipped', 'unsupported_run_kind'],
    ]);
    expect(report.runs[1]?.reason?.message).toMatch(/a workflow run: evals replay agent runs only/);
    expect(report.passed).toBe(true);
    const other = await runEval({ runs, candidate: () => deskAgents(effects, RECORDED), version: '9' });
    expect(other.runs[0]).toMatchObject({
      status: 'error',
      reason: { code: 'candidate_missing', message: 'the candidate has no agent desk@9 (it has: desk)' },
    });
    expect(other.passed).toBe(false);
  });

  it('a candidate that refuses the recorded input is scored as not started; an unknown threshold name is a config error', async () => {
    const { runs } = await recordDesk();
    const effects = effectLog<JsonValue>();
    const strict = () => {
      const base = deskAgents(effects, RECORDED);
      const desk = base.registry.agent('desk')!;
      return defineAgents({
        agents: [defineAgent({ ...desk, input: z.object({ sku: z.string() }) })],
        models: { 'scripted:desk': () => new ScriptedModel(RECORDED) },
      });
    };
    const report = await runEval({ runs, candidate: strict });
    expect(report.runs[0]?.candidate).toMatchObject({ status: 'not_started', failure: { code: 'validation_error' } });
    expect(report.runs[0]?.scores.same_output?.score).toBe(0);
    await expect(runEval({ runs, candidate: strict, thresholds: { same_outptu: 1 } })).rejects.toThrow(/no such scorer/);
  });
});
