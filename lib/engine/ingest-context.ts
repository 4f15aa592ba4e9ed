import type { IngestContext } from '../core/ingest.js';
import type { JsonValue } from '../core/json.js';
import type { EngineDeps } from './engine.js';
import { hashJson } from '../support/hash.js';
import { zodIssuesText } from '../core/zod-issues.js';

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
    checkPayload(tool, payload) {
      const wait = deps.registry.tool(tool.name, tool.schemaHash, agent)?.wait;
      if (wait?.kind !== 'signal') return `no signal implementation of ${tool.name} for its pinned schema`;
      const parsed = wait.payload.safeParse(payload);
      return parsed.success ? undefined : zodIssuesText(parsed.error);
    },
  };
}
