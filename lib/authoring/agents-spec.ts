import type { RedactionOptions } from '../core/redaction.js';
import type { ModelClient } from '../ports/model-client.js';
import type { AgentDefinition, AppContextLoader } from './types.js';
import type { WorkflowDefinition } from './workflow-types.js';

/** What an agents module passes to defineAgents(). */
export interface AgentsSpec {
  /** Every agent (and every version still serving pinned runs) this deployment runs. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  agents: readonly AgentDefinition<any, any>[];
  /**
   * Every workflow (defineWorkflow) and version still serving pinned runs. Agents and workflows a
   * workflow starts (ctx.agent, ctx.workflow) must be listed here too.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  workflows?: readonly WorkflowDefinition<any, any>[];
  /**
   * Model clients the application builds itself, by the model id its agents pin: scripted models
   * for tests and `logbook dev`, or a custom provider. Built once per process, on first use. Ids
   * not listed here are served by the built-in providers (`bedrock:<id>`, `openai:<model>`).
   */
  models?: Record<string, () => ModelClient>;
  /**
   * Secrets of this application beyond the built-in ones (patterns, key names) and fields never
   * to redact. Here, with the agents, so the API, the trigger and the worker redact alike.
   */
  redaction?: RedactionOptions;
  /**
   * Loads the application's context for instructions functions (`system.text` as a function),
   * called once per run start of such an agent, never on resume. A throw refuses the start.
   */
  appContext?: AppContextLoader;
}
