import { ConfigError } from '../../core/errors.js';
import { policySchema, type Policy } from '../../core/events.js';
import type { JsonValue } from '../../core/json.js';
import type { ApprovalRule, ToolContext, VerifyOutcome } from '../../authoring/types.js';

/** Streamable HTTP: the server's MCP endpoint, and headers (auth) sent with every request. */
export interface McpHttpTransport {
  url: string | URL;
  /** Sent with every request (e.g. `authorization`). Never logged. */
  headers?: Record<string, string>;
}

/** stdio: a child process the connection spawns, one per warm container. */
export interface McpStdioTransport {
  command: string;
  args?: readonly string[];
  /** The child's environment: these plus HOME, PATH, SHELL, TERM, USER, LOGNAME (the SDK's safe set). */
  env?: Record<string, string>;
  cwd?: string;
  /** The child's stderr: inherited (default, so its logs land beside the handler's) or ignored. */
  stderr?: 'inherit' | 'ignore';
  /**
   * How the server reaches a deployed worker, which has only its bundle and the Node.js runtime
   * (read by the `Logbook` CDK construct; see docs/guides/mcp.md#deploying-a-stdio-server):
   * - `{ entry, args? }`: the construct bundles `entry` (a path from the project root, or a
   *   package, as written: it is also the server's name in the bundle) with esbuild into the
   *   worker, and there the server runs as `node <bundled entry> ...args` instead of `command` and
   *   `args`. Deployed functions take its tool list from synth time, so the API and the trigger
   *   never start it and the worker starts it at the first call of one of its tools.
   * - `false`: you ship it yourself (a layer, your own bundling); the construct does not check it.
   * Without it, the construct refuses to synthesize an app whose agents use this server.
   */
  bundle?: { entry: string; args?: readonly string[] } | false;
}

export type McpTransport = McpHttpTransport | McpStdioTransport;

/** Calls other tools of the same server, for a `verify` override. */
export interface McpCaller {
  /** The tool's output as a Logbook tool would return it; throws McpToolError on `isError`. */
  callTool(name: string, args: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<JsonValue>;
}

/**
 * What to do with a started call of this tool that has no result, instead of what the server's
 * annotations say; optionally with its own timeout. `verify` needs a way to look, here usually
 * another tool of the same server.
 */
export type McpPolicyOverride =
  | Exclude<Policy, 'verify'>
  | { policy: Exclude<Policy, 'verify'>; timeoutMs?: number }
  | {
      policy: 'verify';
      timeoutMs?: number;
      verify(args: Record<string, unknown>, ctx: ToolContext, server: McpCaller): Promise<VerifyOutcome>;
    };

/** A tool as the server lists it, for `include`. */
export interface McpListedTool {
  name: string;
  description?: string;
  annotations?: { readOnlyHint?: boolean; idempotentHint?: boolean; destructiveHint?: boolean; openWorldHint?: boolean; title?: string };
}

/**
 * Which calls a person approves before they run (the engine's approvals: bound to the exact
 * arguments, waiting holding no Lambda). A tool named in `tools` gets its rule; with
 * `destructive: true` every other tool that may destroy something gets `always`.
 */
export interface McpApprovalOptions {
  /**
   * Every tool the annotations do not show to be harmless: all but those marked
   * `readOnlyHint: true` or `destructiveHint: false` (the MCP spec's default for a tool that is not
   * read-only is destructive), and those with contradictory hints. The annotations come from the
   * server: a server that lies "read-only" escapes this rule, never a rule in `tools`.
   */
  destructive?: boolean;
  /** By MCP tool name: `always`, or a predicate of the call's arguments (true: ask a person). */
  tools?: Record<string, ApprovalRule<Record<string, unknown>>>;
  /** An approval not given within this time rejects the call. Default: until the run's deadline. */
  timeoutSeconds?: number;
}

export interface McpToolsOptions {
  transport: McpTransport;
  /** The server's tools to offer (by their MCP names), or a filter. Default: all of them. */
  include?: readonly string[] | ((tool: McpListedTool) => boolean);
  /** Prepended to every tool name (e.g. `github_`), to keep two servers' tools apart. */
  prefix?: string;
  /** Policies by MCP tool name, overriding the annotations. */
  policies?: Record<string, McpPolicyOverride>;
  /**
   * Take the annotations' word for policies (default false): read-only → rerun, idempotent →
   * idempotency_key. Annotations are claims made by the server, and a false "read-only" makes a
   * lost call of a payment run twice; so by default every tool not in `policies` escalates (a
   * person decides, and only for a call that started and has no result). Set true for a server
   * you vouch for. Even then `destructiveHint: true` and contradictory hints escalate.
   */
  trustAnnotations?: boolean;
  /** Approval by a person before calls run: per tool, or for every destructive one. */
  approval?: McpApprovalOptions;
  /**
   * The model-facing description of tools by MCP name, used as written (yours, so trusted). A
   * tool not named here gets the server's description, cleaned (no invisible or control
   * characters), capped at `maxDescriptionChars` and wrapped in a label saying it is the
   * server's text, not instructions.
   */
  descriptions?: Record<string, string>;
  /** Longest server-written description (and schema description or title) kept, in characters. Default 2,000. */
  maxDescriptionChars?: number;
  /**
   * The largest message (a tool's result, as JSON on the wire) taken from the server, in bytes.
   * Default 1 MiB. Enforced while reading: a larger result is dropped as it arrives and the call
   * gets an error result (`mcp_result_too_large`) the model sees.
   */
  maxResultBytes?: number;
  /** Per call, default 60 s; at most MAX_TOOL_TIMEOUT_MS. Also bounds the SDK's own request timeout. */
  timeoutMs?: number;
  /**
   * Bound on connecting and initializing, and on listing at cold start. Default 10 s. A reconnect
   * during a call is also held to half the call's timeout, so a server that is down gives an
   * error result before the engine would have to treat the call as unknown.
   */
  connectTimeoutMs?: number;
  /** How this client introduces itself in `initialize`. Default `logbook`. */
  clientInfo?: { name: string; version: string };
}

/** `_meta` keys of every `tools/call` Logbook sends: a server that dedupes reads the key there. */
export const MCP_META_KEYS = {
  /** `<tenant>:<runId>:<callId>`, the same on every attempt of a call. */
  idempotencyKey: 'logbook/idempotency-key',
  /** The lease epoch of the calling worker: a server may reject a lower one than it has seen. */
  fencingToken: 'logbook/fencing-token',
} as const;

export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const PREFIX = /^[a-zA-Z][a-zA-Z0-9_-]*$/;
/** The closed set of policies, from its schema (never a second list). */
const POLICIES: readonly string[] = policySchema.options;

export function isHttpTransport(t: McpTransport): t is McpHttpTransport {
  return 'url' in t && t.url !== undefined;
}

/** A label for errors and versions that never shows credentials in a URL. */
export function describeTransport(t: McpTransport): string {
  if (!isHttpTransport(t)) return `stdio:${t.command}`;
  const url = new URL(String(t.url));
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/** Options are code the application wrote: a mistake is a ConfigError at cold start. */
export function checkOptions(options: McpToolsOptions): void {
  const t = options?.transport as Partial<McpHttpTransport & McpStdioTransport> | undefined;
  if (!t || (t.url === undefined) === (t.command === undefined)) {
    throw new ConfigError('mcpTools: transport must be { url } (Streamable HTTP) or { command, args } (stdio), not both');
  }
  if (t.url !== undefined) {
    let url: URL;
    try {
      url = new URL(String(t.url));
    } catch {
      throw new ConfigError('mcpTools: transport.url is not a valid URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError('mcpTools: transport.url must be http(s)');
  } else if (typeof t.command !== 'string' || t.command.length === 0) {
    throw new ConfigError('mcpTools: transport.command must be a non-empty string');
  } else if (t.bundle !== undefined && t.bundle !== false) {
    const { entry, args } = t.bundle as { entry?: unknown; args?: unknown };
    if (typeof entry !== 'string' || entry.trim() === '')
      throw new ConfigError('mcpTools: transport.bundle.entry must be a path from the project root or a package');
    if (args !== undefined && !(Array.isArray(args) && args.every((a) => typeof a === 'string'))) {
      throw new ConfigError('mcpTools: transport.bundle.args must be an array of strings');
    }
  }
  if (options.prefix !== undefined && options.prefix !== '' && !PREFIX.test(options.prefix)) {
    throw new ConfigError(`mcpTools: prefix "${options.prefix}" must match ${PREFIX}`);
  }
  for (const [name, override] of Object.entries(options.policies ?? {})) {
    const policy = typeof override === 'string' ? override : override?.policy;
    if (!POLICIES.includes(policy as string)) throw new ConfigError(`mcpTools: policies.${name} must be one of ${POLICIES.join(', ')}`);
    if (policy === 'verify' && typeof (override as { verify?: unknown }).verify !== 'function') {
      throw new ConfigError(`mcpTools: policies.${name} is verify but has no verify()`);
    }
  }
  for (const [key, value] of [
    ['timeoutMs', options.timeoutMs],
    ['connectTimeoutMs', options.connectTimeoutMs],
  ] as const) {
    if (value !== undefined && !(Number.isInteger(value) && value > 0)) throw new ConfigError(`mcpTools: ${key} must be a positive integer of milliseconds`);
  }
  for (const [key, value] of [
    ['maxResultBytes', options.maxResultBytes],
    ['maxDescriptionChars', options.maxDescriptionChars],
  ] as const) {
    if (value !== undefined && !(Number.isInteger(value) && value > 0)) throw new ConfigError(`mcpTools: ${key} must be a positive integer`);
  }
  for (const [name, text] of Object.entries(options.descriptions ?? {})) {
    if (typeof text !== 'string' || text.trim() === '') throw new ConfigError(`mcpTools: descriptions.${name} must be a non-empty string`);
  }
  const approval = options.approval;
  if (approval !== undefined) {
    for (const [name, rule] of Object.entries(approval.tools ?? {})) {
      if (rule !== 'always' && typeof rule !== 'function') throw new ConfigError(`mcpTools: approval.tools.${name} must be 'always' or a predicate`);
    }
    const t = approval.timeoutSeconds;
    if (t !== undefined && !(Number.isInteger(t) && t > 0)) throw new ConfigError('mcpTools: approval.timeoutSeconds must be a positive integer');
  }
}
