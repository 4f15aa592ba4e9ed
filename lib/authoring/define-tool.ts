import { z } from 'zod';
import { ConfigError } from '../core/errors.js';
import { DEFAULT_TOOL_TIMEOUT_MS, MAX_TOOL_TIMEOUT_MS } from '../core/limits.js';
import type { JsonValue } from '../core/json.js';
import type { JsonCompatible, JsonSchemaInput, ToolDefinition, ToolSpec } from './types.js';

const NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

/** What the compiler says when execute() returns something JSON would change. */
type NotJson = { execute: 'execute() must return JSON-compatible data: no Date, Map, Set, function or class instance with methods' };

/**
 * `O` is what execute() returns: checked to be JSON-compatible, so a result typed by an
 * `interface` compiles as well as one typed by a `type` alias (JsonValue needs an index signature).
 * A result typed `unknown` (a promise that never settles, say) is not checked.
 */
export function defineTool<I, O = JsonValue>(
  spec: ToolSpec<I, O> & (unknown extends O ? unknown : [O] extends [JsonCompatible<O>] ? unknown : NotJson),
): ToolDefinition<I> {
  if (!NAME.test(spec.name)) throw new ConfigError(`tool name "${spec.name}" must match ${NAME}`);
  const policy = spec.policy ?? 'escalate';
  if (policy === 'verify' && !spec.verify) throw new ConfigError(`tool ${spec.name} has policy verify but no verify()`);
  const timeoutMs = spec.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  if (timeoutMs <= 0 || timeoutMs > MAX_TOOL_TIMEOUT_MS) {
    throw new ConfigError(`tool ${spec.name}: timeoutMs must be in (0, ${MAX_TOOL_TIMEOUT_MS}]`);
  }
  const t = spec.approvalTimeoutSeconds;
  if (t !== undefined && (!Number.isInteger(t) || t <= 0)) throw new ConfigError(`tool ${spec.name}: approvalTimeoutSeconds must be a positive integer`);
  if (t !== undefined && spec.approval === undefined) throw new ConfigError(`tool ${spec.name}: approvalTimeoutSeconds without approval`);
  const { input, inputSchema } = isJsonSchemaInput(spec.input) ? fromJsonSchema(spec.input) : fromZod(spec.input);
  // The result is JSON-compatible by O's bound; the engine records it as JSON.
  const execute = spec.execute as ToolDefinition<I>['execute'];
  return { ...spec, execute, input, policy, timeoutMs, inputSchema, verify: spec.verify };
}

function isJsonSchemaInput<I>(input: z.ZodType<I> | JsonSchemaInput<I>): input is JsonSchemaInput<I> {
  // Duck-typed, not instanceof: an application may bring its own copy of zod.
  return typeof (input as { safeParse?: unknown }).safeParse !== 'function' && typeof (input as JsonSchemaInput<I>).validate === 'function';
}

function fromZod<I>(input: z.ZodType<I>): { input: z.ZodType<I>; inputSchema: Record<string, unknown> } {
  const inputSchema = z.toJSONSchema(input, { target: 'draft-2020-12' }) as Record<string, unknown>;
  delete inputSchema.$schema;
  return { input, inputSchema };
}

/** The dialect marker is dropped as for zod tools: providers reject it, and the validator already knows it. */
function fromJsonSchema<I>(spec: JsonSchemaInput<I>): { input: z.ZodType<I>; inputSchema: Record<string, unknown> } {
  const inputSchema = structuredClone(spec.jsonSchema);
  delete inputSchema.$schema;
  const input = z.custom<I>().superRefine((value, ctx) => {
    const result = spec.validate(value);
    if (!result.ok) for (const issue of result.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: [...issue.path] });
  });
  return { input, inputSchema };
}
