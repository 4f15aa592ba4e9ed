import { ConfigError } from '../core/errors.js';
import type { JsonSchemaInput } from '../authoring/types.js';
import { compileJsonSchema, type JsonSchemaCheck } from '../support/json-schema.js';

/**
 * A JSON Schema as a tool input (tools listed from an MCP server), validated with Ajv, the
 * validator the MCP SDK itself uses, so no second engine enters the bundle (support/json-schema.ts).
 * Arguments are never coerced or given defaults: a tool runs on exactly what the log holds.
 */
export function jsonSchemaInput(schema: Record<string, unknown>, label: string): JsonSchemaInput<Record<string, unknown>> {
  let check: JsonSchemaCheck;
  try {
    check = compileJsonSchema(schema);
  } catch (error) {
    throw new ConfigError(`${label}: its input schema cannot be compiled: ${error instanceof Error ? error.message : String(error)}`);
  }
  return {
    jsonSchema: schema,
    validate(args) {
      const result = check(args);
      return result.ok ? { ok: true, value: args as Record<string, unknown> } : result;
    },
  };
}
