import { ManualClock } from '../adapters/memory/manual-clock.js';
import type { BudgetRequest } from '../core/budgets.js';
import { AgentRegistry } from '../authoring/registry.js';
import { defineAgent } from '../authoring/define-agent.js';
import { type AgentDefinition, type AgentSpec } from '../authoring/types.js';
import type { ToolDefinition } from '../authoring/types.js';
import { ScriptedModel, StaticModelResolver, type ScriptStep } from '../models/scripted-model.js';
import type { ModelClient } from '../ports/model-client.js';
import { memoryStorage, spawnWorker, type World } from './world.js';

export interface ScriptedWorldOptions {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  tools: ToolDefinition<any>[];
  script: ScriptStep[];
  budgets?: BudgetRequest;
  model?: ModelClient;
  modelId?: string;
  maxOutputTokens?: number;
  graceMs?: number;
  /** The agent's output schema (structured output). */
  output?: AgentSpec['output'];
}

/** A one-agent world ("agent") on memory storage with a scripted model: the unit tests' stage. */
export function scriptedWorld(options: ScriptedWorldOptions) {
  const modelId = options.modelId ?? 'scripted:test';
  const agent: AgentDefinition = defineAgent({
    name: 'agent',
    version: '1',
    model: { id: modelId, maxOutputTokens: options.maxOutputTokens ?? 512, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
    system: { version: 'p1', text: 'You are a test agent.' },
    tools: options.tools,
    ...(options.budgets ? { budgets: options.budgets } : {}),
    graceMs: options.graceMs ?? 1_000,
    ...(options.output ? { output: options.output } : {}),
  });
  const model = options.model ?? new ScriptedModel(options.script);
  const storage = memoryStorage();
  const world: World = {
    storage,
    clock: new ManualClock(),
    registry: new AgentRegistry().register(agent),
    models: new StaticModelResolver({ [modelId]: model }),
  };
  const worker = spawnWorker(world);
  return { world, worker, agent, model, storage, run: { tenant: 't', runId: 'r' } };
}
