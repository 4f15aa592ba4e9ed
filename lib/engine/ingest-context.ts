import type { IngestContext } from '../core/ingest.js';
import type { JsonValue } from '../core/json.js';
import type { EngineDeps } from './engine.js';
import { hashJson } from '../support/hash.js';
import { zodIssuesText } from '../core/zod-issues.js';
import { compileJsonSchema, type JsonSchemaCheck } from '../support/json-schema.js';

/** Compiled validators of the schemas workflow operations pin, by their JSON text (a process sees few). */
const validators = new Map<string, JsonSchemaCheck>();
const MAX_VALIDATORS = 200;

/** Why `value` does not fit `schema` (a JSON Schema a workflow pinned), or undefined. */
export function jsonSchemaProblem(schema: Record<string, unknown>, value: JsonValue): string | undefined {
  const key = JSON.stringify(schema);
  let check = validators.get(key);
  if (!check) {
    if (validators.size >= MAX_VALIDATORS) validators.delete(validators.keys().next().value!);
    try {
      check = compileJsonSchema(schema);
    } catch (error) {
      return `the pinned schema does not compile: ${error instanceof Error ? error.message : String(error)}`;
    }
    validators.set(key, check);
  }
  const result = check(value);
  return result.ok ? undefined : result.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
}

interface SafeParser {
  safeParse(
    value: unknown,
  ): { success: true } | { success: false; error: { issues: readonly { code: string; path: readonly PropertyKey[]; message: string }[] } };
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let at = value;
  for (const segment of path) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<PropertyKey, unknown>)[segment];
  }
  return at;
}

/**
 * Why `value` does not fit, leaving out what the redactor changed: inbox items are stored
 * redacted (event-redaction.ts), and the API checked the value as sent before it was. A
 * placeholder where a six-digit code was is what the log, the model and the tool get anyway.
 */
function misfit(schema: SafeParser, value: JsonValue): string | undefined {
  const parsed = schema.safeParse(value);
  if (parsed.success) return undefined;
  const issues = parsed.error.issues.filter((issue) => !(JSON.stringify(valueAt(value, issue.path)) ?? '').includes('[REDACTED:'));
  return issues.length === 0 ? undefined : zodIssuesText({ issues });
}

/**
 * The engine's side of ingesting control items: hashes of arguments as the log will hold them
 * (redacted first, exactly as the codec writes them), and validation by the implementation of
 * the pinned tool contract (name + schema hash), the same schema the worker runs the call with.
 */
export function ingestContext(deps: Pick<EngineDeps, 'codec' | 'registry'>, agent: string): IngestContext {
  return {
    argsHash: (args: JsonValue) => hashJson(deps.codec.redactJson(args)),
    checkArgs(tool, args) {
      const impl = deps.registry.tool(tool.name, tool.schemaHash, agent);
      if (!impl) return `no implementation of ${tool.name} for its pinned schema ${tool.schemaHash.slice(0, 12)}`;
      return misfit(impl.input, args);
    },
    checkJsonSchema(schema, value) {
      return jsonSchemaProblem(schema, value);
    },
    checkPayload(tool, payload) {
      const wait = deps.registry.tool(tool.name, tool.schemaHash, agent)?.wait;
      if (wait?.kind !== 'signal') return `no signal implementation of ${tool.name} for its pinned schema`;
      return misfit(wait.payload, payload);
    },
  };
}
