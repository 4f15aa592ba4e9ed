import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ModelRequest } from '../../../lib/core/messages.js';
import { AgentRegistry } from '../../../lib/authoring/registry.js';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { ScriptedModel, StaticModelResolver, type ScriptStep } from '../../../lib/models/scripted-model.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { spawnWorker } from '../../../lib/testing/world.js';
import { ConfigError } from '../../../lib/core/errors.js';
import { haltAt, logOf } from './helpers.js';
import { drain } from '../control/helpers.js';
import { foldLog } from '../../../lib/core/fold.js';
import { decodeSnapshot, encodeSnapshot } from '../../../lib/engine/snapshot-codec.js';

const Booking = z.object({ hotel: z.string(), nights: z.number().int().positive(), note: z.string().default('none') });

/** A scripted model that records every request it gets. */
function recording(script: ScriptStep[]) {
  const model = new ScriptedModel(script);
  const requests: ModelRequest[] = [];
  return {
    requests,
    model: { complete: (r: ModelRequest, o: { signal: AbortSignal }) => (requests.push(r), model.complete(r, o)) },
  };
}

async function run(script: ScriptStep[], output: Parameters<typeof scriptedWorld>[0]['output'] = Booking, tools: Parameters<typeof scriptedWorld>[0]['tools'] = []) {
  const rec = recording(script);
  const t = scriptedWorld({ tools, script: [], model: rec.model, output });
  await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'book me a hotel' });
  const result = await driveRun(t.world, t.run, { worker: () => t.worker });
  return { ...t, ...rec, result, log: await logOf(t.world, t.run) };
}

describe('structured output', () => {
  it('pins the output schema in run_started, asks the model for it, and completes with the parsed output (defaults applied)', async () => {
    const { result, log, requests } = await run([{ text: '{"hotel":"Grand","nights":2}' }]);
    expect(result.head.status).toBe('completed');
    const started = log.events[0] as unknown as { output: { schema: Record<string, unknown>; schemaHash: string; maxRepairs: number } };
    expect(started.output.maxRepairs).toBe(2);
    expect(started.output.schema).toMatchObject({ type: 'object', required: ['hotel', 'nights'] });
    expect(started.output.schemaHash).toMatch(/^[0-9a-f]{64}$/);
    // The model was asked for exactly the pinned schema.
    expect(requests[0]!.output).toEqual({ name: 'final_answer', schema: started.output.schema });
    const response = log.events.find((e) => e.type === 'model_response');
    expect(response).toMatchObject({ output: { kind: 'inline', value: { hotel: 'Grand', nights: 2, note: 'none' } } });
    expect(response!.outputError).toBeUndefined();
    expect(log.events.at(-1)).toMatchObject({
      type: 'run_completed',
      answer: { kind: 'inline', value: '{"hotel":"Grand","nights":2}' },
      output: { kind: 'inline', value: { hotel: 'Grand', nights: 2, note: 'none' } },
    });
  });

  it('feeds an invalid answer back to the model as an error, then completes with the valid one', async () => {
    const { result, log, requests } = await run([{ text: 'Sure! I booked the Grand.' }, { text: '```json\n{"hotel":"Grand","nights":"two"}\n```' }, { text: '{"hotel":"Grand","nights":2}' }]);
    expect(result.head.status).toBe('completed');
    const responses = log.events.filter((e) => e.type === 'model_response');
    expect(responses.map((e) => (e.outputError === undefined ? 'ok' : 'invalid'))).toEqual(['invalid', 'invalid', 'ok']);
    expect(responses[0]!.outputError).toMatch(/not valid JSON/);
    // Inside a code fence the JSON was read, and the schema found what is wrong, by path.
    expect(responses[1]!.outputError).toMatch(/nights/);
    // What the model read before its second and third answers: its answer, then the repair.
    const repair = requests[1]!.messages.at(-1);
    expect(repair).toMatchObject({ role: 'user' });
    expect((repair as { content: string }).content).toMatch(/^Your answer does not match the required output schema: the answer is not valid JSON .*\(correction 1 of at most 2\)\.$/s);
    expect((requests[2]!.messages.at(-1) as { content: string }).content).toMatch(/nights.*\(correction 2 of at most 2\)/s);
    expect(log.state.usage.steps).toBe(3);
    expect(log.state.outcome).toMatchObject({ type: 'completed', output: { value: { hotel: 'Grand', nights: 2, note: 'none' } } });
  });

  it('fails with output_invalid once the pinned repairs are used, the last attempt kept in the log', async () => {
    const { result, log, requests } = await run([{ text: '{"hotel":"Grand"}' }], { schema: Booking, maxRepairs: 1 });
    expect(result.head.status).toBe('failed');
    expect(requests).toHaveLength(2); // the answer and one repair
    const last = log.events.filter((e) => e.type === 'model_response').at(-1)!;
    expect(last).toMatchObject({ text: { value: '{"hotel":"Grand"}' } });
    expect(log.events.at(-1)).toMatchObject({ type: 'run_failed', code: 'output_invalid' });
    expect(log.events.at(-1)!.message).toMatch(new RegExp(`after 1 repair \\(the last answer is the model_response at seq ${last.seq}\\): .*nights`));
  });

  it('repairs count within the run budgets: a repair the steps cannot afford fails on the budget', async () => {
    const rec = recording([{ text: 'no json' }]);
    const t = scriptedWorld({ tools: [], script: [], model: rec.model, output: Booking, budgets: { maxSteps: 1 } });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    const result = await driveRun(t.world, t.run, { worker: () => t.worker });
    expect(result.head.status).toBe('failed');
    expect((await logOf(t.world, t.run)).events.at(-1)).toMatchObject({ type: 'run_failed', code: 'budget_exceeded:steps' });
    expect(rec.requests).toHaveLength(1);
  });

  it('a snapshot keeps the verdict and the repair count: a state decoded from it equals the fold', async () => {
    const { log } = await run([{ text: 'nope' }, { text: '{"hotel":"Grand","nights":2}' }]);
    const upToRepair = foldLog(log.events.slice(0, 3)); // run_started, model_started, the invalid answer
    expect(upToRepair.outputRepairs).toBe(1);
    expect(decodeSnapshot(encodeSnapshot(upToRepair))).toEqual(upToRepair);
    expect(decodeSnapshot(encodeSnapshot(log.state))).toEqual(log.state);
  });

  it('a response that asks for tools carries no verdict; tools run, and the final answer is checked', async () => {
    const hotels = defineTool({ name: 'hotels', version: '1', description: 'list hotels', input: z.object({}), policy: 'rerun', execute: async () => ['Grand'] });
    const { result, log } = await run([{ text: 'looking', calls: [{ name: 'hotels', args: {} }] }, { text: '{"hotel":"Grand","nights":1}' }], Booking, [hotels]);
    expect(result.head.status).toBe('completed');
    const [first, second] = log.events.filter((e) => e.type === 'model_response');
    expect(first!.output).toBeUndefined();
    expect(first!.outputError).toBeUndefined();
    expect(second!.output).toMatchObject({ value: { hotel: 'Grand', nights: 1 } });
  });

  it('a crash after an invalid answer: the resumed run continues the repair count from the log', async () => {
    // maxRepairs 1 and a model that never fits: exactly two answers, crash or not.
    const rec = recording([{ text: 'nope' }]);
    const t = scriptedWorld({ tools: [], script: [], model: rec.model, output: { schema: Booking, maxRepairs: 1 } });
    const dying = spawnWorker(t.world, haltAt('before-model:step 2'));
    await startRun(dying.deps, { ...t.run, agent: 'agent', input: 'go' });
    await expect(drain(t.world, dying)).rejects.toThrow(/before-model:step 2/);
    dying.kill();
    // The first answer and its verdict are in the log; the repair's reservation too.
    const before = await logOf(t.world, t.run);
    expect(before.events.filter((e) => e.type === 'model_response').map((e) => typeof e.outputError)).toEqual(['string']);
    expect(before.state.outputRepairs).toBe(1);
    await t.world.clock.advance(120_000);
    const fresh = spawnWorker(t.world);
    await t.world.storage.queue.enqueue(t.run, { dedupeId: 'redeliver' });
    const result = await driveRun(t.world, t.run, { worker: () => fresh });
    expect(result.head.status).toBe('failed');
    const { events } = await logOf(t.world, t.run);
    expect(events.filter((e) => e.type === 'model_response')).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({ type: 'run_failed', code: 'output_invalid' });
  });

  it("checks a resumed run against the pinned schema even when the agent's code changed it", async () => {
    const t = scriptedWorld({ tools: [], script: [], model: new ScriptedModel([{ text: '{"hotel":"Grand","nights":3}' }]), output: Booking });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    // The same version redeployed with another schema (nights a string now): the pinned one rules.
    const changed = defineAgent({ ...t.agent, output: z.object({ hotel: z.string(), nights: z.string() }) });
    const deployed = { ...t.world, registry: new AgentRegistry().register(changed), models: new StaticModelResolver({ 'scripted:test': new ScriptedModel([{ text: '{"hotel":"Grand","nights":3}' }]) }) };
    const w = spawnWorker(deployed);
    const result = await driveRun(deployed, t.run, { worker: () => w });
    expect(result.head.status).toBe('completed');
    expect((await logOf(t.world, t.run)).state.outcome).toMatchObject({ output: { value: { hotel: 'Grand', nights: 3 } } });
  });

  it('an agent without an output schema completes with its text and no output, as before', async () => {
    const t = scriptedWorld({ tools: [], script: [{ text: 'not json at all' }] });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    await driveRun(t.world, t.run, { worker: () => t.worker });
    const { events } = await logOf(t.world, t.run);
    expect(events[0]!.output).toBeUndefined();
    expect(events.at(-1)).toEqual(expect.objectContaining({ type: 'run_completed', answer: { kind: 'inline', value: 'not json at all' } }));
    expect(events.at(-1)!.output).toBeUndefined();
  });

  it('refuses at definition time an output schema with no JSON Schema, and repairs out of range', () => {
    const base = { name: 'a', version: '1', model: { id: 'm', maxOutputTokens: 10 }, system: { version: '1', text: 's' }, tools: [] };
    expect(() => defineAgent({ ...base, output: z.object({ at: z.date() }) })).toThrow(ConfigError);
    expect(() => defineAgent({ ...base, output: { schema: Booking, maxRepairs: 11 } })).toThrow(/maxRepairs/);
    expect(defineAgent({ ...base, output: { schema: Booking, maxRepairs: 0 } }).pinnedOutput?.maxRepairs).toBe(0);
  });
});
