import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { errorMessage } from '../core/errors.js';
import { firstOperand, NODE_LIKE } from '../tools/mcp/server-package.js';
import { MCP_BUNDLE_DIR, type McpManifest, type McpToolSource } from '../tools/mcp/shipped-servers.js';
import type { DiscoveredMcp } from './agents-module.js';
import { LOGBOOK_FROM_SOURCE } from './constructs/logbook-function.js';
import { McpServerBundleError, McpServerNotShippedError } from './errors.js';

/**
 * The stdio MCP servers an application's agents use, made ready to ship with the functions: each
 * one with `transport.bundle` is bundled by esbuild into one file, and a manifest holds every
 * shipped server's tool listing (taken when synth loaded the agents module). The worker gets both
 * (as `logbook-mcp/` in its bundle); the API and the trigger get the manifest only, so they pin
 * the tools' schemas without ever starting a server (lib/tools/mcp/shipped-servers.ts reads it).
 * A stdio server with no `bundle` is a synth error naming the agent, the server and what is missing.
 */

export interface ShippedMcp {
  /** manifest.json and servers/: copied into the worker's bundle as `logbook-mcp/`. */
  dir: string;
  /** dir/manifest.json: copied into the API's and the trigger's bundles. */
  manifest: string;
  /** The manifest's path inside a bundle (the functions' LOGBOOK_MCP_MANIFEST). */
  bundlePath: string;
}

interface EsbuildOutput {
  path: string;
  contents: Uint8Array;
}
/** The part of esbuild's API used here (esbuild is an optional peer dependency, loaded only when a server is bundled). */
interface Esbuild {
  buildSync(options: Record<string, unknown>): { outputFiles?: EsbuildOutput[] };
}

/** Launchers that fetch a package when they run. */
const FETCHERS = /^(npx|pnpx|bunx|uvx|pipx)(\.exe)?$/;

/**
 * Check every stdio server the agents use and stage what the functions ship; undefined when no
 * server is shipped (then nothing is added to any bundle). Deterministic: the staging directory is
 * named by the hash of what it holds, so two synths never write into each other's.
 */
export function shipMcpServers(mcp: DiscoveredMcp, options: { projectRoot: string; stagingRoot: string }): ShippedMcp | undefined {
  const servers: McpManifest['servers'] = {};
  const files = new Map<string, Uint8Array>();
  for (const [index, source] of mcp.sources.entries()) {
    if (source.transport.kind !== 'stdio' || source.key === undefined) continue;
    const uses = mcp.uses.filter((u) => u.source === index);
    const agents = [...new Set(uses.map((u) => u.agent))];
    const { bundle, command, args } = source.transport;
    if (bundle === undefined) {
      throw new McpServerNotShippedError(
        agents,
        source.label,
        uses.map((u) => u.tool),
        missingOf(command, args, options.projectRoot),
      );
    }
    if (bundle === false) {
      servers[source.key] = { server: source.server, version: source.version, listed: listedOf(source) };
      continue;
    }
    const script = `servers/${slug(bundle.entry)}.mjs`;
    files.set(script, bundleServer(bundle.entry, agents, options.projectRoot));
    servers[source.key] = {
      server: source.server,
      version: source.version,
      listed: listedOf(source),
      script,
      ...(bundle.args?.length ? { args: [...bundle.args] } : {}),
    };
  }
  if (Object.keys(servers).length === 0) return undefined;
  const manifest = `${JSON.stringify({ version: 1, servers } satisfies McpManifest, null, 1)}\n`;
  const hash = createHash('sha256').update(manifest);
  for (const [name, contents] of [...files].sort(([a], [b]) => a.localeCompare(b))) hash.update(name).update(contents);
  const dir = join(options.stagingRoot, `mcp-${hash.digest('hex').slice(0, 16)}`);
  if (!existsSync(dir)) {
    // Written whole beside its final name, then renamed: a reader never sees half a directory.
    const temp = `${dir}.${process.pid}.tmp`;
    rmSync(temp, { recursive: true, force: true });
    mkdirSync(join(temp, 'servers'), { recursive: true });
    writeFileSync(join(temp, 'manifest.json'), manifest);
    for (const [name, contents] of files) writeFileSync(join(temp, name), contents);
    try {
      renameSync(temp, dir);
    } catch (error) {
      // Another synth staged the same content first: same hash, same files.
      rmSync(temp, { recursive: true, force: true });
      if (!existsSync(dir)) throw error;
    }
  }
  return { dir, manifest: join(dir, 'manifest.json'), bundlePath: `${MCP_BUNDLE_DIR}/manifest.json` };
}

/** What the worker would lack for a server started as `command ...args`, said so a person can find it. */
export function missingOf(command: string, args: readonly string[], projectRoot: string): string {
  const show = (path: string) => (isAbsolute(path) && !relative(projectRoot, path).startsWith('..') ? relative(projectRoot, path).split(sep).join('/') : path);
  const base = basename(command);
  if (command === process.execPath || NODE_LIKE.test(base)) {
    const script = firstOperand(args);
    return script === undefined ? `its command ${show(command)}` : `its script ${show(script)}`;
  }
  if (FETCHERS.test(base)) {
    const pkg = firstOperand(args);
    return `the package ${pkg ?? '(none named)'} (${base} fetches it when it runs; a Lambda function has no package manager)`;
  }
  return `its command ${show(command)}`;
}

function listedOf(source: McpToolSource): Record<string, unknown>[] {
  return source.listed as Record<string, unknown>[];
}

/** `src/mcp/warehouse-server.ts` → `src-mcp-warehouse-server-ts-<hash>`: readable and distinct. */
function slug(entry: string): string {
  const readable = entry
    .replace(/[^A-Za-z0-9]+/g, '-')
    .slice(-40)
    .replace(/^-+|-+$/g, '');
  return `${readable}-${createHash('sha256').update(entry).digest('hex').slice(0, 8)}`;
}

/** esbuild from the project (as NodejsFunction finds it), else the one beside Logbook. */
function loadEsbuild(projectRoot: string): Esbuild | undefined {
  for (const from of [join(projectRoot, 'package.json'), import.meta.url]) {
    try {
      return createRequire(from)('esbuild') as Esbuild;
    } catch {
      // next place
    }
  }
  return undefined;
}

/** The server as one ESM file for Lambda's Node.js: every dependency inside, nothing resolved at run time. */
function bundleServer(entry: string, agents: readonly string[], projectRoot: string): Uint8Array {
  const esbuild = loadEsbuild(projectRoot);
  if (!esbuild) throw new McpServerBundleError(agents, entry, 'esbuild is not installed (npm install --save-dev esbuild)');
  const file = resolve(projectRoot, entry);
  // A file from the project root, else a package (resolved from the project root as an import).
  const input = existsSync(file)
    ? { entryPoints: [file] }
    : { stdin: { contents: `import ${JSON.stringify(entry)};`, resolveDir: projectRoot, sourcefile: 'mcp-server-entry.js', loader: 'js' } };
  let outputs: EsbuildOutput[] | undefined;
  try {
    outputs = esbuild.buildSync({
      ...input,
      absWorkingDir: projectRoot,
      outfile: join(dirname(file), 'mcp-server.mjs'),
      write: false,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      minify: true,
      mainFields: ['module', 'main'],
      ...(LOGBOOK_FROM_SOURCE ? { conditions: ['logbook-source'] } : {}),
      // Bundled CommonJS dependencies call require(); ESM output has none unless it is defined.
      banner: { js: "import { createRequire as __mcpCreateRequire } from 'node:module'; const require = __mcpCreateRequire(import.meta.url);" },
      logLevel: 'silent',
    }).outputFiles;
  } catch (error) {
    const first = (error as { errors?: { text?: string }[] }).errors?.[0]?.text;
    throw new McpServerBundleError(agents, entry, first ?? errorMessage(error));
  }
  const output = outputs?.find((o) => o.path.endsWith('.mjs'));
  if (!output) throw new McpServerBundleError(agents, entry, 'esbuild wrote no output');
  return output.contents;
}
