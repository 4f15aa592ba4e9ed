import { z } from 'zod';
import { ManualClock } from '../../../lib/adapters/memory/manual-clock.js';
import { sha256Hex } from '../../../lib/support/hash.js';
import { AgentRegistry } from '../../../lib/authoring/registry.js';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import type { ContextSpec } from '../../../lib/authoring/context-spec.js';
import type { ModelMessage, ModelRequest, ModelResponse } from '../../../lib/core/messages.js';
import { ScriptedModel, StaticModelResolver } from '../../../lib/models/scripted-model.js';
import type { ModelClient } from '../../../lib/ports/model-client.js';
import { memoryStorage, type World } from '../../../lib/testing/world.js';

/** A read-only tool whose result is long: what makes a history grow. */
export const page = defineTool({
  name: 'page',
  version: '1',
  description: 'read page n',
  input: z.object({ n: z.number() }),
  policy: 'rerun',
  timeoutMs: 5_000,
  // Page 3 is larger than the inline limit: it is offloaded to the blob store with a summary.
  execute: async ({ n }) => `page ${n}: ${(n === 3 ? 'B' : 'a').repeat(n === 3 ? 20_000 : 600)} end of page ${n}`,
});

/**
 * A digest of what the model was sent: an answer built from it differs when the prompt does. Call
 * ids are left out: they are seqs, and a crash that adds an event (a reservation with no answer)
 * moves them without changing what the model reads.
 */
export function promptDigest(request: ModelRequest): string {
  const text = JSON.stringify({ system: request.system, messages: request.messages, turns: request.turns ?? null });
  return sha256Hex(text.replace(/\d+-\d+/g, 'N-N')).slice(0, 16);
}

/**
 * `turns` model calls: each asks for the next page, the last answers with a digest of the prompt
 * it was sent (so a resumed run whose prompt differs gives another answer).
 */
export function pageScript(turns: number) {
  return (request: ModelRequest) => {
    const turn = request.turns ?? request.messages.filter((m) => m.role === 'assistant').length;
    return turn + 1 >= turns ? { text: `answer ${promptDigest(request)}` } : { calls: [{ name: 'page', args: { n: turn } }] };
  };
}

/** A model that records every request it is sent (after the scripted one answers). */
export class RecordingModel implements ModelClient {
  readonly requests: ModelRequest[] = [];
  constructor(private readonly inner: ModelClient) {}
  async complete(request: ModelRequest, options: { signal: AbortSignal }): Promise<ModelResponse> {
    const response = await this.inner.complete(request, options);
    this.requests.push(structuredClone(request));
    return response;
  }
}

export function contextAgent(context: ContextSpec | undefined, budgets = { maxSteps: 200 }) {
  return defineAgent({
    name: 'agent',
    version: '1',
    model: { id: 'scripted:ctx', maxOutputTokens: 512, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
    system: { version: 'p1', text: 'You read pages.' },
    tools: [page],
    budgets,
    graceMs: 1_000,
    ...(context ? { context } : {}),
  });
}

/** A fresh world whose agent pins `context`; the model records what it was sent. */
export function contextWorld(context: ContextSpec | undefined, turns: number) {
  const agent = contextAgent(context);
  const model = new RecordingModel(
    new ScriptedModel([pageScript(turns)], { summary: (r) => `summary ${promptDigest(r)}` }),
  );
  const world: World = {
    storage: memoryStorage(),
    clock: new ManualClock(),
    registry: new AgentRegistry().register(agent),
    models: new StaticModelResolver({ 'scripted:ctx': model }),
  };
  return { world, model, agent };
}

/**
 * Every tool message answers a call of the assistant message before it (no orphan), and every
 * call of an assistant message is answered before the next assistant message: the pairing
 * providers insist on. Returns the problems found.
 */
export function pairingProblems(messages: readonly ModelMessage[]): string[] {
  const problems: string[] = [];
  let open = new Set<string>();
  let asked = new Set<string>();
  for (const [i, m] of messages.entries()) {
    if (m.role === 'assistant') {
      if (open.size > 0) problems.push(`message ${i}: calls ${[...open].join(',')} unanswered`);
      asked = new Set(m.calls.map((c) => c.callId));
      open = new Set(asked);
    } else if (m.role === 'tool') {
      if (!asked.has(m.callId)) problems.push(`message ${i}: result for ${m.callId} follows no call of it`);
      open.delete(m.callId);
    }
  }
  return problems;
}
