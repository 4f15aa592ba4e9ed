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
      const parsed = impl.input.safeParse(args);
      return parsed.success ? undefined : zodIssuesText(parsed.error);
    },
    checkJsonSchema(schema, value) {
      return jsonSchemaProblem(schema, value);
    },
    checkPayload(tool, payload) {
      const wait = deps.registry.tool(tool.name, tool.schemaHash, agent)?.wait;
      if (wait?.kind !== 'signal') return `no signal implementation of ${tool.name} for its pinned schema`;
      const parsed = wait.payload.safeParse(payload);
      return parsed.success ? undefined : zodIssuesText(parsed.error);
    },
  };
}
