import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultName, initProject, templateDir } from '../../../dev/cli/init-command.js';
import { defaultDependency, logbookOrigin, type Packer } from '../../../dev/cli/init-dependency.js';
import { main } from '../../../dev/cli/main.js';
import type { Output } from '../../../dev/cli/output.js';

function capture(): Output & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => stdout.push(t), err: (t) => stderr.push(t), tty: false };
}

const root = mkdtempSync(join(tmpdir(), 'logbook-init-unit-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Manifest {
  name: string;
  type: string;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  overrides: Record<string, string>;
}
const repo = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as Manifest & { version: string };
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url)).replace(/\/$/, '');

/**
 * Stands in for `npm pack` (test/e2e/packaged-app.test.ts packs for real, from the checkout and
 * from the installed package): writes a file where npm would and records what it was asked.
 */
function fakePacker(calls: { kind: string; root: string; destination: string }[] = []): Packer {
  return (origin, destination) => {
    calls.push({ kind: origin.kind, root: origin.root, destination });
    writeFileSync(join(destination, `logbook-${repo.version}.tgz`), 'packed');
    return `logbook-${repo.version}.tgz`;
  };
}
const packed = { pack: fakePacker() };

const EXPECTED_FILES = [
  '.gitignore',
  'README.md',
  'cdk.json',
  'functions/api.ts',
  'functions/sweeper.ts',
  'functions/trigger.ts',
  'functions/worker.ts',
  'infra/app.ts',
  'package.json',
  'src/agents.ts',
  'src/ops-agent.ts',
  'src/service-state.ts',
  'src/services.ts',
  'test/agent.test.ts',
  'tsconfig.json',
];

function walk(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]))
    .sort();
}

describe('logbook init', () => {
  it('writes the project from the shipped template and says what to run next', async () => {
    const dir = join(root, 'ops-agents');
    const io = capture();
    const code = await main(['init', dir, '--logbook', 'file:../logbook-0.1.0.tgz'], io);
    expect(code, io.stderr.join('\n')).toBe(0);
    expect(walk(dir)).toEqual(EXPECTED_FILES);
    const out = io.stdout.join('\n');
    for (const file of EXPECTED_FILES) expect(out).toContain(`  ${file}`);
    expect(out).toContain('npm install && npm run dev');
    expect(out).toContain('npm install && npm test');
    expect(out).toContain('npx cdk deploy');

    // Every placeholder is filled; the template's shipping names are gone.
    for (const file of EXPECTED_FILES) expect(readFileSync(join(dir, file), 'utf8'), file).not.toContain('{{');
    expect(existsSync(join(dir, '_gitignore'))).toBe(false);
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toContain('node_modules/');
  });

  it('pins every dependency at the exact version this repository pins, and logbook at the given spec', () => {
    const dir = join(root, 'pins');
    initProject({ dir, logbook: '^9.9.9' });
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
    expect(manifest.name).toBe('pins');
    expect(manifest.type).toBe('module');
    expect(manifest.scripts.dev).toBe('logbook dev --agents src/agents.ts');
    expect(manifest.scripts.test).toBe('npm run typecheck && vitest run');
    expect(manifest.scripts.typecheck).toBe('tsc --noEmit');
    expect(manifest.dependencies.logbook).toBe('^9.9.9');
    const pins: Record<string, string> = { ...repo.dependencies, ...repo.devDependencies, ...repo.overrides };
    const listed = { ...manifest.dependencies, ...manifest.devDependencies, ...manifest.overrides };
    delete listed.logbook;
    for (const [dep, version] of Object.entries(listed)) expect(version, dep).toEqual(pins[dep]);
    // What a user's project needs to typecheck, test, synth and run `logbook dev`.
    for (const dep of ['typescript', 'vitest', 'tsx', 'aws-cdk', 'aws-cdk-lib', 'constructs', 'cdk-nag', 'esbuild', '@types/node']) {
      expect(manifest.devDependencies, dep).toHaveProperty(dep);
    }
    for (const dep of ['zod', '@aws-sdk/client-dynamodb', '@aws-sdk/lib-dynamodb', '@aws-sdk/client-s3', '@aws-sdk/client-sqs', '@aws-sdk/client-eventbridge', '@aws-sdk/client-bedrock-runtime']) {
      expect(manifest.dependencies, dep).toHaveProperty(dep);
    }
    // Same workarounds as this repository: the newest vite lists an optional dependency the registry
    // lacks; fastify's light-my-request would get cookie 2, which needs Node 22.
    expect(manifest.overrides.vite).toBe(repo.overrides.vite);
    expect(manifest.overrides['light-my-request']).toEqual({ cookie: '1.1.1' });
  });

  it('defaults logbook to the running one, packed into vendor/ (a file: dependency), and --name to the directory name made npm-safe', () => {
    const dir = join(root, 'My Ops_Agents');
    const calls: { kind: string; root: string; destination: string }[] = [];
    const progress: string[] = [];
    const result = initProject({ dir }, { origin: logbookOrigin(REPO_ROOT), pack: fakePacker(calls), progress: (m) => progress.push(m) });
    expect(progress).toEqual([`Packing logbook from the checkout at ${REPO_ROOT} (npm pack builds dist/ first: a minute or two)...`]);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
    expect(result.name).toBe('my-ops_agents');
    expect(calls).toEqual([{ kind: 'checkout', root: REPO_ROOT, destination: join(dir, 'vendor') }]);
    expect(manifest.dependencies.logbook).toBe(`file:vendor/logbook-${repo.version}.tgz`);
    expect(result.files).toEqual([...EXPECTED_FILES, `vendor/logbook-${repo.version}.tgz`].sort());
    expect(result.logbook.how).toContain(`packed from the checkout at ${REPO_ROOT}`);
    expect(readFileSync(join(dir, 'README.md'), 'utf8').split('\n')[0]).toBe('# my-ops_agents');
    expect(defaultName('/x/.hidden')).toBe('hidden');
    expect(defaultName('/x/###')).toBe('my-agents');
  });

  it('knows a checkout, an installed package and a registry install apart', () => {
    expect(logbookOrigin(REPO_ROOT)).toEqual({ kind: 'checkout', root: REPO_ROOT });
    // An installed package: dist/ and no sources; its lockfile entry says where it came from.
    const prefix = join(root, 'installed-app');
    const installed = join(prefix, 'node_modules', 'logbook');
    mkdirSync(join(installed, 'dist'), { recursive: true });
    writeFileSync(join(installed, 'package.json'), JSON.stringify({ name: 'logbook', version: repo.version }));
    expect(logbookOrigin(installed)).toEqual({ kind: 'installed', root: installed });
    const lock = (resolved: string) => JSON.stringify({ lockfileVersion: 3, packages: { '': {}, 'node_modules/logbook': { version: repo.version, resolved } } });
    writeFileSync(join(prefix, 'package-lock.json'), lock('file:../logbook-0.1.0.tgz'));
    expect(logbookOrigin(installed).kind).toBe('installed');
    // npm's hidden lockfile is read first: it is what is installed now.
    const registryUrl = `https://registry.npmjs.org/logbook/-/logbook-${repo.version}.tgz`;
    writeFileSync(join(prefix, 'node_modules', '.package-lock.json'), lock(registryUrl));
    expect(logbookOrigin(installed)).toEqual({ kind: 'registry', root: installed, resolved: registryUrl });

    // From the registry: that version, nothing packed. Installed otherwise: packed as it is.
    const calls: { kind: string; root: string; destination: string }[] = [];
    const fromRegistry = defaultDependency(logbookOrigin(installed), repo.version, join(root, 'r1'), fakePacker(calls));
    expect(fromRegistry.spec).toBe(repo.version);
    expect(fromRegistry.vendored).toBeUndefined();
    expect(existsSync(join(root, 'r1'))).toBe(false);
    const fromTarball = defaultDependency({ kind: 'installed', root: installed }, repo.version, join(root, 'r2'), fakePacker(calls));
    expect(fromTarball).toMatchObject({ spec: `file:vendor/logbook-${repo.version}.tgz`, vendored: `vendor/logbook-${repo.version}.tgz` });
    expect(fromTarball.how).toContain(`packed from the installed package at ${installed}`);
    expect(calls).toEqual([{ kind: 'installed', root: installed, destination: join(root, 'r2', 'vendor') }]);
  });

  it('checks the directory and the name before it packs anything', () => {
    const busy = join(root, 'busy-before-pack');
    mkdirSync(busy);
    writeFileSync(join(busy, 'x'), '');
    const calls: { kind: string; root: string; destination: string }[] = [];
    const progress: string[] = [];
    expect(() => initProject({ dir: busy }, { origin: logbookOrigin(REPO_ROOT), pack: fakePacker(calls), progress: (m) => progress.push(m) })).toThrow(/is not empty/);
    expect(() => initProject({ dir: join(root, 'bad-before-pack'), name: 'Bad' }, { origin: logbookOrigin(REPO_ROOT), pack: fakePacker(calls) })).toThrow(/not a valid npm package name/);
    expect(calls).toEqual([]);
    expect(progress).toEqual([]);
    expect(existsSync(join(root, 'bad-before-pack'))).toBe(false);
  });

  it("says which logbook it depends on, and how to choose another, in its output", async () => {
    const io = capture();
    expect(await main(['init', join(root, 'given'), '--logbook', '^0.1.0'], io)).toBe(0);
    expect(io.stdout.join('\n')).toContain('logbook dependency: ^0.1.0, as given (--logbook); `logbook init DIR --logbook SPEC` chooses another.');
  });

  it("README starts with the two commands, then deploy; handler files are one line", () => {
    const dir = join(root, 'readme');
    initProject({ dir, name: '@acme/ops' }, packed);
    const lines = readFileSync(join(dir, 'README.md'), 'utf8').split('\n');
    expect(lines[0]).toBe('# @acme/ops');
    const commands = lines.slice(lines.indexOf('```sh') + 1, lines.indexOf('```sh') + 4).map((l) => l.split('#')[0]!.trim());
    expect(commands).toEqual(['npm install && npm run dev', 'npm install && npm test', 'npx cdk deploy']);
    for (const kind of ['worker', 'api', 'trigger', 'sweeper']) {
      const code = readFileSync(join(dir, 'functions', `${kind}.ts`), 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('export '));
      expect(code, kind).toHaveLength(1);
      expect(code[0]).toMatch(/^export const handler = create\w+Handler\(/);
    }
  });

  it('prints its usage for --help, naming where the handlers and the CDK app go and --logbook SPEC with its default', async () => {
    const io = capture();
    expect(await main(['init', '--help'], io)).toBe(0);
    const text = io.stdout.join('\n');
    expect(text).toContain('--logbook SPEC');
    expect(text).toContain('packed into DIR/vendor/');
    // `logbook help` names the flag on its init line too.
    const help = capture();
    expect(await main(['help'], help)).toBe(0);
    expect(help.stdout.join('\n')).toMatch(/^ {2}logbook init DIR \[--name NAME\] \[--logbook SPEC\] .*packed into DIR\/vendor\//m);
    expect(text).toContain('functions/');
    expect(text).toContain('infra/');
    expect(io.stderr).toEqual([]);
  });

  it('accepts an existing empty directory', () => {
    const dir = join(root, 'empty');
    mkdirSync(dir);
    expect(initProject({ dir, logbook: '0.1.0' }).files).toEqual(EXPECTED_FILES);
  });

  it('refuses a non-empty directory and writes nothing', async () => {
    const dir = join(root, 'busy');
    mkdirSync(dir);
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    const io = capture();
    expect(await main(['init', dir], io)).toBe(2);
    expect(io.stderr.join('\n')).toContain(`${dir} is not empty (notes.txt): init writes only into a new or empty directory`);
    expect(readdirSync(dir)).toEqual(['notes.txt']);
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('mine');
  });

  it('refuses a file as the target, a bad --name, a missing or second DIR, with exit code 2', async () => {
    const file = join(root, 'a-file');
    writeFileSync(file, 'x');
    const cases: [string[], string][] = [
      [['init', file], 'exists and is not a directory'],
      [['init', join(root, 'bad-name'), '--name', 'Bad Name'], '--name "Bad Name" is not a valid npm package name'],
      [['init'], 'init needs a directory'],
      [['init', join(root, 'one'), join(root, 'two')], 'init takes one directory'],
      [['init', join(root, 'three'), '--force'], "Unknown option '--force'"],
    ];
    for (const [argv, message] of cases) {
      const io = capture();
      expect(await main(argv, io), argv.join(' ')).toBe(2);
      expect(io.stderr.join('\n')).toContain(message);
    }
    for (const never of ['bad-name', 'one', 'two', 'three']) expect(existsSync(join(root, never)), never).toBe(false);
  });

  it('ships the template with the package (package.json "files")', () => {
    expect(repo).toHaveProperty('files');
    expect((repo as unknown as { files: string[] }).files).toContain('templates');
    expect(templateDir()).toBe(join(new URL('../../../', import.meta.url).pathname, 'templates', 'project'));
  });

  it("links its README only to what the project has once installed (no registry page: logbook is not published)", () => {
    const dir = join(root, 'links');
    initProject({ dir }, packed);
    const links = [...readFileSync(join(dir, 'README.md'), 'utf8').matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
    expect(links.length).toBeGreaterThan(0);
    const files = (repo as unknown as { files: string[] }).files;
    for (const link of links) {
      expect(link, link).toMatch(/^node_modules\/logbook\//);
      const shipped = link.replace(/^node_modules\/logbook\//, '').replace(/#.*$/, '');
      // In the package: a file of the repository under one of package.json "files" (the e2e test installs it).
      expect(existsSync(join(REPO_ROOT, shipped)), shipped).toBe(true);
      expect(files.some((f) => shipped === f || shipped.startsWith(`${f.split('/')[0]}/`)), shipped).toBe(true);
    }
  });
});
