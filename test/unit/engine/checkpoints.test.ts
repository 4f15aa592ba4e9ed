import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHECKPOINT_NAMES, CRASH_POINTS, WRITE_CRASH_POINTS, WRITE_METHODS, WorkerHalt, type CheckpointName, type Checkpoints } from '../../../lib/engine/checkpoints.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { spawnWorker } from '../../../lib/testing/world.js';
import { ledgerResolver, supportScenario, supportWorld } from '../../../examples/support-agent/support-world.js';

const LIB = join(import.meta.dirname, '../../../lib');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Every `checkpoints?.at('name', ...)` in the framework's source. */
function namesInSource(): string[] {
  const names = new Set<string>();
  for (const file of sources(LIB)) {
    for (const m of readFileSync(file, 'utf8').matchAll(/checkpoints\?\.at\(\s*'([a-z-]+)'/g)) names.add(m[1] ?? '');
  }
  return [...names].sort();
}

describe('the crash-point table beside the checkpoint names', () => {
  it('lists exactly the checkpoints the engine passes, each with what a crash leaves and the rule that recovers it', () => {
    const used = namesInSource();
    expect(used.length).toBeGreaterThanOrEqual(10);
    expect(used).toEqual([...CHECKPOINT_NAMES].sort());
    expect(Object.keys(CRASH_POINTS).sort()).toEqual(used);
    for (const [name, rule] of Object.entries(CRASH_POINTS)) {
      expect(rule.leaves.length, name).toBeGreaterThan(10);
      expect(rule.recovery.length, name).toBeGreaterThan(10);
    }
  });

  it('gives every port write the harness crashes around what dying there leaves and the rule that recovers it', () => {
    const labels = Object.entries(WRITE_METHODS).flatMap(([port, methods]) => methods.map((m) => `${port}.${m}`));
    expect(labels.length).toBeGreaterThanOrEqual(18);
    expect(Object.keys(WRITE_CRASH_POINTS).sort()).toEqual(labels.sort());
    for (const [label, rule] of Object.entries(WRITE_CRASH_POINTS)) {
      expect(rule.leaves.length, label).toBeGreaterThan(10);
      expect(rule.recovery.length, label).toBeGreaterThan(10);
    }
  });

  it('is what the step runner points to for its crash story', () => {
    const header = readFileSync(join(LIB, 'engine/step-runner.ts'), 'utf8');
    expect(header).toContain('CRASH_POINTS');
    expect(header).toContain('WRITE_CRASH_POINTS');
    expect(header).not.toContain('ARCHITECTURE.md');
  });

  it('names every checkpoint a real run passes, through a crash and the recovery after it', async () => {
    const world = supportWorld();
    const seen = new Set<CheckpointName>();
    let crashed = false;
    // Crash right after the verify-policy call ran, so that the next worker has to verify it.
    const crashing: Checkpoints = {
      at(point, detail) {
        seen.add(point);
        if (crashed) throw new WorkerHalt('after crash');
        if (point === 'after-tool' && detail.startsWith('send_email#')) {
          crashed = true;
          throw new WorkerHalt(`${point}:${detail}`);
        }
      },
    };
    const recording: Checkpoints = { at: (point) => void seen.add(point) };
    const request = { ...supportScenario.request, runId: 'checkpoints-1' };
    const first = spawnWorker(world, crashing);
    await startRun(first.deps, request);
    let recoverer: ReturnType<typeof spawnWorker> | undefined;
    const result = await driveRun(world, { tenant: request.tenant, runId: request.runId }, {
      // After the crash, a fresh worker (a new process) carries the run on.
      worker: () => (crashed ? (recoverer ??= spawnWorker(world, recording)) : first),
      resolver: ledgerResolver(world),
    });
    expect(crashed).toBe(true);
    expect(result.head.status).toBe('completed');
    for (const point of seen) expect(Object.keys(CRASH_POINTS)).toContain(point);
    expect([...seen]).toEqual(expect.arrayContaining(['before-append', 'after-append', 'before-model', 'after-model', 'before-tool', 'after-tool', 'before-verify', 'after-verify']));
  });
});
