import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { ConfigError } from '../../core/errors.js';
import type { JsonValue } from '../../core/json.js';
import { DEFAULT_TOOL_TIMEOUT_MS } from '../../engine/limits.js';
import { defineTool } from '../../authoring/define-tool.js';
import { type ToolContext, type ToolDefinition } from '../../authoring/types.js';
import { jsonSchemaInput } from '../json-schema.js';
import { McpConnection } from './connection.js';
import { logbookToolNames } from './names.js';
import { DEFAULT_CONNECT_TIMEOUT_MS, describeTransport, MCP_META_KEYS, type McpCaller, type McpToolsOptions } from './options.js';
import { policyFor } from './policy.js';
import { toolOutput } from './result.js';

/** What `connectMcpServer()` returns: the server's tools as Logbook tools, over one kept connection. */
export interface McpServerTools {
  tools: ToolDefinition<Record<string, unknown>>[];
  /** `name@version` from the server's `initialize`; the version of every tool it lists. */
  server: string;
  /** Connections made so far: 1 for a warm container whose server stayed up. */
  readonly connects: number;
  /** Close the connection (a stdio server's process exits). Tools called after this fail. */
  close(): Promise<void>;
}

/**
 * Connect, list the tools once, and make each a Logbook tool: the server's JSON schema (pinned in
 * run_started like any tool's, so a changed schema parks runs pinned to the old one), a policy
 * from annotations or the override, and an execute() that calls it over the kept connection.
 */
export async function openMcpServer(options: McpToolsOptions): Promise<McpServerTools> {
  const label = describeTransport(options.transport);
  const connection = new McpConnection({
    transport: options.transport,
    label,
    connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    clientInfo: options.clientInfo ?? { name: 'logbook', version: '1' },
  });
  try {
    const listed = await connection.listTools();
    const info = connection.serverInfo();
    const server = info ? `${info.name}@${info.version}` : label;
    const tools = buildTools(listed, options, connection, server);
    return {
      tools,
      server,
      get connects() {
        return connection.connects;
      },
      close: () => connection.close(),
    };
  } catch (error) {
    await connection.close();
    throw error;
  }
}

function buildTools(listed: Tool[], options: McpToolsOptions, connection: McpConnection, server: string): ToolDefinition<Record<string, unknown>>[] {
  // Phase 1: choose. Tools that demand task-based execution cannot be called with a plain tools/call.
  const byName = new Map(listed.map((t) => [t.name, t]));
  const include = options.include;
  if (Array.isArray(include)) {
    const missing = include.filter((n) => !byName.has(n));
    if (missing.length > 0) throw new ConfigError(`MCP server ${server} has no tool ${missing.join(', ')} (it lists ${[...byName.keys()].join(', ')})`);
  }
  for (const name of Object.keys(options.policies ?? {})) {
    if (!byName.has(name)) throw new ConfigError(`mcpTools: policies.${name}: MCP server ${server} has no such tool`);
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
  return chosen.map((tool) => {
    const name = names.get(tool.name) as string;
    const resolved = policyFor(tool, options.policies?.[tool.name], options.trustAnnotations ?? true);
    const timeoutMs = resolved.timeoutMs ?? options.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    const verify = resolved.verify;
    return defineTool<Record<string, unknown>>({
      name,
      version: server,
      description: tool.description ?? tool.title ?? tool.annotations?.title ?? tool.name,
      input: jsonSchemaInput(tool.inputSchema as Record<string, unknown>, `MCP server ${server}: tool ${tool.name}`),
      policy: resolved.policy,
      timeoutMs,
      execute: async (args, ctx) => {
        const result = await connection.callTool(tool.name, args, metaFor(ctx), { signal: ctx.signal, timeoutMs });
        return toolOutput(result, server, tool.name);
      },
      ...(verify ? { verify: (args: Record<string, unknown>, ctx: ToolContext) => verify(args, ctx, caller) } : {}),
    });
  });
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
