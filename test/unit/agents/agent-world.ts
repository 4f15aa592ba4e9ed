import { ManualClock } from '../../../lib/adapters/memory/manual-clock.js';
import { defineAgents } from '../../../lib/authoring/define-agents.js';
import type { AgentDefinition, AppContextLoader } from '../../../lib/authoring/types.js';
import type { ModelClient } from '../../../lib/ports/model-client.js';
import { StaticModelResolver } from '../../../lib/models/scripted-model.js';
import { memoryStorage, spawnWorker, type World } from '../../../lib/testing/world.js';
import type { RunRef } from '../../../lib/core/run-ref.js';

/** A memory world over defineAgents (so its appContext reaches the engine), one model per id. */
export function agentWorld(agents: AgentDefinition[], models: Record<string, ModelClient>, appContext?: AppContextLoader) {
  const defined = defineAgents({ agents, ...(appContext ? { appContext } : {}) });
  const storage = memoryStorage();
  const world: World = { storage, clock: new ManualClock(), registry: defined.registry, models: new StaticModelResolver(models) };
  return { world, storage, worker: spawnWorker(world) };
}

/** Nothing of the run exists: no event, no head, no tick. */
export async function nothingWritten(world: World, run: RunRef): Promise<boolean> {
  const event = await world.storage.log.readOne(run, 1);
  const head = await world.storage.heads.getHead(run);
  return event === undefined && head === undefined && world.storage.queue.take() === undefined;
}
