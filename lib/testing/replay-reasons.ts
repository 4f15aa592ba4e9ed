import { CorruptLogError, errorMessage } from '../core/errors.js';
import { EVENT_SCHEMA_VERSION, eventSchema, type PinnedTool } from '../core/events.js';
import { foldLog } from '../core/fold.js';
import type { RunState } from '../core/state.js';
import { unhandled } from '../core/unhandled.js';
import type { Agents } from '../authoring/define-agents.js';
import { parseModelId } from '../models/model-selection.js';

/** Why a recorded run would be stranded by a deploy of the agents being checked. */
export type StrandReason =
  /** The log does not fold: a bad event, a gap, an impossible order. */
  | { code: 'corrupt_log'; seq?: number; message: string }
  /** An event type this code does not know (a newer Logbook wrote it). */
  | { code: 'unknown_event_type'; seq?: number; type: string; message: string }
  /** An event written in a newer event schema than this code reads. */
  | { code: 'newer_event_version'; seq?: number; version: number; message: string }
  /** A pinned tool contract (name + schema hash) with no implementation in the registry. */
  | {
      code: 'missing_tool';
      tool: string;
      version: string;
      schemaHash: string;
      /** Schema hashes registered under the same tool name (empty: no tool of that name at all). */
      registeredSchemaHashes: string[];
      /** Calls of the run that need it now; empty when only a later turn could call it. */
      openCalls: string[];
      message: string;
    }
  /** The pinned model id cannot be served after the deploy. */
  | { code: 'missing_model'; modelId: string; message: string };

const KNOWN_TYPES: ReadonlySet<string> = new Set(eventSchema.options.map((o) => o.shape.type.value));

/** Fold a recorded log, or say (once per kind) why this code cannot read it. */
export function readLog(events: readonly unknown[]): { state: RunState } | { reasons: StrandReason[] } {
  const reasons: StrandReason[] = [];
  const seen = new Set<string>();
  const once = (reason: StrandReason) => {
    if (seen.has(reason.code)) return;
    seen.add(reason.code);
    reasons.push(reason);
  };
  for (const raw of events) {
    const e = (raw ?? {}) as { seq?: unknown; v?: unknown; type?: unknown; error?: unknown };
    const seq = typeof e.seq === 'number' ? e.seq : undefined;
    const at = seq === undefined ? 'an event' : `seq ${seq}`;
    // The API returns an event it cannot parse as { seq, type: 'invalid', error }.
    if (e.type === 'invalid' && typeof e.error === 'string') {
      once({ code: 'corrupt_log', ...(seq === undefined ? {} : { seq }), message: `the API could not read ${at}: ${e.error}` });
    } else if (typeof e.v === 'number' && e.v > EVENT_SCHEMA_VERSION) {
      once({
        code: 'newer_event_version',
        ...(seq === undefined ? {} : { seq }),
        version: e.v,
        message: `${at} is in event schema v${e.v}, this code reads up to v${EVENT_SCHEMA_VERSION}: a newer Logbook wrote it, and this older one cannot resume the run`,
      });
    } else if (typeof e.type === 'string' && !KNOWN_TYPES.has(e.type)) {
      once({
        code: 'unknown_event_type',
        ...(seq === undefined ? {} : { seq }),
        type: e.type,
        message: `${at} has event type "${e.type}", which this code does not know (a newer Logbook wrote it?)`,
      });
    }
  }
  if (reasons.length > 0) return { reasons };
  try {
    return { state: foldLog(events) };
  } catch (error) {
    const seq = error instanceof CorruptLogError ? error.seq : undefined;
    return { reasons: [{ code: 'corrupt_log', ...(seq === undefined ? {} : { seq }), message: `the log does not fold: ${errorMessage(error)}` }] };
  }
}

/** Every pinned tool contract the registry no longer implements. */
export function missingTools(state: RunState, agents: Agents): StrandReason[] {
  const registered = agents.registry.list().flatMap((a) => a.pinnedTools);
  const reasons: StrandReason[] = [];
  for (const pinned of state.started.tools) {
    if (agents.registry.tool(pinned.name, pinned.schemaHash, state.started.agent.name)) continue;
    const sameName = uniqueBy(
      registered.filter((t) => t.name === pinned.name),
      (t) => t.schemaHash,
    );
    const openCalls = Object.values(state.calls)
      .filter((c) => c.name === pinned.name && c.status !== 'done')
      .map((c) => c.callId);
    const what = `tool ${pinned.name}@${pinned.version} (schema ${short(pinned.schemaHash)}) has no implementation`;
    const others =
      sameName.length === 0
        ? `no tool named ${pinned.name} is registered`
        : `${pinned.name} is registered only with schema ${sameName.map((t) => `${short(t.schemaHash)} (${schemaChange(pinned, t)})`).join(', ')}`;
    const when = openCalls.length > 0 ? `call ${openCalls.join(', ')} needs it now` : 'the run parks as soon as the model calls it';
    reasons.push({
      code: 'missing_tool',
      tool: pinned.name,
      version: pinned.version,
      schemaHash: pinned.schemaHash,
      registeredSchemaHashes: sameName.map((t) => t.schemaHash),
      openCalls,
      message: `${what}: ${others}; ${when}. Keep the old definition registered until these runs end`,
    });
  }
  return reasons;
}

export interface ModelServing {
  agents: Agents;
  env: Record<string, string | undefined>;
  /** Bedrock ids the deployed worker's role may invoke. */
  deployedModelIds: readonly string[];
}

/**
 * Whether the deployed worker can serve a pinned model id, by the rule its wiring follows: the
 * application's own client first (defineAgents({ models })), else a built-in provider (any
 * `bedrock:` id, and the Logbook construct's role may invoke only the ids the agents pin;
 * `openai:` ids when OPENAI_BASE_URL or OPENAI_API_KEY is set). `scripted` ids only as app models.
 */
export function missingModel(modelId: string, serving: ModelServing): StrandReason | undefined {
  if (serving.agents.model(modelId) !== undefined) return undefined;
  const gone = (why: string): StrandReason => ({ code: 'missing_model', modelId, message: `model ${modelId} cannot be served: ${why}` });
  const parsed = parseModelId(modelId);
  const set = (name: string) => (serving.env[name] ?? '') !== '';
  const provider = parsed?.provider;
  switch (provider) {
    case 'bedrock':
      if (serving.deployedModelIds.includes(modelId)) return undefined;
      return gone(
        `the worker may invoke only ${serving.deployedModelIds.filter((id) => id.startsWith('bedrock:')).join(', ') || 'no Bedrock model'} ` +
          "(bedrock:InvokeModel is granted on the models the agents pin): keep an agent version that pins it, or list it in the construct's `models`",
      );
    case 'openai':
      if (set('OPENAI_BASE_URL') || set('OPENAI_API_KEY')) return undefined;
      return gone("the worker's environment sets neither OPENAI_BASE_URL nor OPENAI_API_KEY");
    case 'scripted':
      return gone("it is not among the application's models (defineAgents({ models: { ... } }))");
    default:
      if (provider !== undefined) return unhandled(provider, 'model provider');
      // An AI SDK model object can only come from the agents module: there is no built-in one.
      if (modelId.startsWith('aisdk:'))
        return gone('it is an AI SDK model the application no longer lists (defineAgents({ models: { [model.id]: () => model } }))');
      return gone("it is neither one of the application's models nor a built-in provider id (bedrock:<id>, openai:<model>)");
  }
}

/** What changed between two input schemas, in a few words (top-level properties and required). */
export function schemaChange(from: Pick<PinnedTool, 'inputSchema'>, to: Pick<PinnedTool, 'inputSchema'>): string {
  const props = (s: Record<string, unknown>) => Object.keys((s.properties as Record<string, unknown> | undefined) ?? {});
  const required = (s: Record<string, unknown>) => (Array.isArray(s.required) ? (s.required as string[]) : []);
  const diff = (a: string[], b: string[]) => a.filter((x) => !b.includes(x));
  const parts = [
    ...diff(props(to.inputSchema), props(from.inputSchema)).map((p) => `adds ${required(to.inputSchema).includes(p) ? 'required ' : ''}"${p}"`),
    ...diff(props(from.inputSchema), props(to.inputSchema)).map((p) => `drops "${p}"`),
    ...diff(required(to.inputSchema), required(from.inputSchema))
      .filter((p) => props(from.inputSchema).includes(p))
      .map((p) => `now requires "${p}"`),
    ...diff(required(from.inputSchema), required(to.inputSchema))
      .filter((p) => props(to.inputSchema).includes(p))
      .map((p) => `no longer requires "${p}"`),
  ];
  return parts.length > 0 ? parts.join(', ') : 'a property type or constraint changed';
}

function short(hash: string): string {
  return hash.slice(0, 12);
}

function uniqueBy<T>(items: T[], key: (t: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((t) => (seen.has(key(t)) ? false : (seen.add(key(t)), true)));
}
