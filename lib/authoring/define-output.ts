import { z } from 'zod';
import { ConfigError } from '../core/errors.js';
import type { PinnedOutput } from '../core/events.js';
import { DEFAULT_OUTPUT_REPAIRS, MAX_OUTPUT_REPAIRS } from '../core/output.js';
import { hashJson } from '../support/hash.js';
import type { AgentSpec, OutputSpec } from './types.js';

/**
 * An agent's output schema as run_started pins it: the JSON Schema the model is asked for (what
 * the zod schema accepts, `io: 'input'`: defaults and transforms apply after), its hash, and the
 * repairs. A schema zod cannot express as JSON Schema is refused here, at definition time.
 */
export function defineOutput(spec: Pick<AgentSpec, 'name' | 'output'>): { pinnedOutput?: PinnedOutput; outputSchema?: z.ZodType } {
  if (spec.output === undefined) return {};
  const { schema, maxRepairs = DEFAULT_OUTPUT_REPAIRS } = isOutputSpec(spec.output) ? spec.output : { schema: spec.output };
  if (!Number.isInteger(maxRepairs) || maxRepairs < 0 || maxRepairs > MAX_OUTPUT_REPAIRS) {
    throw new ConfigError(`agent ${spec.name}: output.maxRepairs must be an integer in [0, ${MAX_OUTPUT_REPAIRS}]`);
  }
  let json: Record<string, unknown>;
  try {
    json = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input' }) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError(`agent ${spec.name}: its output schema has no JSON Schema: ${error instanceof Error ? error.message : String(error)}`);
  }
  delete json.$schema; // providers reject the dialect marker, as for tool inputs
  return { pinnedOutput: { schema: json, schemaHash: outputSchemaHash(json), maxRepairs }, outputSchema: schema };
}

export function outputSchemaHash(schema: Record<string, unknown>): string {
  return hashJson({ output: schema });
}

function isOutputSpec(output: z.ZodType | OutputSpec): output is OutputSpec {
  // Duck-typed: a zod schema has safeParse; an application may bring its own copy of zod.
  return typeof (output as { safeParse?: unknown }).safeParse !== 'function';
}
