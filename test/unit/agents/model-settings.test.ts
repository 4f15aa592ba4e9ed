import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { ConfigError } from '../../../lib/core/errors.js';
import type { ModelSettings } from '../../../lib/core/model-settings.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { forkRun } from '../../../lib/engine/fork.js';
import { ScriptedModel } from '../../../lib/models/scripted-model.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { logOf } from '../engine/helpers.js';
import { agentWorld } from './agent-world.js';

const lookup = defineTool({ name: 'lookup', version: '1', description: 'look up', input: z.object({ q: z.string() }), policy: 'rerun', execute: async ({ q }) => q });

const agentWith = (id: string, settings: ModelSettings, tools = [lookup]) =>
  defineAgent({ name: 'a', version: '1', model: { id, maxOutputTokens: 4096, settings }, system: { version: 's', text: 'hi' }, tools });

function refusal(make: () => unknown): string {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('defineAgent accepted it');
}

describe('model settings at definition time', () => {
  const cases: [string, string, ModelSettings, RegExp, (typeof lookup)[]?][] = [
    ['Bedrock has no parallel tool calls switch', 'bedrock:anthropic.claude-3-5-haiku-20241022-v1:0', { parallelToolCalls: false }, /settings\.parallelToolCalls: Bedrock/],
    ['Bedrock has no "none" tool choice', 'bedrock:amazon.nova-pro-v1:0', { toolChoice: 'none' }, /settings\.toolChoice: .*none/],
    ['a Bedrock model that does not think', 'bedrock:amazon.nova-pro-v1:0', { reasoning: { budgetTokens: 2048 } }, /settings\.reasoning: amazon\.nova-pro-v1:0 has no reasoning/],
    ['an effort for Claude', 'bedrock:anthropic.claude-sonnet-4-20250514-v1:0', { reasoning: { effort: 'high' } }, /thinking budget/],
    ['Claude thinking with a temperature', 'bedrock:anthropic.claude-sonnet-4-20250514-v1:0', { reasoning: { budgetTokens: 2048 }, temperature: 0.5 }, /settings\.temperature/, []],
    ['Claude thinking on an agent with tools', 'bedrock:anthropic.claude-sonnet-4-20250514-v1:0', { reasoning: { budgetTokens: 2048 } }, /thinking blocks/],
    ['a non-reasoning OpenAI model', 'openai:gpt-4.1-mini', { reasoning: { effort: 'low' } }, /settings\.reasoning: gpt-4\.1-mini is not a reasoning model/],
    ['a token budget for OpenAI', 'openai:o3', { reasoning: { budgetTokens: 2048 } }, /an effort/],
    ['a temperature for the o-series', 'openai:o4-mini', { temperature: 0.2 }, /settings\.temperature: o4-mini takes no temperature/],
    ['provider options that replace a field Logbook sets', 'openai:gpt-4.1', { providerOptions: { model: 'other' } }, /settings\.providerOptions\.model/],
    ['a tool choice naming no tool of the agent', 'scripted:test', { toolChoice: { tool: 'missing' } }, /no tool missing/],
    ['a forced tool choice without tools', 'openai:gpt-4.1', { toolChoice: 'required' }, /no tools to choose/, []],
    ['parallel tool calls without tools', 'openai:gpt-4.1', { parallelToolCalls: true }, /parallelToolCalls: the agent has no tools/, []],
    ['an out-of-range temperature', 'scripted:test', { temperature: 3 }, /invalid model\.settings: temperature: Too big/],
  ];
  it.each(cases)('refuses %s, naming the setting', (_why, id, settings, message, tools) => {
    expect(refusal(() => agentWith(id, settings, tools ?? [lookup]))).toMatch(message);
  });

  it('accepts what each provider has', () => {
    expect(agentWith('bedrock:anthropic.claude-3-5-haiku-20241022-v1:0', { temperature: 0.1, topP: 0.9, stopSequences: ['x'], toolChoice: 'required' }).model.settings).toEqual({
      temperature: 0.1,
      topP: 0.9,
      stopSequences: ['x'],
      toolChoice: 'required',
    });
    expect(agentWith('bedrock:anthropic.claude-sonnet-4-20250514-v1:0', { reasoning: { budgetTokens: 2048 } }, []).model.settings?.reasoning).toEqual({ budgetTokens: 2048 });
    expect(agentWith('openai:o3', { reasoning: { effort: 'high' }, parallelToolCalls: false, toolChoice: 'none' }).model.settings?.reasoning).toEqual({ effort: 'high' });
    // An application's own client (any other id) gets every setting and answers for them.
    expect(agentWith('my-gateway', { parallelToolCalls: true, reasoning: { budgetTokens: 4096 } }).model.settings?.parallelToolCalls).toBe(true);
  });
});

describe('model settings at run time', () => {
  it('are pinned in run_started and reach the model on every call, also after a fork', async () => {
    const settings: ModelSettings = { temperature: 0.4, toolChoice: 'auto', parallelToolCalls: false, providerOptions: { seed: 1 } };
    const model = new ScriptedModel([{ calls: [{ name: 'lookup', args: { q: 'x' } }] }, { text: 'done' }]);
    const agent = agentWith('scripted:test', settings);
    const { world, worker } = agentWorld([agent], { 'scripted:test': model });
    const run = { tenant: 't', runId: 'r' };
    await startRun(worker.deps, { ...run, agent: 'a', input: 'go' });
    const result = await driveRun(world, run, { worker: () => worker });
    expect(result.head.status).toBe('completed');
    const { events } = await logOf(world, run);
    expect((events[0]!.model as { settings: unknown }).settings).toEqual(settings);
    expect(model.settings).toEqual([settings, settings]);
    await forkRun(worker.deps, { tenant: 't', from: 'r', atSeq: 1, runId: 'f' });
    await driveRun(world, { tenant: 't', runId: 'f' }, { worker: () => worker });
    expect(model.settings.slice(2)).toEqual([settings, settings]);
  });

  it('an agent without settings sends none', async () => {
    const model = new ScriptedModel([{ text: 'done' }]);
    const agent = defineAgent({ name: 'a', version: '1', model: { id: 'scripted:test', maxOutputTokens: 64 }, system: { version: 's', text: 'hi' }, tools: [] });
    const { world, worker } = agentWorld([agent], { 'scripted:test': model });
    await startRun(worker.deps, { tenant: 't', runId: 'r', agent: 'a', input: 'go' });
    await driveRun(world, { tenant: 't', runId: 'r' }, { worker: () => worker });
    expect(model.settings).toEqual([undefined]);
    expect((await logOf(world, { tenant: 't', runId: 'r' })).events[0]!.model).not.toHaveProperty('settings');
  });
});
