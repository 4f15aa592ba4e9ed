import { z } from 'zod';
import { ConfigError } from '../core/errors.js';
import { hashJson } from '../support/hash.js';
import { inputJsonSchema } from './run-input.js';
import { checkSchedule } from './schedule.js';
import type { InputSchema } from './types.js';
import type { WorkflowDefinition, WorkflowSpec } from './workflow-types.js';

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * A workflow: code around agents, as a plain async function whose operations (`ctx.step`,
 * `ctx.sleep`, `ctx.waitForSignal`, `ctx.agent`, ...) are recorded in the run's log and replayed
 * from it. Register it with `defineAgents({ agents, workflows: [...] })`; start it as any run
 * (POST /runs with `workflow`, EventBridge, a parent run). Its name and version are pinned when a
 * run starts: register every version that still has runs, as for agents.
 */
export function defineWorkflow<S extends InputSchema | undefined = undefined, O extends z.ZodType | undefined = undefined>(
  spec: WorkflowSpec<S, O>,
): WorkflowDefinition<S, O> {
  if (!NAME.test(spec.name)) throw new ConfigError(`workflow name ${JSON.stringify(spec.name)} must match ${NAME}`);
  if (typeof spec.version !== 'string' || spec.version.length === 0 || spec.version.length > 64) {
    throw new ConfigError(`workflow ${spec.name}: version must be a non-empty string of at most 64 characters`);
  }
  if (typeof spec.run !== 'function') throw new ConfigError(`workflow ${spec.name}: run must be an async function (ctx, input) => output`);
  if (spec.graceMs !== undefined && (!Number.isInteger(spec.graceMs) || spec.graceMs < 0)) {
    throw new ConfigError(`workflow ${spec.name}: graceMs must be a non-negative integer`);
  }
  const inputSchema = spec.input === undefined ? undefined : inputJsonSchema(spec.name, spec.input);
  const pinnedSchedule = spec.schedule === undefined ? undefined : checkSchedule('workflow', spec.name, spec.version, spec.schedule, spec.input);
  return {
    ...spec,
    kind: 'workflow',
    ...(inputSchema ? { inputSchema } : {}),
    ...(pinnedSchedule ? { pinnedSchedule } : {}),
    ...(spec.output ? { pinnedOutput: pinOutput(spec.name, spec.output) } : {}),
  };
}

function pinOutput(name: string, schema: z.ZodType): { schema: Record<string, unknown>; schemaHash: string } {
  let json: Record<string, unknown>;
  try {
    json = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output' }) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError(`workflow ${name}: its output schema has no JSON Schema: ${error instanceof Error ? error.message : String(error)}`);
  }
  delete json.$schema;
  return { schema: json, schemaHash: hashJson({ output: json }) };
}

/** Duck-typed: an application may load its own copy of the package. */
export function isWorkflowDefinition(value: unknown): value is WorkflowDefinition {
  return (
    typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'workflow' && typeof (value as { run?: unknown }).run === 'function'
  );
}
