import { ConfigError } from '../core/errors.js';
import type { ModelClient } from '../ports/model-client.js';
import { AgentRegistry } from './registry.js';
import type { AgentDefinition } from './types.js';
import type { AgentsSpec } from './agents-spec.js';
import { isWorkflowDefinition } from './define-workflow.js';
import { Redactor, type RedactionOptions } from '../core/redaction.js';

/** A deployment's agents: the registry the engine reads, and the application's own models. */
export interface Agents {
  readonly registry: AgentRegistry;
  /** The client the application supplies for a pinned model id, or undefined. */
  model(modelId: string): ModelClient | undefined;
  /** Every model id the agents pin (what IAM must allow the worker to invoke). */
  readonly modelIds: readonly string[];
  /** The application's redaction options, as given. */
  readonly redaction?: RedactionOptions;
}

/** What the handler factories accept: the agents, or a function that builds them once per cold start. */
export type AgentsSource = Agents | (() => Agents | Promise<Agents>);

/**
 * The value an agents module exports (`export default defineAgents({ agents: [...] })`), and what
 * the handler factories, the CDK construct and `logbook dev` take.
 */
export function defineAgents(spec: AgentsSpec | readonly AgentDefinition[]): Agents {
  const {
    agents,
    workflows = [],
    models = {},
    redaction,
    appContext,
  } = Array.isArray(spec) ? ({ agents: spec as readonly AgentDefinition[] } as AgentsSpec) : (spec as AgentsSpec);
  if (agents.length === 0 && workflows.length === 0) throw new ConfigError('defineAgents: no agents or workflows given');
  for (const w of workflows) if (!isWorkflowDefinition(w)) throw new ConfigError('defineAgents: every entry of workflows must come from defineWorkflow()');
  // Checked now (ConfigError on import), not on the first payload a worker writes.
  if (redaction !== undefined) new Redactor(redaction);
  if (appContext !== undefined && typeof appContext !== 'function') throw new ConfigError('defineAgents: appContext must be a function');
  const registry = new AgentRegistry();
  registry.appContext = appContext;
  for (const agent of agents) registry.register(agent);
  for (const workflow of workflows) registry.registerWorkflow(workflow);
  const built = new Map<string, ModelClient>();
  return {
    registry,
    ...(redaction !== undefined ? { redaction } : {}),
    // Child agents (agentTool) are registered with their parents: their models count too.
    modelIds: [...new Set(registry.list().map((a) => a.model.id))],
    model(modelId) {
      const factory = models[modelId];
      if (!factory) return undefined;
      let client = built.get(modelId);
      if (!client) {
        client = factory();
        built.set(modelId, client);
      }
      return client;
    },
  };
}

export async function resolveAgents(source: AgentsSource | undefined): Promise<Agents | undefined> {
  if (source === undefined) return undefined;
  const agents = typeof source === 'function' ? await source() : source;
  if (!isAgents(agents)) {
    throw new ConfigError('agents must be the value of defineAgents({ agents: [...] }) (or a function returning it)');
  }
  return agents;
}

export function isAgents(value: unknown): value is Agents {
  return (
    typeof value === 'object' &&
    value !== null &&
    // Duck-typed: an application may load its own copy of the package.
    typeof (value as Agents).registry?.agent === 'function' &&
    typeof (value as Agents).model === 'function'
  );
}
