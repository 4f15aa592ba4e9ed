import { ConfigError } from '../core/errors.js';
import { toolSchemaHash } from './define-agent.js';
import type { AgentDefinition, AppContextLoader, ToolDefinition } from './types.js';
import type { WorkflowDefinition } from './workflow-types.js';
import type { PinnedSchedule } from './schedule-types.js';

/** A schedule to deploy: the definition it starts (name, version, agent or workflow) and its checked schedule. */
export interface ScheduledDefinition {
  readonly name: string;
  readonly version: string;
  readonly kind: 'agent' | 'workflow';
  readonly schedule: PinnedSchedule;
}

/**
 * Agents by name and version, and tool implementations by (agent, name, schema hash). Several
 * versions of an agent or tool can be registered at once, so runs pinned to an older one keep
 * going. A run only ever gets its own agent's implementation of a tool (any version of that
 * agent), or one registered with `registerTool` for every agent: two agents may each have a
 * `lookup` with the same schema and different code, and neither runs the other's.
 */
export class AgentRegistry {
  private readonly agents = new Map<string, AgentDefinition[]>();
  /** The agents' own tools, keyed by agent name, tool name and schema hash. */
  private readonly agentTools = new Map<string, ToolDefinition>();
  /** Implementations kept available to every agent's pinned runs (registerTool). */
  private readonly sharedTools = new Map<string, ToolDefinition>();
  /** Workflows by name (defineWorkflow), every version still serving pinned runs. */
  private readonly workflowsByName = new Map<string, WorkflowDefinition[]>();
  /** The application's context loader for instructions functions (defineAgents' `appContext`). */
  appContext: AppContextLoader | undefined;

  register(agent: AgentDefinition): this {
    if (this.workflowsByName.has(agent.name)) throw new ConfigError(`${agent.name} is the name of a workflow and of an agent: a run names one definition`);
    const list = this.agents.get(agent.name) ?? [];
    const same = list.find((a) => a.version === agent.version);
    // The very same definition again (a child agent also listed on its own) is no conflict.
    if (same === agent) return this;
    if (same) throw new ConfigError(`agent ${agent.name}@${agent.version} registered twice`);
    list.push(agent);
    this.agents.set(agent.name, list);
    for (const tool of agent.tools) {
      this.agentTools.set(agentToolKey(agent.name, tool.name, toolSchemaHash(tool)), tool);
      // An agent used as a tool must be startable: register it with its parent.
      if (tool.wait?.kind === 'child') this.register(tool.wait.agent);
    }
    return this;
  }

  /**
   * Keep an implementation available for runs of any agent pinned to its schema (for example the
   * old code of a tool a new agent version dropped). An agent's own implementation comes first;
   * among shared ones the latest registration wins.
   */
  registerTool(tool: ToolDefinition): this {
    this.sharedTools.set(toolKey(tool.name, toolSchemaHash(tool)), tool);
    return this;
  }

  /** Register a workflow version (defineWorkflow). Its name may not also be an agent's. */
  registerWorkflow(workflow: WorkflowDefinition): this {
    if (this.agents.has(workflow.name)) throw new ConfigError(`${workflow.name} is the name of an agent and of a workflow: a run names one definition`);
    const list = this.workflowsByName.get(workflow.name) ?? [];
    const same = list.find((w) => w.version === workflow.version);
    if (same === workflow) return this;
    if (same) throw new ConfigError(`workflow ${workflow.name}@${workflow.version} registered twice`);
    list.push(workflow);
    this.workflowsByName.set(workflow.name, list);
    return this;
  }

  /** The named workflow version, or the latest registered when none is given. */
  workflow(name: string, version?: string): WorkflowDefinition | undefined {
    const list = this.workflowsByName.get(name);
    if (!list) return undefined;
    return version === undefined ? list[list.length - 1] : list.find((w) => w.version === version);
  }

  /** Every registered workflow version, in registration order per name. */
  workflows(): WorkflowDefinition[] {
    return [...this.workflowsByName.values()].flat();
  }

  workflowNames(): string[] {
    return [...this.workflowsByName.keys()];
  }

  /** Every registered agent version, in registration order per name. */
  list(): AgentDefinition[] {
    return [...this.agents.values()].flat();
  }

  /** The named version, or the latest registered when none is given. */
  agent(name: string, version?: string): AgentDefinition | undefined {
    const list = this.agents.get(name);
    if (!list) return undefined;
    return version === undefined ? list[list.length - 1] : list.find((a) => a.version === version);
  }

  /**
   * Every schedule to deploy: per name, the schedule of its latest registered version (the
   * version a scheduled run starts). A version that is not the latest keeps serving its runs; its
   * schedule is not deployed.
   */
  schedules(): ScheduledDefinition[] {
    const out: ScheduledDefinition[] = [];
    for (const [name, list] of [...this.agents.entries(), ...this.workflowsByName.entries()]) {
      const latest = list[list.length - 1]!;
      if (!latest.pinnedSchedule) continue;
      out.push({ name, version: latest.version, kind: 'kind' in latest && latest.kind === 'workflow' ? 'workflow' : 'agent', schedule: latest.pinnedSchedule });
    }
    return out;
  }

  /** The deployed schedule of this name (schedules()), or undefined. */
  schedule(name: string): ScheduledDefinition | undefined {
    return this.schedules().find((s) => s.name === name);
  }

  agentNames(): string[] {
    return [...this.agents.keys()];
  }

  /** The implementation a run of `agent` uses for the pinned tool contract (name + schema hash). */
  tool(name: string, schemaHash: string, agent: string): ToolDefinition | undefined {
    return this.agentTools.get(agentToolKey(agent, name, schemaHash)) ?? this.sharedTools.get(toolKey(name, schemaHash));
  }
}

const toolKey = (name: string, schemaHash: string) => `${name}#${schemaHash}`;
const agentToolKey = (agent: string, name: string, schemaHash: string) => `${agent}\u0000${toolKey(name, schemaHash)}`;
