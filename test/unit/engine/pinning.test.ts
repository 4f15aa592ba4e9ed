import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ModelRequest, ModelResponse } from '../../../lib/core/messages.js';
import { AgentRegistry } from '../../../lib/authoring/registry.js';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { requestRunAction } from '../../../lib/engine/requests.js';
import { runStep } from '../../../lib/engine/step-runner.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { fromChatCompletion } from '../../../lib/models/openai-wire.js';
import { StaticModelResolver } from '../../../lib/models/scripted-model.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { spawnWorker } from '../../../lib/testing/world.js';
import { MAX_JSON_DEPTH } from '../../../lib/core/limits.js';
import { logOf } from './helpers.js';

const v1Input = z.object({ city: z.string() });
const v2Input = z.object({ city: z.string(), units: z.enum(['c', 'f']) });
const weather = (version: string, impl: string) =>
  defineTool({ name: 'weather', version, description: 'weather', input: v1Input, policy: 'rerun', execute: async ({ city }) => `${impl}:${city}` });
const weatherV2 = defineTool({ name: 'weather', version: '2', description: 'weather', input: v2Input, policy: 'rerun', execute: async () => 'v2' });

const seen: ModelRequest[] = [];
const recordingModel = {
  async complete(req: ModelRequest): Promise<ModelResponse> {
    seen.push(req);
    const turn = req.messages.filter((m) => m.role === 'assistant').length;
    return turn === 0
      ? { text: '', calls: [{ providerId: 'call_0', name: 'weather', args: { city: 'Oslo' } }], usage: { inputTokens: 5, outputTokens: 5 }, stopReason: 'tool_use' }
      : { text: 'done', calls: [], usage: { inputTokens: 5, outputTokens: 5 }, stopReason: 'end_turn' };
  },
};

/** Start a run on agent v1, then "deploy" a new registry before it resumes. */
async function startThenDeploy(next: AgentRegistry, models = new StaticModelResolver({ 'scripted:test': recordingModel })) {
  const t = scriptedWorld({ tools: [weather('1', 'old')], script: [], model: recordingModel });
  await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'weather?' });
  const deployed = { ...t.world, registry: next, models };
  const w = spawnWorker(deployed);
  const result = await driveRun(deployed, t.run, { worker: () => w });
  return { t, w, deployed, result };
}

const agentV2 = (tools: ReturnType<typeof weather>[] | (typeof weatherV2)[], prompt = 'NEW PROMPT') =>
  defineAgent({ name: 'agent', version: '2', model: { id: 'scripted:test', maxOutputTokens: 512 }, system: { version: 'p2', text: prompt }, tools });

describe('version pinning', () => {
  it('pins content: prompt text and hash, tool schemas, policies, model id and agent version', async () => {
    const t = scriptedWorld({ tools: [weather('1', 'old')], script: [{ text: 'x' }] });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    const { events } = await logOf(t.world, t.run);
    expect(events[0]).toMatchObject({
      agent: { name: 'agent', version: '1' },
      model: { id: 'scripted:test' },
      prompt: { version: 'p1', text: { kind: 'inline', value: 'You are a test agent.' } },
      tools: [{ name: 'weather', version: '1', policy: 'rerun', inputSchema: { type: 'object', required: ['city'] } }],
    });
    expect((events[0] as unknown as { prompt: { sha256: string } }).prompt.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a resumed run uses the pinned prompt and schema even after the agent changed; a new implementation of the same schema is allowed', async () => {
    seen.length = 0;
    const next = new AgentRegistry().register(agentV2([weather('1.1', 'patched')]));
    const { t, result } = await startThenDeploy(next);
    expect(result.head.status).toBe('completed');
    expect(seen[0]!.system).toBe('You are a test agent.');
    const { state } = await logOf(t.world, t.run);
    expect(state.calls['3-0']!.result?.output).toEqual({ kind: 'inline', value: 'patched:Oslo' });
  });

  it('parks with a clear reason when no implementation matches the pinned schema, and resumes once one is registered', async () => {
    const next = new AgentRegistry().register(agentV2([weatherV2]));
    const { t, result, deployed } = await startThenDeploy(next);
    expect(result.head.status).toBe('parked');
    expect(result.head.attention[0]).toMatchObject({ reason: 'missing_tool_version' });
    expect(result.head.attention[0]!.detail).toMatch(/weather@1/);
    // Register the old implementation beside the new one, then retry.
    next.registerTool(weather('1.2', 'restored'));
    const w = spawnWorker(deployed);
    await requestRunAction(w.deps, t.run, 'retry', 'ops');
    const done = await driveRun(deployed, t.run, { worker: () => w });
    expect(done.head.status).toBe('completed');
  });

  it('parks when the pinned model id is gone, never substituting another', async () => {
    const next = new AgentRegistry().register(agentV2([weather('1', 'old')]));
    const { result } = await startThenDeploy(next, new StaticModelResolver({ 'scripted:other': recordingModel }));
    expect(result.head.status).toBe('parked');
    expect(result.head.attention[0]).toMatchObject({ reason: 'missing_model' });
  });

  it("two agents may have a same-named tool with the same schema: each run gets its own agent's code", async () => {
    const t = scriptedWorld({ tools: [weather('1', 'agent-code')], script: [{ calls: [{ name: 'weather', args: { city: 'Oslo' } }] }, { text: 'done' }] });
    // Registered after "agent": with one registry-wide table its implementation would win.
    const other = defineAgent({ name: 'other', version: '1', model: { id: 'scripted:test', maxOutputTokens: 512 }, system: { version: 'p', text: 't' }, tools: [weather('1', 'other-code')] });
    t.world.registry.register(other);
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    const done = await driveRun(t.world, t.run, { worker: () => t.worker });
    expect(done.head.status).toBe('completed');
    const { state } = await logOf(t.world, t.run);
    expect(state.calls['3-0']!.result?.output).toEqual({ kind: 'inline', value: 'agent-code:Oslo' });
    // registerTool keeps an implementation for every agent's pinned runs; an agent's own comes first.
    const shared = weather('1', 'shared');
    t.world.registry.registerTool(shared);
    expect(t.world.registry.tool('weather', state.started.tools[0]!.schemaHash, 'agent')).not.toBe(shared);
    expect(t.world.registry.tool('weather', state.started.tools[0]!.schemaHash, 'third')).toBe(shared);
  });

  it('several versions of an agent can be registered; runs start on the latest unless one is named', async () => {
    const reg = new AgentRegistry().register(defineAgent({ name: 'a', version: '1', model: { id: 'm', maxOutputTokens: 10 }, system: { version: 'p', text: 't' }, tools: [] }));
    reg.register(defineAgent({ name: 'a', version: '2', model: { id: 'm', maxOutputTokens: 10 }, system: { version: 'p', text: 't' }, tools: [] }));
    expect(reg.agent('a')?.version).toBe('2');
    expect(reg.agent('a', '1')?.version).toBe('1');
  });
});

describe('tool calls the model gets wrong', () => {
  it('an unknown tool, unparseable JSON and schema-invalid arguments come back as error results, never a crash', async () => {
    const t = scriptedWorld({
      tools: [weather('1', 'ok')],
      script: [
        {
          calls: [
            { name: 'teleport', args: {} },
            { name: 'weather', args: '{"city": ', argsError: 'Unexpected end of JSON input' },
            { name: 'weather', args: { town: 'Oslo' } },
            { name: 'weather', args: { city: 'Oslo' } },
          ],
        },
        { text: 'sorry' },
      ],
    });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    const done = await driveRun(t.world, t.run, { worker: () => t.worker });
    expect(done.head.status).toBe('completed');
    const { state } = await logOf(t.world, t.run);
    expect(state.calls['3-0']!.result).toMatchObject({ ok: false, errorCode: 'unknown_tool' });
    expect(state.calls['3-1']!.result).toMatchObject({ ok: false, errorCode: 'invalid_arguments' });
    expect(state.calls['3-2']!.result).toMatchObject({ ok: false, errorCode: 'invalid_arguments', source: 'validation' });
    expect(JSON.stringify(state.calls['3-2']!.result!.output)).toContain('city');
    expect(state.calls['3-3']!.result).toMatchObject({ ok: true });
    // Rejected calls never got a started marker: nothing ran.
    expect(state.calls['3-0']!.attempt).toBe(0);
  });
});

describe('stale workers', () => {
  it('a worker whose lease was taken over is fenced: its append is rejected and it runs nothing more', async () => {
    let executions = 0;
    const tool = defineTool({ name: 'weather', version: '1', description: 'w', input: v1Input, policy: 'rerun', execute: async () => `run ${++executions}` });
    const t = scriptedWorld({ tools: [tool], script: [{ calls: [{ name: 'weather', args: { city: 'a' } }] }, { text: 'done' }] });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    const tick = t.storage.queue.take()!.tick;
    // Worker A freezes right before appending its first event.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let unfreeze: (() => void) | undefined;
    // Worker A's whole process freezes (heartbeat included) right before its first append.
    const a = spawnWorker(t.world, {
      at: async (p) => {
        if (p === 'before-append' && !unfreeze) {
          unfreeze = a.freeze();
          await gate;
        }
      },
    });
    const aStep = runStep(a.deps, tick, { owner: 'A', deadlineAt: t.world.clock.now() + 300_000 });
    await new Promise((r) => setImmediate(r));
    // Its lease lapses; B claims with a higher epoch and finishes the run.
    await t.world.clock.advance(61_000);
    const b = spawnWorker(t.world);
    const done = await driveRun(t.world, t.run, { worker: () => b });
    expect(done.head.status).toBe('completed');
    expect(done.head.epoch).toBeGreaterThan(1);
    unfreeze?.();
    release();
    const late = await aStep;
    expect(['fenced', 'lease_lost']).toContain(late.outcome);
    expect(executions).toBe(1);
    const { state } = await logOf(t.world, t.run);
    expect(state.outcome?.type).toBe('completed');
  });

});

describe('tool-call arguments from outside', () => {
  it('arguments nested deeper than MAX_JSON_DEPTH (or holding __proto__) are not recorded: an error result, and the run goes on', async () => {
    // What an OpenAI-compatible server's reply turns into: 20,000 levels overflow JSON.stringify
    // and the canonical hash, so without the check every attempt at this reply would crash alike.
    const deep = '{"city":'.repeat(20_000) + '"Oslo"' + '}'.repeat(20_000);
    const reply = (turn: number) =>
      fromChatCompletion({
        choices: [
          turn === 0
            ? {
                finish_reason: 'tool_calls',
                message: {
                  content: null,
                  tool_calls: [
                    { id: 'a', type: 'function', function: { name: 'weather', arguments: deep } },
                    { id: 'b', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo","__proto__":{"admin":true}}' } },
                    { id: 'c', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
                  ],
                },
              }
            : { finish_reason: 'stop', message: { content: 'sorry' } },
        ],
        usage: { prompt_tokens: 5, completion_tokens: 5 },
      });
    const model = { complete: async (req: ModelRequest) => reply(req.messages.filter((m) => m.role === 'assistant').length) };
    const t = scriptedWorld({ tools: [weather('1', 'ok')], script: [], model });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    const done = await driveRun(t.world, t.run, { worker: () => t.worker });
    expect(done.head.attention).toEqual([]);
    expect(done.head.status).toBe('completed');
    const { state } = await logOf(t.world, t.run);
    expect(state.calls['3-0']!.result).toMatchObject({ ok: false, errorCode: 'invalid_arguments' });
    expect(JSON.stringify(state.calls['3-0']!.result!.output)).toContain(`nested more than ${MAX_JSON_DEPTH} levels deep`);
    expect(state.calls['3-0']!.args).toEqual({ kind: 'inline', value: '(not recorded)' });
    expect(state.calls['3-1']!.result).toMatchObject({ ok: false, errorCode: 'invalid_arguments' });
    expect(JSON.stringify(state.calls['3-1']!.result!.output)).toContain('__proto__');
    expect(state.calls['3-2']!.result).toMatchObject({ ok: true });
  });
});

describe('a call longer than a whole invocation', () => {
  it('parks the run with call_does_not_fit instead of handing the step on forever; a retry on a longer invocation completes it', async () => {
    const slow = defineTool({ name: 'weather', version: '1', description: 'weather', input: v1Input, policy: 'rerun', timeoutMs: 200_000, execute: async ({ city }) => `slow:${city}` });
    const t = scriptedWorld({ tools: [slow], script: [{ calls: [{ name: 'weather', args: { city: 'Oslo' } }] }, { text: 'done' }] });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    // A 150 s invocation (a worker configured with a timeout below its tool's) fits the model call, never the tool.
    const parked = await driveRun(t.world, t.run, { worker: () => t.worker, invocationMs: 150_000 });
    expect(parked.head.status).toBe('parked');
    expect(parked.head.attention[0]).toMatchObject({ reason: 'call_does_not_fit' });
    expect(parked.head.attention[0]!.detail).toMatch(/a call of up to 200000 ms .* a whole invocation has 150000 ms/);
    expect(parked.steps).toBeLessThan(5);
    const { state } = await logOf(t.world, t.run);
    expect(state.calls['3-0']!.attempt).toBe(0); // nothing started
    await requestRunAction(t.worker.deps, t.run, 'retry', 'ops');
    const done = await driveRun(t.world, t.run, { worker: () => t.worker, invocationMs: 300_000 });
    expect(done.head.status).toBe('completed');
  });
});
