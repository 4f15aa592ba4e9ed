import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultName, initProject, templateDir } from '../../../dev/cli/init-command.js';
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
    for (const [dep, version] of Object.entries(listed)) expect(version, dep).toBe(pins[dep]);
    // What a user's project needs to typecheck, test, synth and run `logbook dev`.
    for (const dep of ['typescript', 'vitest', 'tsx', 'aws-cdk', 'aws-cdk-lib', 'constructs', 'cdk-nag', 'esbuild', '@types/node']) {
      expect(manifest.devDependencies, dep).toHaveProperty(dep);
    }
    for (const dep of ['zod', '@aws-sdk/client-dynamodb', '@aws-sdk/lib-dynamodb', '@aws-sdk/client-s3', '@aws-sdk/client-sqs', '@aws-sdk/client-eventbridge', '@aws-sdk/client-bedrock-runtime']) {
      expect(manifest.dependencies, dep).toHaveProperty(dep);
    }
    // Same workaround as this repository: the newest vite lists an optional dependency the registry lacks.
    expect(manifest.overrides.vite).toBe(repo.overrides.vite);
  });

  it('defaults logbook to the version running, and --name to the directory name made npm-safe', () => {
    const dir = join(root, 'My Ops_Agents');
    const result = initProject({ dir });
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
    expect(result.name).toBe('my-ops_agents');
    expect(manifest.dependencies.logbook).toBe(repo.version);
    expect(readFileSync(join(dir, 'README.md'), 'utf8').split('\n')[0]).toBe('# my-ops_agents');
    expect(defaultName('/x/.hidden')).toBe('hidden');
    expect(defaultName('/x/###')).toBe('my-agents');
  });

  it("README starts with the two commands, then deploy; handler files are one line", () => {
    const dir = join(root, 'readme');
    initProject({ dir, name: '@acme/ops' });
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

  it('prints its usage for --help, naming where the handlers and the CDK app go and --logbook SPEC', async () => {
    const io = capture();
    expect(await main(['init', '--help'], io)).toBe(0);
    const text = io.stdout.join('\n');
    expect(text).toContain('--logbook SPEC');
    expect(text).toContain('functions/');
    expect(text).toContain('infra/');
    expect(io.stderr).toEqual([]);
  });

  it('accepts an existing empty directory', () => {
    const dir = join(root, 'empty');
    mkdirSync(dir);
    expect(initProject({ dir }).files).toEqual(EXPECTED_FILES);
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
});
