import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { defaultDependency, logbookOrigin, type LogbookDependency, type LogbookOrigin, type Packer } from './init-dependency.js';
import { UsageError, type Output } from './output.js';

export const INIT_USAGE = `logbook init DIR [--workflow] [--name NAME] [--logbook SPEC]
  A new project in DIR (absent or empty) that depends on logbook: src/agents.ts with an example
  agent, its Lambda handler entries in functions/, a CDK app in infra/, a crash-harness test and a
  README. --workflow adds src/workflow.ts, a workflow that calls the agent (a step, a child run, a
  sleep), registered in src/agents.ts, and its own crash-harness test. --name sets the package
  name (default: DIR's name). --logbook sets the dependency spec;
  by default the logbook running init is packed into DIR/vendor/ (from a checkout, npm pack builds
  it first) and the project depends on that tarball, until the package is on the npm registry.`;

/**
 * Files the package cannot ship under their real names: npm drops or rewrites a .gitignore, and a
 * package.json inside the package's tree would make TypeScript resolve `logbook` from there.
 */
const RENAMES: Readonly<Record<string, string>> = { _gitignore: '.gitignore', '_package.json': 'package.json' };

/** npm's rules for a package name (lowercase, URL-safe, at most 214 characters). */
const PACKAGE_NAME = /^(?:@[a-z0-9~-][a-z0-9._~-]*\/)?[a-z0-9~-][a-z0-9._~-]*$/;

interface PackageJson {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  overrides?: Record<string, unknown>;
  [field: string]: unknown;
}

export interface InitOptions {
  dir: string;
  name?: string;
  /** The `logbook` dependency spec; default: the running logbook, packed into vendor/ (init-dependency.ts). */
  logbook?: string;
  /** Also a workflow calling the agent, its registration and its crash-harness test (templates/workflow). */
  workflow?: boolean;
}

export interface InitResult {
  dir: string;
  name: string;
  /** Written files, relative to dir, with `/` separators, sorted (a packed logbook included). */
  files: string[];
  /** The `logbook` dependency written, and how it was chosen. */
  logbook: LogbookDependency;
}

/** Where the running logbook comes from, and how to pack it (tests replace the packer). */
export interface InitSource {
  origin?: LogbookOrigin;
  pack?: Packer;
  /** Told before a checkout is packed, which takes a while. */
  progress?: (message: string) => void;
}

/** Logbook's own package root: the nearest package.json named `logbook` above this file. */
function packageRoot(from: string = fileURLToPath(import.meta.url)): string {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'logbook') return dir;
    if (dirname(dir) === dir) throw new Error(`logbook init: cannot find logbook's package.json above ${from}`);
  }
}

/** The project template shipped in the package (templates/ is in package.json "files"). */
export function templateDir(): string {
  return join(packageRoot(), 'templates', 'project');
}

/** What `--workflow` writes over the project template: a file here replaces the template's of the same path. */
export function workflowTemplateDir(): string {
  return join(packageRoot(), 'templates', 'workflow');
}

function listFiles(root: string, dir = root): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? listFiles(root, join(dir, entry.name)) : [relative(root, join(dir, entry.name))]))
    .sort();
}

/** The package name for `dir` when none is given: its base name, lowercased and made URL-safe. */
export function defaultName(dir: string): string {
  const name = basename(resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9._~-]+/g, '-')
    .replace(/^[-._]+|[-.]+$/g, '')
    .slice(0, 214);
  return PACKAGE_NAME.test(name) ? name : 'my-agents';
}

/**
 * Every `{{pin}}` in the template's package.json becomes what Logbook itself pins: the exact
 * version of a dependency, or Logbook's own override (an override may be an object, e.g. a
 * version for one package's dependency only).
 */
function projectManifest(template: string, name: string, logbook: string, own: PackageJson): string {
  const versions: Record<string, unknown> = { ...own.dependencies, ...own.devDependencies };
  const manifest = JSON.parse(template.replaceAll('{{name}}', name)) as PackageJson;
  for (const field of ['dependencies', 'devDependencies', 'overrides'] as const) {
    const deps = manifest[field] as Record<string, unknown> | undefined;
    for (const [dep, spec] of Object.entries(deps ?? {})) {
      if (dep === 'logbook') deps![dep] = logbook;
      else if (spec === '{{pin}}') {
        const pinned = field === 'overrides' ? own.overrides?.[dep] : versions[dep];
        const ok = typeof pinned === 'string' || (field === 'overrides' && typeof pinned === 'object' && pinned !== null);
        if (!ok) throw new Error(`logbook init: the template wants ${dep}, which logbook ${own.version} does not pin`);
        deps![dep] = pinned;
      }
    }
  }
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

/** Refuses anything but an absent or empty directory: init never overwrites a file. */
function checkTarget(dir: string, shown: string): void {
  if (!existsSync(dir)) return;
  if (!statSync(dir).isDirectory()) throw new UsageError(`${shown} exists and is not a directory`);
  const entries = readdirSync(dir);
  if (entries.length > 0) {
    const some = entries.slice(0, 3).join(', ') + (entries.length > 3 ? ', ...' : '');
    throw new UsageError(`${shown} is not empty (${some}): init writes only into a new or empty directory`);
  }
}

/**
 * Write a new project into `options.dir` from the template shipped in the package. Everything
 * that can be refused is checked before anything is written or packed.
 */
export function initProject(
  options: InitOptions,
  source: InitSource = {},
  template: string = templateDir(),
  own: PackageJson = ownPackage(),
  workflowTemplate: string = workflowTemplateDir(),
): InitResult {
  const dir = resolve(options.dir);
  checkTarget(dir, options.dir);
  const name = options.name ?? defaultName(dir);
  if (name.length > 214 || !PACKAGE_NAME.test(name)) throw new UsageError(`--name "${name}" is not a valid npm package name (lowercase letters, digits, - . _ ~, optionally @scope/)`);
  let dependency: LogbookDependency;
  if (options.logbook !== undefined) dependency = { spec: options.logbook, how: `${options.logbook}, as given (--logbook)` };
  else {
    const origin = source.origin ?? logbookOrigin(packageRoot());
    if (origin.kind === 'checkout') source.progress?.(`Packing logbook from the checkout at ${origin.root} (npm pack builds dist/ first: a minute or two)...`);
    dependency = defaultDependency(origin, own.version, dir, source.pack);
  }
  const logbook = dependency.spec;

  const files: string[] = dependency.vendored ? [dependency.vendored] : [];
  // Each file's path in the project, and where its text comes from (the workflow's over the template's).
  const sources = new Map<string, string>(listFiles(template).map((f) => [f, join(template, f)]));
  if (options.workflow) for (const f of listFiles(workflowTemplate)) sources.set(f, join(workflowTemplate, f));
  for (const [source, from] of [...sources].sort(([a], [b]) => a.localeCompare(b))) {
    const target = source
      .split(sep)
      .map((part) => RENAMES[part] ?? part)
      .join(sep);
    const text = readFileSync(from, 'utf8');
    const content = target === 'package.json' ? projectManifest(text, name, logbook, own) : text.replaceAll('{{name}}', name);
    mkdirSync(dirname(join(dir, target)), { recursive: true });
    // 'wx': fail rather than overwrite, should anything appear in the directory meanwhile.
    writeFileSync(join(dir, target), content, { flag: 'wx' });
    files.push(target.split(sep).join('/'));
  }
  return { dir, name, files: files.sort(), logbook: dependency };
}

function ownPackage(): PackageJson {
  return JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as PackageJson;
}

/** `logbook init DIR [--workflow] [--name NAME] [--logbook SPEC]`. */
export async function initCommand(argv: string[], io: Output): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { name: { type: 'string' }, logbook: { type: 'string' }, workflow: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    io.out(INIT_USAGE);
    return 0;
  }
  const [dir, ...extra] = positionals;
  if (!dir) throw new UsageError('init needs a directory: logbook init DIR');
  if (extra.length > 0) throw new UsageError(`init takes one directory, got ${positionals.length}`);
  const result = initProject(
    {
      dir,
      workflow: values.workflow,
      ...(values.name !== undefined ? { name: values.name } : {}),
      ...(values.logbook !== undefined ? { logbook: values.logbook } : {}),
    },
    { progress: (message) => io.err(message) },
  );

  io.out(`Created ${result.name} in ${result.dir}:`);
  for (const file of result.files) io.out(`  ${file}`);
  io.out(`logbook dependency: ${result.logbook.how}; \`logbook init DIR --logbook SPEC\` chooses another.`);
  const cd = relative(process.cwd(), result.dir) || '.';
  const workflowStart = values.workflow ? `\n${' '.repeat(32)}#   npx logbook runs start incident-review --input '{"service":"checkout"}'` : '';
  io.out(`
Next:
  cd ${cd.includes(' ') ? JSON.stringify(cd) : cd}
  npm install && npm run dev    # your agent on a local AWS stack; then, in another terminal:
                                #   npx logbook runs start ops --input 'checkout is returning 500s'${workflowStart}
  npm install && npm test       # typecheck, then the crash harness on your agent${values.workflow ? ' and your workflow' : ''}
  npx cdk deploy                # to your AWS account (run \`npx cdk bootstrap\` there once first)`);
  return 0;
}
