import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { agentTool } from '../../../lib/authoring/agent-tool.js';
import { ValidationError } from '../../../lib/core/errors.js';
import { parseEvent } from '../../../lib/core/events.js';
import { foldLog } from '../../../lib/core/fold.js';
import { hashJson } from '../../../lib/support/hash.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { forkRun } from '../../../lib/engine/fork.js';
import { requestMessage } from '../../../lib/engine/control-requests.js';
import { ScriptedModel } from '../../../lib/models/scripted-model.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { logOf } from '../engine/helpers.js';
import { agentWorld, nothingWritten } from './agent-world.js';

const booking = z.object({
  customer: z.object({ email: z.email(), tier: z.enum(['basic', 'gold']).default('basic') }),
  nights: z.number().int().positive(),
});

const booker = defineAgent({
  name: 'booker',
  version: '1',
  model: { id: 'scripted:test', maxOutputTokens: 256, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
  input: booking,
  system: { version: 's1', text: 'Book rooms.' },
  tools: [],
});
const good = { customer: { email: 'ann@example.com' }, nights: 2 };
const run = { tenant: 't', runId: 'r1' };

async function rejection(work: Promise<unknown>): Promise<ValidationError> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ValidationError);
  return error as ValidationError;
}

describe('typed run input', () => {
  it('refuses input that does not fit, naming each bad path, and writes nothing', async () => {
    const { world, worker } = agentWorld([booker], { 'scripted:test': new ScriptedModel([{ text: 'ok' }]) });
    const error = await rejection(startRun(worker.deps, { ...run, agent: 'booker', input: { customer: { email: 'nope' }, nights: 0 } }));
    expect(error.issues.map((i) => i.path).sort()).toEqual(['input.customer.email', 'input.nights']);
    expect(await nothingWritten(world, run)).toBe(true);
    // Text is no longer enough for an agent that takes an object.
    const text = await rejection(startRun(worker.deps, { ...run, agent: 'booker', input: 'hello' }));
    expect(text.issues[0]?.path).toBe('input');
    expect(await nothingWritten(world, run)).toBe(true);
  });

  it('pins the input JSON Schema and its hash in run_started, and the run goes on as before', async () => {
    const model = new ScriptedModel([{ text: 'booked' }]);
    const { world, worker } = agentWorld([booker], { 'scripted:test': model });
    await startRun(worker.deps, { ...run, agent: 'booker', input: good });
    const { events } = await logOf(world, run);
    const pinned = events[0]!.inputSchema as { jsonSchema: Record<string, unknown>; sha256: string };
    expect(pinned.sha256).toBe(hashJson(pinned.jsonSchema));
    expect(pinned).toEqual(booker.inputSchema);
    // The caller's side of the schema: `tier` has a default, so it is not required of a caller.
    expect(pinned.jsonSchema).toMatchObject({ type: 'object', required: ['customer', 'nights'] });
    expect((pinned.jsonSchema.properties as { customer: { required: string[] } }).customer.required).toEqual(['email']);
    // The input is stored as sent (no defaults filled in).
    expect(events[0]!.input).toEqual({ kind: 'inline', value: good });
    const result = await driveRun(world, run, { worker: () => worker });
    expect(result.head.status).toBe('completed');
  });

  it('without a schema, any text, object or array starts a run as before, and no schema is pinned', async () => {
    const plain = defineAgent({ name: 'plain', version: '1', model: { id: 'scripted:test', maxOutputTokens: 64 }, system: { version: 's', text: 'hi' }, tools: [] });
    const { world, worker } = agentWorld([plain], { 'scripted:test': new ScriptedModel([{ text: 'ok' }]) });
    await startRun(worker.deps, { ...run, agent: 'plain', input: 'hello' });
    const { events } = await logOf(world, run);
    expect(events[0]!.inputSchema).toBeUndefined();
    expect(plain.inputSchema).toBeUndefined();
  });

  it('an old run_started without inputSchema, settings or a resolved prompt still parses and folds', () => {
    const old = {
      v: 1,
      seq: 1,
      at: 1,
      by: { epoch: 0, nonce: 'create:x' },
      type: 'run_started',
      tenant: 't',
      runId: 'old',
      requestHash: 'h',
      agent: { name: 'a', version: '1' },
      model: { id: 'scripted:test', maxOutputTokens: 10, price: { inputPerMTokUsd: 0, outputPerMTokUsd: 0 } },
      prompt: { version: 'p', text: { kind: 'inline', value: 'sys' }, sha256: 'x' },
      tools: [],
      input: { kind: 'inline', value: 'hi' },
      budgets: { maxSteps: 1, maxInputTokens: 1, maxOutputTokens: 1, maxCostUsd: 1, deadlineAt: 10 },
      graceMs: 0,
      expiresAt: 100,
    };
    const state = foldLog([parseEvent(old)]);
    expect(state.started.inputSchema).toBeUndefined();
    expect(state.started.model?.settings).toBeUndefined();
    expect(state.started.prompt?.resolved).toBeUndefined();
    expect(state.messages).toHaveLength(1);
  });

  it('a follow-up message must fit the schema too; a misfit reaches no inbox', async () => {
    const { world, worker } = agentWorld([booker], { 'scripted:test': new ScriptedModel([{ text: 'booked' }]) });
    await startRun(worker.deps, { ...run, agent: 'booker', input: good });
    await driveRun(world, run, { worker: () => worker });
    const error = await rejection(requestMessage(worker.deps, run, { input: { customer: { email: 'ann@example.com' }, nights: -1 } }, 'me'));
    expect(error.issues.map((i) => i.path)).toEqual(['input.nights']);
    expect(await world.storage.inbox.list(run)).toEqual([]);
    await requestMessage(worker.deps, run, { input: { ...good, nights: 3 } }, 'me');
    expect(await world.storage.inbox.list(run)).toHaveLength(1);
  });

  it('a fork with a new input must fit the schema; a misfit creates no fork', async () => {
    const { world, worker } = agentWorld([booker], { 'scripted:test': new ScriptedModel([{ text: 'booked' }]) });
    await startRun(worker.deps, { ...run, agent: 'booker', input: good });
    await driveRun(world, run, { worker: () => worker });
    const fork = { tenant: 't', runId: 'f1' };
    const error = await rejection(forkRun(worker.deps, { tenant: 't', from: 'r1', atSeq: 1, runId: 'f1', input: { nights: 1 } }));
    expect(error.issues.map((i) => i.path)).toEqual(['input.customer']);
    expect(await world.storage.log.readOne(fork, 1)).toBeUndefined();
    await forkRun(worker.deps, { tenant: 't', from: 'r1', atSeq: 1, runId: 'f1', input: { ...good, nights: 5 } });
    const { events } = await logOf(world, fork);
    expect(events[0]!.input).toEqual({ kind: 'inline', value: { ...good, nights: 5 } });
    expect(events[0]!.inputSchema).toEqual(booker.inputSchema);
  });
});

describe('typed input of child runs (agentTool)', () => {
  const parentOf = (tool: ReturnType<typeof agentTool>) =>
    defineAgent({ name: 'parent', version: '1', model: { id: 'scripted:parent', maxOutputTokens: 256, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } }, system: { version: 's', text: 'Delegate.' }, tools: [tool] });

  it("an agentTool takes the child's input schema by default: the parent's model sees it and bad arguments never start a child", () => {
    const tool = agentTool(booker, { name: 'book', description: 'book a room' });
    expect(tool.inputSchema).toMatchObject({ type: 'object', required: ['customer', 'nights'], properties: { customer: { properties: { email: { format: 'email' } } } } });
    expect(tool.input.safeParse({ task: 'x' }).success).toBe(false);
    expect(tool.input.safeParse(good).success).toBe(true);
  });

  it('a call whose arguments fit the tool but not the child agent gets an error result, no child and no charge', async () => {
    const loose = agentTool(booker, { name: 'book', description: 'book a room', input: z.object({ customer: z.object({ email: z.string() }), nights: z.number() }) });
    const parentModel = new ScriptedModel([{ calls: [{ name: 'book', args: { customer: { email: 'not-an-email' }, nights: 1 } }] }, { text: 'gave up' }]);
    const { world, worker } = agentWorld([parentOf(loose)], { 'scripted:parent': parentModel, 'scripted:test': new ScriptedModel([{ text: 'booked' }]) });
    const parent = { tenant: 't', runId: 'p1' };
    await startRun(worker.deps, { ...parent, agent: 'parent', input: 'book me a room' });
    const result = await driveRun(world, parent, { worker: () => worker });
    expect(result.head.status).toBe('completed');
    const { state, events } = await logOf(world, parent);
    const call = Object.values(state.calls)[0]!;
    expect(call.result).toMatchObject({ ok: false, errorCode: 'child_input_invalid' });
    expect(JSON.stringify(call.result?.output)).toContain('input.customer.email');
    expect(call.wait).toBeUndefined();
    expect(await world.storage.heads.listRuns('t', { limit: 10, parent: 'p1' })).toMatchObject({ runs: [] });
    // Only the two model calls are charged: no child reservation was made or stayed spent.
    const responses = events.filter((e) => e.type === 'model_response') as unknown as { costUsd: number; usage: { inputTokens: number } }[];
    expect(state.usage.steps).toBe(2);
    expect(state.usage.costUsd).toBeCloseTo(responses.reduce((sum, e) => sum + e.costUsd, 0), 12);
    expect(state.usage.inputTokens).toBe(responses.reduce((sum, e) => sum + e.usage.inputTokens, 0));
  });

  it('a fitting call starts a child whose run_started pins the input schema', async () => {
    const tool = agentTool(booker, { name: 'book', description: 'book a room' });
    const parentModel = new ScriptedModel([{ calls: [{ name: 'book', args: good }] }, { text: 'done' }]);
    const { world, worker } = agentWorld([parentOf(tool)], { 'scripted:parent': parentModel, 'scripted:test': new ScriptedModel([{ text: 'booked' }]) });
    const parent = { tenant: 't', runId: 'p2' };
    await startRun(worker.deps, { ...parent, agent: 'parent', input: 'book me a room' });
    const result = await driveRun(world, parent, { worker: () => worker });
    expect(result.head.status).toBe('completed');
    const { runs } = await world.storage.heads.listRuns('t', { limit: 10, parent: 'p2' });
    expect(runs).toHaveLength(1);
    const child = await logOf(world, { tenant: 't', runId: runs[0]!.runId });
    expect(child.events[0]!.inputSchema).toEqual(booker.inputSchema);
  });
});
