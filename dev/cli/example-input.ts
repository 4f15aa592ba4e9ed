import type { AgentDefinition } from '../../lib/authoring/types.js';
import type { WorkflowDefinition } from '../../lib/authoring/workflow-types.js';
import type { JsonValue } from '../../lib/core/json.js';

/**
 * An example input for an agent, for the `logbook dev` banner: the schema's own example
 * (`.meta({ examples: [...] })`), else a minimal value built from its JSON Schema, kept only if the
 * agent's zod schema accepts it. Without a schema, a greeting.
 */
export function exampleInput(agent: Pick<AgentDefinition, 'input' | 'inputSchema'>): JsonValue | undefined {
  if (!agent.input || !agent.inputSchema) return 'hello';
  const candidate = fromJsonSchema(agent.inputSchema.jsonSchema, 0);
  return candidate !== undefined && agent.input.safeParse(candidate).success ? candidate : undefined;
}

type Schema = Record<string, unknown>;

function fromJsonSchema(schema: Schema, depth: number): JsonValue | undefined {
  if (depth > 8) return undefined;
  const examples = schema.examples;
  if (Array.isArray(examples) && examples.length > 0) return examples[0] as JsonValue;
  if (schema.default !== undefined) return schema.default as JsonValue;
  if (schema.const !== undefined) return schema.const as JsonValue;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0] as JsonValue;
  const variants = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (Array.isArray(variants) && variants[0]) return fromJsonSchema(variants[0], depth + 1);
  switch (schema.type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
      const out: Record<string, JsonValue> = {};
      for (const key of required) {
        const value = properties[key] ? fromJsonSchema(properties[key], depth + 1) : undefined;
        if (value === undefined) return undefined;
        out[key] = value;
      }
      return out;
    }
    case 'array': {
      const min = typeof schema.minItems === 'number' ? schema.minItems : 0;
      if (min === 0) return [];
      const item = schema.items ? fromJsonSchema(schema.items as Schema, depth + 1) : undefined;
      return item === undefined ? undefined : Array.from({ length: min }, () => item);
    }
    case 'string':
      return exampleString(schema);
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return undefined;
  }
}

function exampleString(schema: Schema): string | undefined {
  const byFormat: Record<string, string> = {
    email: 'alice@example.com',
    uri: 'https://example.com',
    url: 'https://example.com',
    uuid: '00000000-0000-4000-8000-000000000000',
    date: '2025-01-01',
    'date-time': '2025-01-01T00:00:00Z',
  };
  const formatted = typeof schema.format === 'string' ? byFormat[schema.format] : undefined;
  // A pattern without a known format: no guess (the whole example is checked by the schema anyway).
  if (formatted === undefined && schema.pattern !== undefined) return undefined;
  const text = formatted ?? 'example';
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  return text.length >= min ? text : text.padEnd(min, 'x');
}

/** A shell word: single-quoted, with embedded single quotes closed, escaped and reopened. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The banner's "Start a run" line: an input that fits the agent, or where to read what it takes. */
export function startRunHint(agent: Pick<AgentDefinition, 'name' | 'input' | 'inputSchema'> | undefined, apiFlag: string): string {
  if (!agent) return `npx logbook runs start AGENT --input 'hello'${apiFlag}`;
  const example = exampleInput(agent);
  if (example === undefined) {
    return `npx logbook runs start ${agent.name} --input-file input.json${apiFlag}   (its input schema: GET /agents/${agent.name}/schema)`;
  }
  const text = typeof example === 'string' ? example : JSON.stringify(example);
  return `npx logbook runs start ${agent.name} --input ${shellQuote(text)}${apiFlag}`;
}

/** The banner's "Start a run" line for a workflow (a module with workflows and no agent). */
export function startWorkflowHint(workflow: Pick<WorkflowDefinition, 'name' | 'input' | 'inputSchema'>, apiFlag: string): string {
  const example = exampleInput(workflow as Pick<AgentDefinition, 'input' | 'inputSchema'>);
  if (example === undefined)
    return `npx logbook runs start --workflow ${workflow.name} --input-file input.json${apiFlag}   (its input schema: npx logbook workflows --json)`;
  const text = typeof example === 'string' ? example : JSON.stringify(example);
  return `npx logbook runs start --workflow ${workflow.name} --input ${shellQuote(text)}${apiFlag}`;
}
