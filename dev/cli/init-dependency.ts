import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';

/**
 * What a project `logbook init` writes depends on, when no `--logbook SPEC` is given. Until the
 * package is on the npm registry a version number cannot be installed, so the default is the
 * Logbook that runs `init`, packed into the new project (`vendor/logbook-<version>.tgz`, a
 * `file:` dependency that `npm install` installs like a published package):
 * - from a checkout of the repository (the TypeScript sources are there): `npm pack` in it, which
 *   builds dist/ first (prepack);
 * - from an installed package (node_modules/logbook, a global install, npx's cache): `npm pack
 *   --ignore-scripts` of that directory, which already holds dist/;
 * - from a package installed from a registry (its lockfile entry says so): that version.
 */

/** Where the running Logbook lives, which decides what a new project depends on. */
export type LogbookOrigin =
  | { kind: 'checkout'; root: string }
  | { kind: 'installed'; root: string }
  | { kind: 'registry'; root: string; resolved: string };

export interface LogbookDependency {
  /** The `logbook` spec written into package.json. */
  spec: string;
  /** What was chosen and why, for the command's output. */
  how: string;
  /** The tarball written into the project, relative to it with `/` separators. */
  vendored?: string;
}

/** Packs `root` into `destination`; returns the tarball's file name. */
export type Packer = (origin: Exclude<LogbookOrigin, { kind: 'registry' }>, destination: string) => string;

/** Where packed Logbook goes inside the new project. */
export const VENDOR_DIR = 'vendor';

/**
 * A checkout has the CLI's TypeScript source (never shipped: package.json "files"); an installed
 * package's lockfile entry (the project's, or npm's hidden one in node_modules) says where it came from.
 */
export function logbookOrigin(root: string): LogbookOrigin {
  if (existsSync(join(root, 'dev', 'cli', 'main.ts'))) return { kind: 'checkout', root };
  const resolved = lockedResolved(root);
  if (resolved !== undefined && /^https?:\/\//.test(resolved)) return { kind: 'registry', root, resolved };
  return { kind: 'installed', root };
}

/** `resolved` of the lockfile entry for the package at `root` (`<prefix>/node_modules/logbook`), if any. */
function lockedResolved(root: string): string | undefined {
  const modules = dirname(root);
  if (basename(modules) !== 'node_modules') return undefined;
  const prefix = dirname(modules);
  const key = relative(prefix, root).split('\\').join('/');
  for (const lock of [join(modules, '.package-lock.json'), join(prefix, 'package-lock.json'), join(prefix, 'npm-shrinkwrap.json')]) {
    if (!existsSync(lock)) continue;
    try {
      const parsed = JSON.parse(readFileSync(lock, 'utf8')) as { packages?: Record<string, { resolved?: unknown }> };
      const resolved = parsed.packages?.[key]?.resolved;
      if (typeof resolved === 'string') return resolved;
    } catch {
      // An unreadable lockfile says nothing: the next one, or packing, which always installs.
    }
  }
  return undefined;
}

/** The default dependency: the running Logbook packed into `projectDir/vendor/`, or its registry version. */
export function defaultDependency(origin: LogbookOrigin, version: string, projectDir: string, pack: Packer = npmPack): LogbookDependency {
  if (origin.kind === 'registry') {
    return { spec: version, how: `logbook ${version} from the registry, as the logbook running init was installed (${origin.resolved})` };
  }
  const destination = join(projectDir, VENDOR_DIR);
  mkdirSync(destination, { recursive: true });
  const file = pack(origin, destination);
  const vendored = `${VENDOR_DIR}/${file}`;
  const from = origin.kind === 'checkout' ? `packed from the checkout at ${origin.root} (npm pack)` : `packed from the installed package at ${origin.root}`;
  return { spec: `file:${vendored}`, vendored, how: `file:${vendored}, ${from}: logbook is not on the npm registry yet` };
}

/** What `npm pack` prints with --json: one entry per packed package. */
interface PackJson {
  filename: string;
}

/**
 * `npm pack --json`. A checkout is packed with its scripts (prepack builds dist/); an installed
 * package without them (its dist/ is there, and it has no tsconfig to build with). npm's progress
 * and any build error go to this process's stderr.
 */
export function npmPack(origin: Exclude<LogbookOrigin, { kind: 'registry' }>, destination: string): string {
  const args =
    origin.kind === 'checkout'
      ? ['pack', '--json', '--pack-destination', destination]
      : ['pack', '--json', '--ignore-scripts', '--pack-destination', destination, origin.root];
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, args, {
    cwd: origin.kind === 'checkout' ? origin.root : destination,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 1024 * 1024,
    shell: process.platform === 'win32',
  });
  if (result.error || result.status !== 0) {
    const why = result.error ? result.error.message : `exited ${result.status}`;
    throw new Error(`logbook init: npm ${args.join(' ')} in ${origin.root} failed (${why}); pass --logbook SPEC to depend on another logbook`);
  }
  // Lifecycle output may precede the JSON array.
  const json = result.stdout.slice(Math.max(0, result.stdout.search(/^\[/m)));
  const [packed] = JSON.parse(json) as PackJson[];
  if (!packed?.filename) throw new Error(`logbook init: npm pack printed no tarball name:\n${result.stdout.slice(-2000)}`);
  // npm names a scoped package's tarball scope-name-version.tgz, at the destination.
  return basename(packed.filename);
}
