import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { isHttpTransport, type McpTransport } from './options.js';

/**
 * The version an MCP server's tools are pinned under. A server says its own `name@version` in
 * `initialize`, and that is whatever its author wrote into the code: the MCP SDK's example
 * servers say `1.0.0` in every SDK release, a package's server often says the same for years. A
 * run's pinned version should name the code that ran, and change when that code changes; an
 * installed package's `name@version` does (npm never republishes a version). So the tools of a
 * server Logbook starts from an installed package (a stdio `bundle.entry`, or the script of a
 * `node`-like command, inside node_modules) are pinned under that package; any other server
 * (HTTP, the application's own script, a command Logbook cannot read) under what it says.
 * Tool implementations are found by name and schema hash, never by this version: it tells the
 * reader of a log what ran, and a changed one strands no run.
 */

/** Launchers that run their first non-flag argument as a script. */
export const NODE_LIKE = /^(node|nodejs|tsx|ts-node|bun|deno)(\.exe)?$/;
/** Node flags whose value is the next argument, not the script. */
const FLAGS_WITH_VALUE = new Set(['--import', '-r', '--require', '--loader', '--experimental-loader', '-C', '--conditions', '--env-file', '--input-type']);

/** The first argument that is not a flag (or a flag's value): the script a node-like command runs. */
export function firstOperand(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (FLAGS_WITH_VALUE.has(arg)) i++;
    else if (!arg.startsWith('-')) return arg;
  }
  return undefined;
}

/** `name@version` of the installed package the server's code comes from, or undefined (see above). */
export function serverPackage(transport: McpTransport, cwd: string = process.cwd()): string | undefined {
  if (isHttpTransport(transport)) return undefined;
  const base = transport.cwd ? resolve(cwd, transport.cwd) : cwd;
  const script = transport.bundle
    ? transport.bundle.entry
    : transport.command === process.execPath || NODE_LIKE.test(basename(transport.command))
      ? firstOperand(transport.args ?? [])
      : undefined;
  if (script === undefined) return undefined;
  const file = locate(script, base);
  return file === undefined ? undefined : installedPackageOf(file);
}

/** A path from `base`, else a package specifier resolved from `base` as an import would be. */
function locate(script: string, base: string): string | undefined {
  const path = isAbsolute(script) ? script : resolve(base, script);
  if (existsSync(path)) return path;
  try {
    return createRequire(join(base, 'package.json')).resolve(script);
  } catch {
    return undefined;
  }
}

/** The nearest package.json with a name and a version above `file`, if `file` is inside node_modules. */
function installedPackageOf(file: string): string | undefined {
  if (!file.split(sep).includes('node_modules')) return undefined;
  for (let dir = dirname(file); basename(dir) !== 'node_modules' && dirname(dir) !== dir; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (!existsSync(manifest)) continue;
    try {
      // A package may hold package.json files with only a "type" (dist/esm/): not its manifest.
      const { name, version } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown; version?: unknown };
      if (typeof name === 'string' && typeof version === 'string') return `${name}@${version}`;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
