import { ConfigError } from '../../core/errors.js';
import type { Policy } from '../../core/events.js';
import type { JsonValue } from '../../core/json.js';
import type { ToolContext, VerifyOutcome } from '../../authoring/types.js';

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

export interface McpToolsOptions {
  transport: McpTransport;
  /** The server's tools to offer (by their MCP names), or a filter. Default: all of them. */
  include?: readonly string[] | ((tool: McpListedTool) => boolean);
  /** Prepended to every tool name (e.g. `github_`), to keep two servers' tools apart. */
  prefix?: string;
  /** Policies by MCP tool name, overriding the annotations. */
  policies?: Record<string, McpPolicyOverride>;
  /**
   * Take the annotations' word (default true). Annotations are hints from the server: for a
   * server you do not trust, set false and every tool not in `policies` escalates.
   */
  trustAnnotations?: boolean;
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
const POLICIES: readonly string[] = ['rerun', 'idempotency_key', 'verify', 'escalate'];

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
  for (const [key, value] of [['timeoutMs', options.timeoutMs], ['connectTimeoutMs', options.connectTimeoutMs]] as const) {
    if (value !== undefined && !(Number.isInteger(value) && value > 0)) throw new ConfigError(`mcpTools: ${key} must be a positive integer of milliseconds`);
  }
}
