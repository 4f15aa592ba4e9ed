import { ConfigError } from '../../core/errors.js';

/** Logbook's tool-name rule (defineTool), which is also what model providers accept. */
const NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

/**
 * The Logbook names of a server's tools: prefix + MCP name, with characters Logbook does not allow
 * (MCP names may hold `.` or `/`) turned into `_`. Two tools that end up with the same name, or
 * a name that is still invalid (too long, no leading letter), are a ConfigError naming the remedy.
 */
export function logbookToolNames(mcpNames: readonly string[], prefix: string, server: string): Map<string, string> {
  const byLogbookName = new Map<string, string>();
  const out = new Map<string, string>();
  for (const mcpName of mcpNames) {
    const name = `${prefix}${mcpName.replace(/[^a-zA-Z0-9_-]/g, '_')}`;
    if (!NAME.test(name)) {
      throw new ConfigError(
        `MCP server ${server}: tool "${mcpName}" becomes "${name}", which does not match ${NAME}: leave it out with \`include\`, or use another prefix`,
      );
    }
    const clash = byLogbookName.get(name);
    if (clash !== undefined)
      throw new ConfigError(`MCP server ${server}: tools "${clash}" and "${mcpName}" both become "${name}": leave one out with \`include\``);
    byLogbookName.set(name, mcpName);
    out.set(mcpName, name);
  }
  return out;
}
