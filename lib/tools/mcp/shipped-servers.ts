import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError, errorMessage } from '../../core/errors.js';
import { zodIssuesText } from '../../core/zod-issues.js';
import { isHttpTransport, type McpStdioTransport, type McpTransport } from './options.js';

/**
 * MCP servers shipped with a deployed function by the `Logbook` CDK construct (lib/cdk/mcp-servers.ts
 * writes what this reads). At synth time the construct loads the agents module, which lists each
 * server's tools; it writes those listings to a manifest in every function's bundle and, for the
 * worker, the bundled servers beside it. A deployed mcpTools() then builds its tools from the
 * listing and connects only when a tool is called: the API and the trigger, which only pin tool
 * schemas, never start a server, and the worker starts one at the first call.
 */

/** Set by the construct: the manifest's path, relative to the function's code root. */
export const MCP_MANIFEST_ENV = 'LOGBOOK_MCP_MANIFEST';
/** Where the construct puts the manifest and the bundled servers inside a function's bundle. */
export const MCP_BUNDLE_DIR = 'logbook-mcp';

/**
 * What the agents module's tools carry about the server they came from (an enumerable symbol
 * property, so a spread or filtered copy of a tool keeps it, and JSON never shows it). Symbol.for:
 * the construct's loader reads it from whichever copy of Logbook the module imported.
 */
export const MCP_SOURCE = Symbol.for('logbook.mcp.source');

export interface McpToolSource {
  /** The key the manifest files it under (shippedKey), or undefined for a server not shipped (HTTP). */
  key: string | undefined;
  /** `stdio:<command>` or the URL without credentials (describeTransport). */
  label: string;
  /** `name@version` from `initialize`. */
  server: string;
  /** What every tool of it is pinned under (server-package.ts). */
  version: string;
  transport: { kind: 'http' } | { kind: 'stdio'; command: string; args: string[]; bundle?: { entry: string; args?: string[] } | false };
  /** The tools as the server listed them (before Logbook's cleaning, which runs again from these). */
  listed: unknown[];
}

const manifestSchema = z.object({
  version: z.literal(1),
  servers: z.record(
    z.string(),
    z.object({
      server: z.string(),
      /** The tools' pinned version (absent: `server`). */
      version: z.string().optional(),
      listed: z.array(z.record(z.string(), z.unknown())),
      /** The bundled server, relative to the manifest (worker only; a `bundle: false` server has none). */
      script: z.string().optional(),
      args: z.array(z.string()).optional(),
    }),
  ),
});
export type McpManifest = z.infer<typeof manifestSchema>;

/** A server's manifest key: its bundle entry as written (and its arguments), else its command line; HTTP servers are not shipped. */
export function shippedKey(transport: McpTransport): string | undefined {
  if (isHttpTransport(transport)) return undefined;
  // The arguments are part of it: one entry run with two argument lists is two servers (two tool lists).
  if (transport.bundle) return `bundle:${transport.bundle.entry}${transport.bundle.args?.length ? ` ${JSON.stringify(transport.bundle.args)}` : ''}`;
  return `stdio:${JSON.stringify([transport.command, ...(transport.args ?? [])])}`;
}

export function toolSource(transport: McpTransport, label: string, names: { server: string; version: string }, listed: unknown[]): McpToolSource {
  const key = shippedKey(transport);
  const { server, version } = names;
  if (isHttpTransport(transport)) return { key, label, server, version, transport: { kind: 'http' }, listed };
  const bundle =
    transport.bundle === undefined
      ? {}
      : { bundle: transport.bundle ? { entry: transport.bundle.entry, args: [...(transport.bundle.args ?? [])] } : (false as const) };
  return { key, label, server, version, transport: { kind: 'stdio', command: transport.command, args: [...(transport.args ?? [])], ...bundle }, listed };
}

let loaded: { path: string; manifest: McpManifest } | undefined;

/** The manifest the construct shipped with this function, or undefined outside a deployed bundle. */
function manifest(env: Record<string, string | undefined>): { path: string; manifest: McpManifest } | undefined {
  const relative = env[MCP_MANIFEST_ENV];
  if (!relative) return undefined;
  // Lambda runs a function with its code root as LAMBDA_TASK_ROOT (and the working directory).
  const path = isAbsolute(relative) ? relative : resolve(env.LAMBDA_TASK_ROOT ?? process.cwd(), relative);
  if (loaded?.path === path) return loaded;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(`mcpTools: ${MCP_MANIFEST_ENV} names ${path}, which could not be read: ${errorMessage(error)}`);
  }
  const result = manifestSchema.safeParse(parsed);
  if (!result.success) throw new ConfigError(`mcpTools: ${path} is not a Logbook MCP manifest: ${zodIssuesText(result.error)}`);
  loaded = { path, manifest: result.data };
  return loaded;
}

/** A server shipped with this function: its tools as listed at synth time, and how to start it here. */
export interface ShippedServer {
  server: string;
  version: string;
  listed: unknown[];
  transport: McpStdioTransport;
}

/**
 * The shipped form of `transport` in a deployed bundle, or undefined (not deployed by the
 * construct, an HTTP server, or a `bundle: false` server whose command line differs from synth
 * time: those connect at cold start as before). A server with a `bundle` the manifest lacks was
 * not shipped with this build: that is a ConfigError, not a spawn that cannot work.
 */
export function shippedServer(transport: McpTransport, env: Record<string, string | undefined> = process.env): ShippedServer | undefined {
  const key = shippedKey(transport);
  if (key === undefined || isHttpTransport(transport)) return undefined;
  const found = manifest(env);
  if (!found) return undefined;
  const entry = found.manifest.servers[key];
  if (!entry) {
    if (!transport.bundle) return undefined;
    throw new ConfigError(
      `mcpTools: the MCP server ${transport.bundle.entry} (transport.bundle.entry) is not in this function's bundle; ` +
        `it ships ${Object.keys(found.manifest.servers).join(', ') || 'no servers'} (synthesize again: the entry is matched as written)`,
    );
  }
  const { env: childEnv, cwd, stderr } = transport;
  const rest = { ...(childEnv ? { env: childEnv } : {}), ...(cwd && !transport.bundle ? { cwd } : {}), ...(stderr ? { stderr } : {}) };
  const names = { server: entry.server, version: entry.version ?? entry.server };
  if (entry.script === undefined) return { ...names, listed: entry.listed, transport: { ...transport } };
  // `node` in Lambda is the runtime's own binary, which is running this code.
  const script = resolve(dirname(found.path), entry.script);
  return { ...names, listed: entry.listed, transport: { command: process.execPath, args: [script, ...(entry.args ?? [])], ...rest } };
}
