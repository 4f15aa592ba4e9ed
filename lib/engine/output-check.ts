import { z } from 'zod';
import { answerJson } from '../core/output.js';
import type { PinnedOutput } from '../core/events.js';
import { jsonShapeProblem, type JsonValue } from '../core/json.js';
import { zodIssuesText } from '../core/zod-issues.js';
import type { AgentRegistry } from '../authoring/registry.js';
import { MAX_JSON_DEPTH } from '../core/limits.js';

/** The verdict a final answer's model_response carries under an output schema. */
export type OutputVerdict = { output: JsonValue } | { outputError: string };

/** Zod schemas rebuilt from a pinned JSON Schema, by its hash: built once per container. */
const fromPinned = new Map<string, z.ZodType>();

/**
 * The schema that checks this run's answers: the agent's own zod schema when the registered
 * version still pins the very JSON Schema the run started with (refinements included), else one
 * rebuilt from the pinned JSON Schema, so a run whose agent code changed or went away is still
 * checked against exactly what it started with, never against a newer contract.
 */
export function outputValidator(registry: AgentRegistry, agent: { name: string; version: string }, pinned: PinnedOutput): z.ZodType {
  const own = registry.agent(agent.name, agent.version);
  if (own?.outputSchema && own.pinnedOutput?.schemaHash === pinned.schemaHash) return own.outputSchema;
  let schema = fromPinned.get(pinned.schemaHash);
  if (!schema) {
    schema = z.fromJSONSchema(pinned.schema as Parameters<typeof z.fromJSONSchema>[0]);
    fromPinned.set(pinned.schemaHash, schema);
  }
  return schema;
}

/**
 * Check a final answer's text: JSON (answerJson), then the schema. Deterministic in the text and
 * the schema: it runs before the response is written, and a resumed run reads the verdict from
 * the log instead of checking again.
 */
export function checkAnswer(schema: z.ZodType, text: string): OutputVerdict {
  const json = answerJson(text);
  if (!json.ok) return { outputError: json.error };
  const parsed = schema.safeParse(json.value);
  if (!parsed.success) return { outputError: zodIssuesText(parsed.error) || 'the answer does not fit the schema' };
  // A transform may produce what JSON cannot hold (a Date, a Map); the output is stored as JSON.
  const problem = jsonShapeProblem(parsed.data, MAX_JSON_DEPTH, 'output');
  if (problem) return { outputError: `${problem.path}: ${problem.message}` };
  if (!isPlainJson(parsed.data)) return { outputError: 'the output schema produced a value that is not JSON (a transform to a Date, a Map or undefined?)' };
  return { output: parsed.data as JsonValue };
}

function isPlainJson(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isPlainJson);
  if (typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  return Object.values(value as Record<string, unknown>).every((v) => v !== undefined && isPlainJson(v));
}
