/**
 * The fake services `logbook init` writes keep their state in a file when `logbook dev` runs them
 * (LOGBOOK_WORK_DIR): worker processes share it, so an idempotency key seen by a worker that was
 * then SIGKILLed still dedupes the retried call in another process, and two processes writing at
 * once lose nothing.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { fileState, memoryState, serviceState } from '../../../templates/project/src/service-state.js';
import type { OpsState } from '../../../templates/project/src/services.js';

const CHILD = fileURLToPath(new URL('./service-state.child.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'logbook-service-state-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Run the child with the template's TypeScript (tsx), to its end: exit code or signal, and what it printed. */
function child(...args: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> & { ready: Promise<void> } {
  let ready = () => {};
  const readyPromise = new Promise<void>((r) => (ready = r));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (stdout.startsWith('ready\n')) ready();
    });
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('error', reject);
    p.on('close', (code, signal) => (ready(), resolve({ code, signal, stdout, stderr })));
  });
  return Object.assign(done, { ready: readyPromise });
}

describe("the template's service state", () => {
  it('two processes writing at once lose none of each other’s writes', { timeout: 60_000 }, async () => {
    const path = join(dir, 'count.json');
    const go = join(dir, 'go');
    const children = [child('count', path, '300', go), child('count', path, '300', go)];
    await Promise.all(children.map((c) => c.ready));
    writeFileSync(go, '');
    const results = await Promise.all(children);
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const { entries } = JSON.parse(readFileSync(path, 'utf8')) as { entries: string[] };
    expect(entries).toHaveLength(600);
    expect(new Set(entries.map((e) => e.split(':')[0])).size).toBe(2);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('a restart whose worker was SIGKILLed right after it landed is deduplicated in the next process', { timeout: 60_000 }, async () => {
    const path = join(dir, 'ops-services.json');
    const key = 'acme:run-1:3-0';
    const killed = await child('restart', path, key, 'kill');
    expect(killed.signal).toBe('SIGKILL');
    expect(killed.stdout).toBe(''); // it never answered: the engine will run the call again, same key
    const retried = await child('restart', path, key);
    expect(retried.code, retried.stderr).toBe(0);
    expect(JSON.parse(retried.stdout)).toEqual({ restartId: 'rst-1', deduplicated: true });
    const state = fileState<OpsState>(path, { effects: [], restarts: {} }).read();
    expect(state.effects.map((e) => [e.op, e.applied])).toEqual([
      ['restart', true],
      ['restart', false],
    ]);
  });

  it('a process killed inside a transaction leaves the last whole state and a lock the next process breaks', { timeout: 60_000 }, async () => {
    const path = join(dir, 'held.json');
    expect((await child('count', path, '2')).code).toBe(0);
    const died = await child('die-holding', path);
    expect(died.signal).toBe('SIGKILL');
    expect(existsSync(`${path}.lock`)).toBe(true);
    expect((await child('count', path, '1')).code).toBe(0);
    const { entries } = JSON.parse(readFileSync(path, 'utf8')) as { entries: string[] };
    expect(entries).toHaveLength(3);
    expect(entries).not.toContain('never written');
  });

  it('is a file under LOGBOOK_WORK_DIR (set by `logbook dev` for its workers), memory elsewhere', () => {
    const underDev = serviceState('ops-services', { n: 0 }, { LOGBOOK_WORK_DIR: join(dir, 'work') });
    underDev.transact((s) => void (s.n += 1));
    expect(JSON.parse(readFileSync(join(dir, 'work', 'ops-services.json'), 'utf8'))).toEqual({ n: 1 });
    const elsewhere = serviceState('ops-services', { n: 0 }, {});
    elsewhere.transact((s) => void (s.n += 1));
    expect(elsewhere.read()).toEqual({ n: 1 });
    expect(memoryState({ n: 0 }).read()).toEqual({ n: 0 });
  });
});
