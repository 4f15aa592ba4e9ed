import { defineAgents, type Agents } from '../../../lib/authoring/define-agents.js';
import type { AgentDefinition } from '../../../lib/authoring/types.js';
import type { WorkflowDefinition } from '../../../lib/authoring/workflow-types.js';
import type { ModelClient } from '../../../lib/ports/model-client.js';
import type { RunRef } from '../../../lib/core/run-ref.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { agentsWorld, spawnWorker, type World, type WorkerProcess } from '../../../lib/testing/world.js';
import { drain } from '../control/helpers.js';
import { logOf } from '../engine/helpers.js';

/** A memory world with these workflows (and agents) registered, one worker, and a run to start. */
export function workflowWorld(spec: {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  workflows: WorkflowDefinition<any, any>[];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  agents?: AgentDefinition<any, any>[];
  models?: Record<string, () => ModelClient>;
}): { agents: Agents; world: World; worker: WorkerProcess; run: RunRef } {
  const agents = defineAgents({ agents: spec.agents ?? [], workflows: spec.workflows, ...(spec.models ? { models: spec.models } : {}) });
  const world = agentsWorld(agents);
  return { agents, world, worker: spawnWorker(world), run: { tenant: 't1', runId: 'wf-1' } };
}

export async function startAndDrain(t: ReturnType<typeof workflowWorld>, workflow: string, input: unknown) {
  await startRun(t.worker.deps, { ...t.run, workflow, input: input as never });
  const results = await drain(t.world, t.worker);
  return { results, ...(await logOf(t.world, t.run)) };
}
