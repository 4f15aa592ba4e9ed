import { z } from 'zod';
import type { BudgetRequest } from '../core/budgets.js';
import { ConfigError } from '../core/errors.js';
import { defineTool } from './define-tool.js';
import type { AgentDefinition, ToolDefinition } from './types.js';

export interface AgentToolSpec<I> {
  /** The tool's name, as the parent's model calls it. */
  name: string;
  description: string;
  /**
   * What the parent's model passes; it becomes the child run's input (and must fit the child
   * agent's `input` schema, else the call gets an error result and no child starts). Default: the
   * child agent's `input` schema, or `{ task: string }` for an agent without one.
   */
  input?: z.ZodType<I>;
  version?: string;
  /**
   * The child run's budgets (over the child agent's own). Each is capped by what the parent has
   * left when the call starts, and the child's tokens and cost are reserved on the parent then.
   */
  budgets?: BudgetRequest;
}

const defaultInput = z.object({ task: z.string().min(1) }).strict();

function neverRuns(name: string) {
  return async (): Promise<never> => {
    throw new ConfigError(`tool ${name} starts a child run; the engine never runs it`);
  };
}

/**
 * An agent callable as a tool. A call starts a child run of `childAgent` (same tenant) whose id
 * derives from the parent's run id and the call id, so a retry never starts a second child. The
 * parent waits holding no Lambda and is woken through its inbox when the child ends; the child's
 * answer (or its failure, as an error) is the tool result. The child agent is pinned by name and
 * version: a run pinned to one version keeps calling exactly that one.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function agentTool<I = { task: string }>(childAgent: AgentDefinition<any, any>, spec: AgentToolSpec<I>): ToolDefinition<I> {
  for (const [key, value] of Object.entries(spec.budgets ?? {})) {
    if (value !== undefined && (!(typeof value === 'number') || value <= 0 || (key !== 'maxCostUsd' && !Number.isInteger(value)))) {
      throw new ConfigError(`tool ${spec.name}: budgets.${key} must be a positive ${key === 'maxCostUsd' ? 'number' : 'integer'}`);
    }
  }
  const tool = defineTool<I>({
    name: spec.name,
    version: spec.version ?? childAgent.version,
    description: spec.description,
    input: spec.input ?? ((childAgent.input ?? defaultInput) as unknown as z.ZodType<I>),
    // A started child call with no child yet is repaired by re-issuing the same create.
    policy: 'rerun',
    execute: neverRuns(spec.name),
  });
  const budgets = Object.fromEntries(Object.entries(spec.budgets ?? {}).filter(([, v]) => v !== undefined)) as BudgetRequest;
  return { ...tool, wait: { kind: 'child', agent: childAgent, budgets } };
}
