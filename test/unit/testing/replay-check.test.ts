import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineAgents, defineTool, type Agents, type JsonValue } from 'logbook';
import { runStep, startRun } from 'logbook/engine';
import { WorkerHalt, agentsWorld, checkReplay, driveRun, effectLog, formatReplayReport, spawnWorker, type RecordedRun } from 'logbook/testing';
import { modelsFromEnv } from '../../../lib/models/model-config.js';
import { missingModel } from '../../../lib/testing/replay-reasons.js';
import { SHOP_MODEL, shopAgents, shopModel, shopTools } from './shop-agent.js';

/**
 * Record three runs of the shop agent as they are before a deploy: one mid-run (after its first
 * turn), one finished, one parked because its model had gone (a deploy that dropped it).
 */
async function recordRuns(): Promise<{ running: RecordedRun; finished: RecordedRun; parked: RecordedRun }> {
  const world = agentsWorld(shopAgents(effectLog<JsonValue>()));
  const worker = spawnWorker(world);
  // A worker that dies as it is about to make its second model call: the run stays mid-run.
  let modelCalls = 0;
  const dying = spawnWorker(world, {
    at(point) {
      if (point === 'before-model' && ++modelCalls === 2) throw new WorkerHalt('before the second model call');
    },
  });
  const record = async (runId: string): Promise<RecordedRun> => ({ runId, events: (await world.storage.log.read({ tenant: 't', runId }, { afterSeq: 0 })).events });
  await startRun(worker.deps, { tenant: 't', runId: 'mid-run', agent: 'shop', input: 'one mug' });
  const tick = world.storage.queue.take();
  if (!tick) throw new Error('no first tick');
  await expect(runStep(dying.deps, tick.tick, { owner: 'w', deadlineAt: world.clock.now() + 300_000 })).rejects.toBeInstanceOf(WorkerHalt);
  await startRun(worker.deps, { tenant: 't', runId: 'done-run', agent: 'shop', input: 'one mug' });
  expect((await driveRun(world, { tenant: 't', runId: 'done-run' }, { worker: () => worker })).head.status).toBe('completed');
  // A world whose models lack the pinned id: the run parks for missing_model at its first step.
  const bare = { ...world, models: { resolve: () => undefined } };
  const bareWorker = spawnWorker(bare);
  await startRun(bareWorker.deps, { tenant: 't', runId: 'parked-run', agent: 'shop', input: 'one mug' });
  expect((await driveRun(bare, { tenant: 't', runId: 'parked-run' }, { worker: () => bareWorker })).head.status).toBe('parked');
  return { running: await record('mid-run'), finished: await record('done-run'), parked: await record('parked-run') };
}

const logs = await recordRuns();

/** Version 2 of the shop: the same agent name, with the changes a deploy might bring. */
function shopV2(change: { chargeInput?: z.ZodType<{ amount: number }>; modelId?: string; keepV1?: boolean } = {}): Agents {
  const effects = effectLog<JsonValue>();
  const tools = shopTools(effects).map((t) =>
    t.name !== 'charge_card'
      ? t
      : defineTool({
          name: 'charge_card',
          version: '2',
          description: t.description,
          input: change.chargeInput ?? z.object({ amount: z.number().positive() }),
          policy: 'escalate',
          timeoutMs: 5_000,
          // A bug fix in the implementation: rounds to cents now. The schema is the same.
          execute: async ({ amount }, ctx) => effects.write('charge', ctx.idempotencyKey, { charged: Math.round(amount * 100) / 100 }).detail ?? null,
        }),
  );
  const modelId = change.modelId ?? SHOP_MODEL;
  const v2 = defineAgent({
    name: 'shop',
    version: '2',
    model: { id: modelId, maxOutputTokens: 256, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
    system: { version: 'p2', text: 'You sell mugs and cups.' },
    tools,
  });
  const v1 = shopAgents(effects).registry.agent('shop', '1');
  return defineAgents({
    agents: change.keepV1 && v1 ? [v1, v2] : [v2],
    models: modelId.startsWith('scripted') ? { [modelId]: () => shopModel() } : {},
  });
}

describe('checkReplay: will this deploy strand the recorded runs?', () => {
  it('a bug fix in a tool implementation with the same schema: ok; finished runs are skipped', () => {
    const report = checkReplay({ agents: shopV2(), logs: [logs.running, logs.finished] });
    expect(report.runs.map((r) => [r.runId, r.status, r.verdict])).toEqual([
      ['mid-run', 'running', 'ok'],
      ['done-run', 'completed', 'finished'],
    ]);
    expect(report).toMatchObject({ ok: 1, stranded: 0, finished: 1 });
    // The run goes on with what it pinned; v1 is only gone for new runs.
    expect(report.runs[0]?.notes).toEqual(['agent shop@1 is no longer registered: the run goes on with what it pinned, but no new run can start on that version']);
  });

  it('a tool whose input schema changed strands the run, naming the tool, both schemas and what changed', () => {
    const agents = shopV2({ chargeInput: z.object({ amount: z.number().positive(), currency: z.string() }) });
    const report = checkReplay({ agents, logs: [logs.running] });
    const [run] = report.runs;
    expect(run?.verdict).toBe('stranded');
    expect(run?.reasons).toHaveLength(1);
    const reason = run?.reasons[0];
    if (reason?.code !== 'missing_tool') throw new Error(`expected missing_tool, got ${JSON.stringify(reason)}`);
    const newHash = agents.registry.list()[0]?.pinnedTools.find((t) => t.name === 'charge_card')?.schemaHash ?? '';
    expect(reason).toMatchObject({ tool: 'charge_card', version: '1', registeredSchemaHashes: [newHash], openCalls: [] });
    expect(reason.message).toMatch(
      new RegExp(
        `^tool charge_card@1 \\(schema ${reason.schemaHash.slice(0, 12)}\\) has no implementation: charge_card is registered only with schema ${newHash.slice(0, 12)} \\(adds required "currency"\\); the run parks as soon as the model calls it\\. Keep the old definition registered until these runs end$`,
      ),
    );
    expect(report.stranded).toBe(1);
    // Keeping v1 registered beside v2 is the fix: its tools stay available for pinned runs.
    const fixed = checkReplay({ agents: shopV2({ chargeInput: z.object({ amount: z.number(), currency: z.string() }), keepV1: true }), logs: [logs.running] });
    expect(fixed.runs[0]).toMatchObject({ verdict: 'ok', notes: [] });
  });

  it('a removed tool strands the run; an open call that needs it is named', () => {
    const noCharge = defineAgents({
      agents: [defineAgent({ name: 'shop', version: '3', model: { id: SHOP_MODEL, maxOutputTokens: 256 }, system: { version: 'p', text: 't' }, tools: shopTools(effectLog<JsonValue>()).filter((t) => t.name !== 'charge_card' && t.name !== 'reserve_item') })],
      models: { [SHOP_MODEL]: () => shopModel() },
    });
    // The same run as it was before its first tool result: both calls of the turn are open, as
    // in a run caught between tool_started and tool_result.
    const firstResult = logs.running.events.findIndex((e) => (e as { type: string }).type === 'tool_result');
    const open = { runId: 'open-call', events: logs.running.events.slice(0, firstResult) };
    const report = checkReplay({ agents: noCharge, logs: [logs.running, open] });
    expect(report.runs[0]?.reasons.map((r) => r.message)).toEqual([
      expect.stringMatching(/^tool reserve_item@1 \(schema [0-9a-f]{12}\) has no implementation: no tool named reserve_item is registered; the run parks as soon as the model calls it/),
      expect.stringMatching(/^tool charge_card@1 .* no tool named charge_card is registered;/),
    ]);
    expect(report.runs[1]?.reasons[0]).toMatchObject({ code: 'missing_tool', tool: 'reserve_item', openCalls: ['3-1'] });
    expect(report.runs[1]?.reasons[0]?.message).toMatch(/call 3-1 needs it now/);
  });

  it('a model the deploy no longer serves strands the run; a parked run this deploy can lift gets a note', () => {
    const report = checkReplay({ agents: shopV2({ modelId: 'scripted:shop-2' }), logs: [logs.running, logs.parked] });
    for (const run of report.runs) {
      expect(run.verdict).toBe('stranded');
      expect(run.reasons).toEqual([
        { code: 'missing_model', modelId: SHOP_MODEL, message: `model ${SHOP_MODEL} cannot be served: it is not among the application's models (defineAgents({ models: { ... } }))` },
      ]);
    }
    expect(report.runs[1]?.status).toBe('parked');
    // The same parked run against agents that serve its model again: ok, and retry lifts the park.
    const back = checkReplay({ agents: shopV2({ keepV1: true }), logs: [logs.parked] });
    expect(back.runs[0]).toMatchObject({ verdict: 'ok', notes: ['parked for missing_model; this deploy serves it: resolve with {"action":"retry"}'] });
  });

  it('built-in model ids: bedrock only where the worker may invoke it, openai only when configured', () => {
    const pinned = (modelId: string) => ({
      runId: modelId,
      events: logs.running.events.map((e, i) => (i === 0 ? { ...(e as object), model: { ...(e as { model: object }).model, id: modelId } } : e)),
    });
    const agents = shopV2({ modelId: 'bedrock:anthropic.claude-new' });
    const report = checkReplay({
      agents,
      logs: [pinned('bedrock:anthropic.claude-new'), pinned('bedrock:anthropic.claude-old'), pinned('openai:gpt-x'), pinned('vendor:model'), pinned('aisdk:gone.chat/m')],
    });
    expect(report.runs.map((r) => [r.runId, r.verdict])).toEqual([
      ['bedrock:anthropic.claude-new', 'ok'],
      ['bedrock:anthropic.claude-old', 'stranded'],
      ['openai:gpt-x', 'stranded'],
      ['vendor:model', 'stranded'],
      ['aisdk:gone.chat/m', 'stranded'],
    ]);
    expect(report.runs[1]?.reasons[0]?.message).toMatch(/the worker may invoke only bedrock:anthropic\.claude-new \(bedrock:InvokeModel is granted on the models the agents pin\)/);
    expect(report.runs[2]?.reasons[0]?.message).toMatch(/sets neither OPENAI_BASE_URL nor OPENAI_API_KEY/);
    expect(report.runs[3]?.reasons[0]?.message).toMatch(/neither one of the application's models nor a built-in provider id/);
    expect(report.runs[4]?.reasons[0]?.message).toMatch(/it is an AI SDK model the application no longer lists/);
    const configured = checkReplay({
      agents,
      logs: [pinned('bedrock:anthropic.claude-old'), pinned('openai:gpt-x')],
      env: { OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' },
      deployedModelIds: ['bedrock:anthropic.claude-new', 'bedrock:anthropic.claude-old'],
    });
    expect(configured.runs.map((r) => r.verdict)).toEqual(['ok', 'ok']);
  });

  it('follows the worker wiring: an id counts as servable exactly when the built-in resolver builds a client for it', () => {
    const agents = defineAgents({ agents: [defineAgent({ name: 'a', version: '1', model: { id: 'bedrock:m', maxOutputTokens: 1 }, system: { version: '1', text: 't' }, tools: [] })] });
    const ids = ['bedrock:m', 'openai:gpt-4o', 'scripted', 'scripted:x', 'nope', 'openai:'];
    const envs = [{}, { OPENAI_API_KEY: 'k' }, { OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' }, { OPENAI_BASE_URL: '' }];
    for (const env of envs) {
      const builtIn = modelsFromEnv(env).resolver;
      for (const id of ids) {
        const ours = missingModel(id, { agents, env, deployedModelIds: [id] }) === undefined;
        expect(ours, `${id} with ${JSON.stringify(env)}`).toBe(builtIn.resolve(id) !== undefined);
      }
    }
  });

  it('a log this code cannot read strands its run: corrupt, unknown event type, newer schema version, API-invalid', () => {
    const events = logs.running.events as Record<string, unknown>[];
    const gap = { runId: 'gap', events: events.filter((e) => e.seq !== 3) };
    const unknownType = { runId: 'unknown-type', events: [...events, { ...events[1], seq: events.length + 1, type: 'event_from_the_future' }] };
    const newer = { runId: 'newer', events: [...events, { ...events[1], seq: events.length + 1, v: 2 }] };
    const invalid = { runId: 'invalid', events: [...events, { seq: events.length + 1, type: 'invalid', error: 'seq 8: event fails validation at output: Invalid input' }] };
    const report = checkReplay({ agents: shopV2({ keepV1: true }), logs: [gap, unknownType, newer, invalid, [], events] });
    expect(report.runs.map((r) => [r.runId, r.status, r.verdict, r.reasons[0]?.code])).toEqual([
      ['gap', 'unknown', 'stranded', 'corrupt_log'],
      ['unknown-type', 'unknown', 'stranded', 'unknown_event_type'],
      ['newer', 'unknown', 'stranded', 'newer_event_version'],
      ['invalid', 'unknown', 'stranded', 'corrupt_log'],
      ['(log 5)', 'unknown', 'stranded', 'corrupt_log'],
      ['mid-run', 'running', 'ok', undefined],
    ]);
    expect(report.runs[0]?.reasons[0]?.message).toBe('the log does not fold: seq 4: expected seq 3, found 4 (gap or repeat)');
    expect(report.runs[1]?.reasons[0]?.message).toMatch(/has event type "event_from_the_future", which this code does not know/);
    expect(report.runs[2]?.reasons[0]?.message).toMatch(/is in event schema v2, this code reads up to v1/);
    expect(report.runs[3]?.reasons[0]?.message).toMatch(/^the API could not read seq \d+: seq 8: event fails validation/);
    expect(report.runs[0]?.agent).toEqual({ name: 'shop', version: '1' });
    expect(formatReplayReport(report)).toMatch(/^6 runs: 1 ok, 5 stranded, 0 finished \(skipped\)\ngap shop@1 unknown: stranded\n {2}- corrupt_log: the log does not fold/);
  });
});
