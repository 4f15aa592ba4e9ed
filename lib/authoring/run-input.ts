import { z } from 'zod';
import { ConfigError, ValidationError } from '../core/errors.js';
import type { JsonValue } from '../core/json.js';
import { zodIssues } from '../core/zod-issues.js';
import { hashJson } from '../support/hash.js';
import type { AgentDefinition, InputSchema } from './types.js';

/**
 * An agent's typed run input: its JSON Schema (what the API publishes and run_started pins) and
 * the one check every edge that starts or feeds a run applies (POST /runs, the EventBridge
 * trigger, a child run, a fork with a new input, a follow-up message).
 */

/** The JSON Schema of what a caller sends (zod's input side: before defaults and transforms). */
export function inputJsonSchema(agentName: string, schema: InputSchema): { jsonSchema: Record<string, unknown>; sha256: string } {
  let jsonSchema: Record<string, unknown>;
  try {
    jsonSchema = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input' }) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError(`agent ${agentName}: input schema has no JSON Schema form (${(error as Error).message})`);
  }
  delete jsonSchema.$schema;
  return { jsonSchema, sha256: hashJson(jsonSchema) };
}

/**
 * The parsed input (the schema's output, for instructions functions), or a ValidationError whose
 * issues name each bad field under `path` (`input.customer.email`). Without a schema the input is
 * taken as it is.
 */
export function parseRunInput(agent: Pick<AgentDefinition, 'name' | 'version' | 'input'>, input: unknown, path = 'input'): unknown {
  if (!agent.input) return input;
  const parsed = agent.input.safeParse(input);
  if (parsed.success) return parsed.data;
  throw new ValidationError(`input does not fit the input schema of ${agent.name}@${agent.version}`, zodIssues(parsed.error, { prefix: path }));
}

/** Like parseRunInput, for callers that only need to know it fits. */
export function checkRunInput(agent: Pick<AgentDefinition, 'name' | 'version' | 'input'>, input: JsonValue, path = 'input'): void {
  parseRunInput(agent, input, path);
}
