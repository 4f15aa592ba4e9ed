import type { z } from 'zod';
import { ConfigError } from '../core/errors.js';
import type { PinnedTool } from '../core/events.js';
import { hashJson, sha256Hex } from '../support/hash.js';
import { modelSettingsSchema, type ModelSettings } from '../core/model-settings.js';
import { zodIssuesText } from '../core/zod-issues.js';
import { modelSettingsProblems } from '../models/model-capabilities.js';
import { inputJsonSchema } from './run-input.js';
import { checkSchedule } from './schedule.js';
import type { AgentDefinition, AgentSpec, InputSchema, ToolDefinition, TypedAnswer } from './types.js';
import { pinnedWait } from './waits.js';
import { defineOutput } from './define-output.js';
import { checkContextSpec } from './context-spec.js';

/**
 * An agent: what a run of it pins. With an `input` schema, `defineAgent` infers the input's type,
 * so an instructions function (`system.text` as a function) gets it typed; the second type
 * parameter types the application's context (`ctx.app`), e.g. `defineAgent<typeof input, Ctx>`.
 */
/** With an output schema (inferred): the definition also carries the output's type, for ctx.agent. */
export function defineAgent<S extends InputSchema | undefined, C, O extends z.ZodType>(
  spec: AgentSpec<S, C> & { output: O | { schema: O; maxRepairs?: number } },
): AgentDefinition<S, C> & TypedAnswer<z.output<O>>;
/** Without one: a run answers text. */
export function defineAgent<S extends InputSchema | undefined = undefined, C = unknown>(
  spec: AgentSpec<S, C> & { output?: undefined },
): AgentDefinition<S, C> & TypedAnswer<string>;
export function defineAgent<S extends InputSchema | undefined = undefined, C = unknown>(spec: AgentSpec<S, C>): AgentDefinition<S, C>;
export function defineAgent<S extends InputSchema | undefined = undefined, C = unknown>(spec: AgentSpec<S, C>): AgentDefinition<S, C> {
  const names = new Set<string>();
  for (const t of spec.tools) {
    if (names.has(t.name)) throw new ConfigError(`agent ${spec.name}: tool ${t.name} listed twice`);
    names.add(t.name);
  }
  checkContextSpec(spec);
  if (typeof spec.system.text !== 'string' && typeof spec.system.text !== 'function') {
    throw new ConfigError(`agent ${spec.name}: system.text must be text or a function of the run's input`);
  }
  const settings = spec.model.settings === undefined ? undefined : checkSettings(spec, names);
  const inputSchema = spec.input === undefined ? undefined : inputJsonSchema(spec.name, spec.input);
  const pinnedSchedule = spec.schedule === undefined ? undefined : checkSchedule('agent', spec.name, spec.version, spec.schedule, spec.input);
  return {
    ...spec,
    model: { ...spec.model, ...(settings ? { settings } : {}) },
    pinnedTools: spec.tools.map(pinTool),
    // A function's text is known per run (hashed then); the version names the function.
    promptSha256: typeof spec.system.text === 'string' ? sha256Hex(spec.system.text) : sha256Hex(`function:${spec.system.version}`),
    ...(inputSchema ? { inputSchema } : {}),
    ...(pinnedSchedule ? { pinnedSchedule } : {}),
    ...defineOutput(spec),
  };
}

/** Valid settings the model has a switch for, or a ConfigError naming each one it has not. */
function checkSettings(spec: Pick<AgentSpec, 'name' | 'model'>, tools: ReadonlySet<string>): ModelSettings {
  const parsed = modelSettingsSchema.safeParse(spec.model.settings);
  if (!parsed.success) throw new ConfigError(`agent ${spec.name}: invalid model.settings: ${zodIssuesText(parsed.error)}`);
  const settings = parsed.data;
  const problems = modelSettingsProblems(spec.model.id, settings, { tools: tools.size, maxOutputTokens: spec.model.maxOutputTokens });
  if (settings.parallelToolCalls !== undefined && tools.size === 0) problems.push('parallelToolCalls: the agent has no tools');
  const choice = settings.toolChoice;
  if (choice !== undefined && choice !== 'auto' && choice !== 'none' && tools.size === 0) problems.push(`toolChoice: the agent has no tools to choose`);
  if (typeof choice === 'object' && !tools.has(choice.tool)) problems.push(`toolChoice: the agent has no tool ${choice.tool}`);
  if (problems.length > 0) {
    throw new ConfigError(`agent ${spec.name}: model ${spec.model.id} does not support ${problems.map((p) => `settings.${p}`).join('; ')}`);
  }
  return settings;
}

/**
 * The contract an implementation must match: name and input schema (and, for a waiting tool, what
 * it waits for and the payload schema). Policy, timeout and approval are pinned separately.
 */
export function toolSchemaHash(tool: Pick<ToolDefinition, 'name' | 'inputSchema'> & { wait?: ToolDefinition['wait'] }): string {
  const wait = pinnedWait(tool.wait);
  return hashJson(wait ? { name: tool.name, inputSchema: tool.inputSchema, wait } : { name: tool.name, inputSchema: tool.inputSchema });
}

export function pinTool(tool: ToolDefinition): PinnedTool {
  return {
    name: tool.name,
    version: tool.version,
    description: tool.description,
    inputSchema: tool.inputSchema,
    schemaHash: toolSchemaHash(tool),
    policy: tool.policy,
    timeoutMs: tool.timeoutMs,
    ...(tool.approval !== undefined ? { approval: tool.approval === 'always' ? 'always' : 'conditional' } : {}),
    ...(tool.approvalTimeoutSeconds !== undefined ? { approvalTimeoutMs: tool.approvalTimeoutSeconds * 1000 } : {}),
    ...(tool.wait ? { wait: pinnedWait(tool.wait) } : {}),
  };
}
