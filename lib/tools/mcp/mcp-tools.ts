import type { ToolDefinition } from '../../authoring/types.js';
import { checkOptions, type McpToolsOptions } from './options.js';
import type { McpServerTools } from './server-tools.js';

export type { McpServerTools } from './server-tools.js';

/**
 * The tools of an MCP server as Logbook tools, for an agent's `tools: [...]`, with `close()`. Call it in an
 * async agents factory, which runs once per cold start: that is where the connection is made
 * and it is kept for the warm container.
 *
 * ```ts
 * export default async () => defineAgents({
 *   agents: [defineAgent({ ..., tools: [...(await mcpTools({ transport: { command: 'node', args: ['server.js'] } }))] })],
 * });
 * ```
 *
 * A server that cannot be reached at cold start throws McpServerUnavailableError (the next
 * invocation tries again). Deployed by the CDK construct, a stdio server with `transport.bundle`
 * is not started here: its tools come from the listing taken at synth time and it starts at the
 * first call (docs/guides/mcp.md). See McpToolsOptions for policies, names and timeouts.
 */
export async function mcpTools(options: McpToolsOptions): Promise<McpTools> {
  const server = await connectMcpServer(options);
  // Not enumerable: spreading the tools into an agent's list, or comparing them, sees tools only.
  return Object.defineProperty([...server.tools], 'close', { value: () => server.close(), enumerable: false }) as McpTools;
}

/**
 * What mcpTools() returns: the tools (an array, to spread into `tools: [...]`) and `close()`, which
 * ends the connection as McpServerTools.close() does (a stdio server's process is gone when it
 * resolves). A host that shuts down cleanly, or a test that made its own server, calls it; a
 * Lambda container never needs to (the process ends with it).
 */
export type McpTools = ToolDefinition<Record<string, unknown>>[] & { close(): Promise<void> };

/** As mcpTools(), with the server's name and a close() (tests, and hosts that shut down cleanly). */
export async function connectMcpServer(options: McpToolsOptions): Promise<McpServerTools> {
  checkOptions(options);
  // Loaded on first use, so an application without MCP servers never loads the SDK or Ajv.
  const [{ openMcpServer, shippedMcpServer }, { shippedServer }] = await Promise.all([import('./server-tools.js'), import('./shipped-servers.js')]);
  // Deployed by the CDK construct: the tools as listed at synth time, connected at first call.
  const shipped = shippedServer(options.transport);
  return shipped ? shippedMcpServer(options, shipped) : openMcpServer(options);
}
