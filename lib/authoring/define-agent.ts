import { ConfigError } from '../core/errors.js';
import type { PinnedTool } from '../core/events.js';
import { hashJson, sha256Hex } from '../adapters/system/crypto.js';
import type { AgentDefinition, AgentSpec, ToolDefinition } from './types.js';
import { pinnedWait } from './waits.js';
import { defineOutput } from './define-output.js';
import { checkContextSpec } from './context-spec.js';

export function defineAgent(spec: AgentSpec): AgentDefinition {
  const names = new Set<string>();
  for (const t of spec.tools) {
    if (names.has(t.name)) throw new ConfigError(`agent ${spec.name}: tool ${t.name} listed twice`);
    names.add(t.name);
  }
  checkContextSpec(spec);
  return { ...spec, pinnedTools: spec.tools.map(pinTool), promptSha256: sha256Hex(spec.system.text), ...defineOutput(spec) };
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

