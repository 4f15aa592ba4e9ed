import { z } from 'zod';
import type { ModelRequest, ModelResponse } from '../lib/core/messages.js';
import { AgentRegistry } from '../lib/authoring/registry.js';
import { defineAgent } from '../lib/authoring/define-agent.js';
import { defineTool } from '../lib/authoring/define-tool.js';
import type { ModelClient } from '../lib/ports/model-client.js';
import { StaticModelResolver } from '../lib/models/scripted-model.js';

/**
 * The benchmark's agent: every turn is one model response asking for one read-only tool call
 * (`echo`), until the run has had `turns` model calls; the last one answers. Deterministic in the
 * request (as ScriptedModel is), so a cold or resumed step gets the reply an uninterrupted run gets.
 */
export const BENCH_MODEL_ID = 'scripted:bench';

export const echo = defineTool({
  name: 'echo',
  version: '1',
  description: 'echo',
  input: z.object({ n: z.number() }),
  policy: 'rerun',
  // Short: a tool call must fit in what is left of the invocation (the local worker has 60 s).
  timeoutMs: 5_000,
  execute: async ({ n }) => n,
});

export function benchAgent(turns: number) {
  return defineAgent({
    name: 'bench',
    version: '1',
    model: { id: BENCH_MODEL_ID, maxOutputTokens: 256, price: { inputPerMTokUsd: 0, outputPerMTokUsd: 0 } },
    system: { version: '1', text: 'bench' },
    tools: [echo],
    // Generous: the bench measures the loop, not the budget guards (the prompt grows with the run).
    budgets: { maxSteps: turns, maxInputTokens: 50_000_000, maxOutputTokens: 5_000_000, maxCostUsd: 500 },
  });
}

export function benchRegistry(turns: number): AgentRegistry {
  return new AgentRegistry().register(benchAgent(turns));
}

/** A model of `turns` model calls; `onCall` marks each turn boundary for per-turn counting. */
export function benchModels(turns: number, onCall?: (request: ModelRequest) => void): StaticModelResolver {
  return new StaticModelResolver({ [BENCH_MODEL_ID]: benchModel(turns, onCall) });
}

export function benchModel(turns: number, onCall?: (request: ModelRequest) => void): ModelClient {
  return {
    // Constant work per call (unlike ScriptedModel, which serialises the whole request to count
    // tokens): what grows with the run here is Logbook's own work, not the fake model's.
    async complete(request, options): Promise<ModelResponse> {
      if (options.signal.aborted) throw options.signal.reason;
      onCall?.(request);
      let done = 0;
      for (const m of request.messages) if (m.role === 'assistant') done++;
      const last = done + 1 >= turns;
      return {
        text: last ? 'done' : '',
        calls: last ? [] : [{ providerId: 'call_0', name: 'echo', args: { n: done } }],
        usage: { inputTokens: 100, outputTokens: 20 },
        stopReason: last ? 'end_turn' : 'tool_use',
      };
    },
  };
}
