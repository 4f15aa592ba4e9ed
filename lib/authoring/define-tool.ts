import { z } from 'zod';
import { ConfigError } from '../core/errors.js';
import { DEFAULT_TOOL_TIMEOUT_MS, MAX_TOOL_TIMEOUT_MS } from '../core/limits.js';
import type { JsonValue } from '../core/json.js';
import type { JsonCompatible, JsonSchemaInput, ToolDefinition, ToolSpec } from './types.js';

const NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

/** What the compiler says when execute() returns something JSON would change. */
type NotJson = { execute: 'execute() must return JSON-compatible data: no Date, Map, Set, function or class instance with methods' };
/** What the compiler says when verify() reports as landed something JSON would change. */
type NotJsonVerify = { verify: "verify()'s landed output must be JSON-compatible data: no Date, Map, Set, function or class instance with methods" };

/** unknown when T is JSON-compatible (or `unknown` itself: not checked), else the complaint. */
type JsonChecked<T, Complaint> = unknown extends T ? unknown : [T] extends [JsonCompatible<T>] ? unknown : Complaint;
/**
 * The same for a type behind NoInfer (which keeps V from being inferred from this check), whose
 * unions a conditional type does not distribute over by itself: JsonValue is fine as it is, and
 * any other union is checked member by member.
 */
type EachJson<T> = T extends unknown ? JsonCompatible<T> : never;
type JsonCheckedLate<T, Complaint> = unknown extends T ? unknown : [T] extends [JsonValue] ? unknown : [T] extends [EachJson<T>] ? unknown : Complaint;

/**
 * `O` is what execute() returns, `V` what verify()'s `landed` outcome carries: each checked to be
 * JSON-compatible, so a result typed by an `interface` compiles as well as one typed by a `type`
 * alias (JsonValue needs an index signature). A result typed `unknown` (a promise that never
 * settles, say) is not checked.
 */
export function defineTool<I, O = JsonValue, V = unknown>(
  spec: ToolSpec<I, O, V> & JsonChecked<O, NotJson> & JsonCheckedLate<NoInfer<V>, NotJsonVerify>,
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
  // The result and a landed verify's output are JSON-compatible by O's and V's bounds; the engine records them as JSON.
  const execute = spec.execute as ToolDefinition<I>['execute'];
  const verify = spec.verify as ToolDefinition<I>['verify'];
  return { ...spec, execute, input, policy, timeoutMs, inputSchema, verify };
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
