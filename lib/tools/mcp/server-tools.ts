import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { ConfigError } from '../../core/errors.js';
import type { JsonValue } from '../../core/json.js';
import { DEFAULT_TOOL_TIMEOUT_MS } from '../../core/limits.js';
import { defineTool } from '../../authoring/define-tool.js';
import type { ApprovalRule, ToolContext, ToolDefinition } from '../../authoring/types.js';
import { jsonSchemaInput } from '../json-schema.js';
import { McpConnection } from './connection.js';
import { logbookToolNames } from './names.js';
import { DEFAULT_CONNECT_TIMEOUT_MS, describeTransport, MCP_META_KEYS, type McpCaller, type McpToolsOptions, type McpTransport } from './options.js';
import { mayDestroy, policyFor } from './policy.js';
import { DEFAULT_MAX_RESULT_BYTES } from './result-cap.js';
import { toolOutput } from './result.js';
import { serverPackage } from './server-package.js';
import { MCP_SOURCE, toolSource, type ShippedServer } from './shipped-servers.js';
import { cleanSchemaText, DEFAULT_MAX_DESCRIPTION_CHARS, stripInvisible, wrapServerDescription } from './untrusted-text.js';

/** What `connectMcpServer()` returns: the server's tools as Logbook tools, over one kept connection. */
export interface McpServerTools {
  tools: ToolDefinition<Record<string, unknown>>[];
  /** `name@version` from the server's `initialize` (in its tools' descriptions and in errors). */
  server: string;
  /**
   * The version every tool of it is pinned under: the installed package's `name@version` when the
   * server runs from one (a stdio `bundle.entry` or script inside node_modules), else `server`
   * (server-package.ts says why).
   */
  version: string;
  /** Connections made so far: 1 for a warm container whose server stayed up. */
  readonly connects: number;
  /**
   * Close the connection now: the HTTP session, or the stdio server's process (its stdin is
   * closed, then SIGTERM, then SIGKILL, about 4 s at most for a server that ignores both).
   * Idempotent. Calls in flight end as unknown (their policies decide); a call made afterwards is
   * not sent and gets an error result `mcp_connection_closed`: closing is final, connect again
   * with connectMcpServer() to use the server again.
   */
  close(): Promise<void>;
}

/**
 * Connect, list the tools once, and make each a Logbook tool: the server's JSON schema (pinned in
 * run_started like any tool's, so a changed schema parks runs pinned to the old one), a policy
 * from annotations or the override, and an execute() that calls it over the kept connection.
 */
export async function openMcpServer(options: McpToolsOptions): Promise<McpServerTools> {
  const label = describeTransport(options.transport);
  const connection = connectionFor(options, options.transport, label);
  try {
    const listed = await connection.listTools();
    const info = connection.serverInfo();
    // Self-reported, so without invisible characters: it shows in descriptions and errors.
    const server = info ? stripInvisible(`${info.name}@${info.version}`) : label;
    const version = serverPackage(options.transport) ?? server;
    return serverTools(buildTools(listed, options, connection, { server, version, label }), { server, version }, connection);
  } catch (error) {
    await connection.close();
    throw error;
  }
}

/**
 * A server shipped with a deployed function (shipped-servers.ts): the tools from the listing taken
 * at synth time, through the same code as a live listing (so the same pinned schemas), and a
 * connection made only when a tool is first called. Nothing is spawned here.
 */
export function shippedMcpServer(options: McpToolsOptions, shipped: ShippedServer): McpServerTools {
  const label = describeTransport(options.transport);
  const connection = connectionFor(options, shipped.transport, label);
  const names = { server: shipped.server, version: shipped.version };
  return serverTools(buildTools(shipped.listed as Tool[], options, connection, { ...names, label }), names, connection);
}

function connectionFor(options: McpToolsOptions, transport: McpTransport, label: string): McpConnection {
  return new McpConnection({
    transport,
    label,
    connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    clientInfo: options.clientInfo ?? { name: 'logbook', version: '1' },
    maxResultBytes: options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
  });
}

function serverTools(tools: ToolDefinition<Record<string, unknown>>[], names: { server: string; version: string }, connection: McpConnection): McpServerTools {
  return {
    tools,
    ...names,
    get connects() {
      return connection.connects;
    },
    close: () => connection.close(),
  };
}

function buildTools(
  listed: Tool[],
  options: McpToolsOptions,
  connection: McpConnection,
  identity: { server: string; version: string; label: string },
): ToolDefinition<Record<string, unknown>>[] {
  const { server, version, label } = identity;
  // What the CDK construct reads of each tool at synth time, to ship the server with the worker.
  const source = toolSource(options.transport, label, { server, version }, listed);
  // Phase 1: choose. Tools that demand task-based execution cannot be called with a plain tools/call.
  const byName = new Map(listed.map((t) => [t.name, t]));
  const include = options.include;
  if (Array.isArray(include)) {
    const missing = include.filter((n) => !byName.has(n));
    if (missing.length > 0) throw new ConfigError(`MCP server ${server} has no tool ${missing.join(', ')} (it lists ${[...byName.keys()].join(', ')})`);
  }
  for (const [key, named] of [
    ['policies', options.policies],
    ['descriptions', options.descriptions],
    ['approval.tools', options.approval?.tools],
  ] as const) {
    for (const name of Object.keys(named ?? {})) {
      if (!byName.has(name)) throw new ConfigError(`mcpTools: ${key}.${name}: MCP server ${server} has no such tool`);
    }
  }
  const chosen = listed.filter((t) => {
    if (t.execution?.taskSupport === 'required') return false;
    if (Array.isArray(include)) return include.includes(t.name);
    return typeof include === 'function' ? include(t) : true;
  });
  // Phase 2: name, validate, and bind each to the connection.
  const names = logbookToolNames(
    chosen.map((t) => t.name),
    options.prefix ?? '',
    server,
  );
  const caller = callerFor(connection, server, options.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS);
  const maxChars = options.maxDescriptionChars ?? DEFAULT_MAX_DESCRIPTION_CHARS;
  return chosen.map((tool) => {
    const name = names.get(tool.name) as string;
    // Not trusted unless the application says so: see McpToolsOptions.trustAnnotations.
    const resolved = policyFor(tool, options.policies?.[tool.name], options.trustAnnotations ?? false);
    const timeoutMs = resolved.timeoutMs ?? options.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    const verify = resolved.verify;
    const approval = approvalFor(tool, options);
    const defined = defineTool<Record<string, unknown>>({
      name,
      version,
      description:
        options.descriptions?.[tool.name] ?? wrapServerDescription(tool.description ?? tool.title ?? tool.annotations?.title ?? tool.name, server, maxChars),
      input: jsonSchemaInput(cleanSchemaText(tool.inputSchema, maxChars) as Record<string, unknown>, `MCP server ${server}: tool ${tool.name}`),
      policy: resolved.policy,
      timeoutMs,
      ...(approval ? { approval } : {}),
      ...(approval && options.approval?.timeoutSeconds !== undefined ? { approvalTimeoutSeconds: options.approval.timeoutSeconds } : {}),
      execute: async (args, ctx) => {
        const result = await connection.callTool(tool.name, args, metaFor(ctx), { signal: ctx.signal, timeoutMs });
        return toolOutput(result, server, tool.name);
      },
      ...(verify ? { verify: (args: Record<string, unknown>, ctx: ToolContext) => verify(args, ctx, caller) } : {}),
    });
    return Object.assign(defined, { [MCP_SOURCE]: source });
  });
}

/** The application's rule for this tool, else `always` for a tool that may destroy something when asked for. */
function approvalFor(tool: Tool, options: McpToolsOptions): ApprovalRule<Record<string, unknown>> | undefined {
  const named = options.approval?.tools?.[tool.name];
  if (named !== undefined) return named;
  return options.approval?.destructive === true && mayDestroy(tool) ? 'always' : undefined;
}

/** The key a deduplicating server needs, and the fencing token, in the request's `_meta`. */
function metaFor(ctx: ToolContext): Record<string, unknown> {
  return { [MCP_META_KEYS.idempotencyKey]: ctx.idempotencyKey, [MCP_META_KEYS.fencingToken]: ctx.fencingToken };
}

function callerFor(connection: McpConnection, server: string, timeoutMs: number): McpCaller {
  return {
    async callTool(name, args, options = {}): Promise<JsonValue> {
      const result = await connection.callTool(name, args, {}, { timeoutMs, ...(options.signal ? { signal: options.signal } : {}) });
      return toolOutput(result, server, name);
    },
  };
}
