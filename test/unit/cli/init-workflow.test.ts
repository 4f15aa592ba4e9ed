/**
 * `logbook init DIR --workflow`: the project template with the workflow overlay (templates/workflow)
 * written over it. The project is written inside this repository (.scratch/), so that its `logbook`
 * resolves to this checkout's sources as a user's resolves to the package: its files typecheck with
 * the repository's compiler options, and its workflow holds under the crash harness (the project's
 * own test/workflow.test.ts runs the same from the packed package in test/e2e/packaged-app.test.ts).
 */
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import type { Agents } from '../../../lib/authoring/define-agents.js';
import { ManualClock, formatHarnessReport, memoryStorage, runCrashHarness } from '../../../lib/testing/index.js';
import { main } from '../../../dev/cli/main.js';
import type { Output } from '../../../dev/cli/output.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const WORK = join(ROOT, '.scratch', `init-workflow-${process.pid}`);
afterAll(() => rmSync(WORK, { recursive: true, force: true }));

function capture(): Output & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => stdout.push(t), err: (t) => stderr.push(t), tty: false };
}

function walk(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]))
    .sort();
}

const WORKFLOW_FILES = ['src/workflow.ts', 'test/workflow.test.ts'];
const dir = join(WORK, 'with-workflow');

describe('logbook init --workflow', () => {
  it('writes the project with the workflow, registered in src/agents.ts, and its crash-harness test; without the flag, none of it', async () => {
    const io = capture();
    expect(await main(['init', dir, '--workflow', '--logbook', 'file:../logbook.tgz'], io), io.stderr.join('\n')).toBe(0);
    const plain = join(WORK, 'plain');
    expect(await main(['init', plain, '--logbook', 'file:../logbook.tgz'], capture())).toBe(0);
    const files = walk(dir);
    expect(files).toEqual([...walk(plain), ...WORKFLOW_FILES].sort());
    for (const file of WORKFLOW_FILES) expect(io.stdout.join('\n')).toContain(`  ${file}`);
    expect(io.stdout.join('\n')).toContain(`npx logbook runs start incident-review --input '{"service":"checkout"}'`);
    // The workflow project's agents module registers the workflow; the plain one's does not.
    expect(readFileSync(join(dir, 'src/agents.ts'), 'utf8')).toContain('workflows: [incidentReview(services, ops)]');
    expect(readFileSync(join(plain, 'src/agents.ts'), 'utf8')).not.toContain('workflow');
    const workflow = readFileSync(join(dir, 'src/workflow.ts'), 'utf8');
    for (const op of ['ctx.step(', 'ctx.agent(', 'ctx.sleep(']) expect(workflow).toContain(op);
    expect(readFileSync(join(dir, 'test/workflow.test.ts'), 'utf8')).toContain("from 'logbook/testing'");
    for (const file of files.filter((f) => f.endsWith('.ts'))) expect(readFileSync(join(dir, file), 'utf8'), file).not.toContain('{{');
    expect(existsSync(join(plain, 'src/workflow.ts'))).toBe(false);
    // Without its own package.json the project's `logbook` (and vitest, zod) resolve from this repository.
    rmSync(join(dir, 'package.json'));
  });

  it('typechecks: every source and test file of the project', { timeout: 120_000 }, () => {
    const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), (p) => ts.sys.readFile(p));
    const options = { ...ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT).options, noEmit: true };
    const files = walk(dir)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => join(dir, f));
    const program = ts.createProgram(files, options);
    const errors = files.flatMap((file) =>
      [...program.getSyntacticDiagnostics(program.getSourceFile(file)), ...program.getSemanticDiagnostics(program.getSourceFile(file))].map(
        (d) => `${file.slice(dir.length + 1)}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
      ),
    );
    expect(errors).toEqual([]);
  });

  it("its workflow holds under the crash harness: the ops agent's restart once, the same output", { timeout: 180_000 }, async () => {
    const mod = (await import(pathToFileURL(join(dir, 'src/agents.ts')).href)) as {
      createAgents(services: unknown, env: Record<string, string>): Agents;
    };
    const { OpsServices } = (await import(pathToFileURL(join(dir, 'src/services.ts')).href)) as {
      OpsServices: new () => { effects(): { op: string; key: string; applied: boolean; readOnly: boolean }[] };
    };
    const report = await runCrashHarness({
      name: 'init --workflow',
      world() {
        const services = new OpsServices();
        const agents = mod.createAgents(services, {});
        return {
          storage: memoryStorage(),
          clock: new ManualClock(),
          registry: agents.registry,
          models: { resolve: (id: string) => agents.model(id) },
          services,
        };
      },
      request: { tenant: 'acme', runId: 'wf-1', workflow: 'incident-review', input: { service: 'checkout', recheckAfterSeconds: 60 } },
      sideEffects: (world) => world.services.effects(),
      resolver: () => (attention) => (attention.callId ? undefined : 'retry'),
    });
    expect(report.failed, formatHarnessReport(report)).toBe(0);
    expect(report.points.length).toBeGreaterThan(report.baseline.checkpoints);
    expect(report.baseline.status).toBe('completed');
    expect(JSON.parse(report.baseline.answer)).toMatchObject({
      service: 'checkout',
      handedToAgent: true,
      answer: expect.stringContaining('Restarted checkout'),
      statusAfter: 'degraded',
    });
  });
});
