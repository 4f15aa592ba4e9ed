import { z } from 'zod';
import { ConfigError, ValidationError } from '../core/errors.js';
import type { JsonValue } from '../core/json.js';
import { zodIssues } from '../core/zod-issues.js';
import { hashJson } from '../support/hash.js';
import type { AgentDefinition, InputSchema } from './types.js';
import { unknownFields } from './unknown-fields.js';

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
 * issues name each bad field under `path` (`input.customer.email`), a field the schema does not
 * name included (unknown-fields.ts). Without a schema the input is taken as it is.
 */
export function parseRunInput(agent: Pick<AgentDefinition, 'name' | 'version' | 'input'>, input: unknown, path = 'input'): unknown {
  if (!agent.input) return input;
  const parsed = agent.input.safeParse(input);
  if (!parsed.success) {
    throw new ValidationError(`input does not fit the input schema of ${agent.name}@${agent.version}`, zodIssues(parsed.error, { prefix: path }));
  }
  // z.object() would drop a field it does not name; a run is never started without what was sent.
  const unknown = unknownFields(agent.input, input);
  if (unknown.length > 0) {
    throw new ValidationError(
      `input has fields the input schema of ${agent.name}@${agent.version} does not name`,
      unknown.map((at) => ({ path: [path, ...at].join('.'), message: UNKNOWN_FIELD })),
    );
  }
  return parsed.data;
}

/** The issue for a field the schema does not name (the same words zod's strict objects get). */
export const UNKNOWN_FIELD = 'unknown field (the input schema does not name it; z.looseObject() takes extra fields)';

/** Like parseRunInput, for callers that only need to know it fits. */
export function checkRunInput(agent: Pick<AgentDefinition, 'name' | 'version' | 'input'>, input: JsonValue, path = 'input'): void {
  parseRunInput(agent, input, path);
}
