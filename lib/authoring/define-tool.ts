import { z } from 'zod';
import { ConfigError } from '../core/errors.js';
import { DEFAULT_TOOL_TIMEOUT_MS, MAX_TOOL_TIMEOUT_MS } from '../engine/limits.js';
import type { JsonSchemaInput, ToolDefinition, ToolSpec } from './types.js';

const NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

export function defineTool<I>(spec: ToolSpec<I>): ToolDefinition<I> {
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
  return { ...spec, input, policy, timeoutMs, inputSchema, verify: spec.verify };
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
