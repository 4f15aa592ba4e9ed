import type { EventDraft } from './events.js';
import type { JsonValue } from './json.js';

/** What ingesting control items needs from the engine: hashing and the tool's own schemas. */
export interface IngestContext {
  /** sha256 of the canonical arguments as the log will hold them (after redaction). */
  argsHash(args: JsonValue): string;
  /** Why `args` do not fit the pinned tool's input schema, or undefined when they do. */
  checkArgs(tool: { name: string; schemaHash: string }, args: JsonValue): string | undefined;
  /** Why `payload` does not fit the pinned signal tool's payload schema, or undefined. */
  checkPayload(tool: { name: string; schemaHash: string }, payload: JsonValue): string | undefined;
  /** Why `value` does not fit a JSON Schema a workflow operation pinned (a signal's payload, an approval's edit), or undefined. */
  checkJsonSchema(schema: Record<string, unknown>, value: JsonValue): string | undefined;
}

/** The event an inbox item becomes, or why it is ignored. */
export type IngestResult = { event: EventDraft } | { ignored: string };
