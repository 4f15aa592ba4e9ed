import { fork, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { DeployedFunction } from './deployed-artifact-assembly.js';

const HOST = fileURLToPath(new URL('./deployed-artifact-host.mjs', import.meta.url));

/** What the host measured of its init phase (ms; bootMs is Node's own start before our code ran). */
export interface InitTimings {
  bootMs: number;
  importMs: number;
  warmMs: number;
  initMs: number;
  readyAtMs: number;
  /** CPU (user + system) the process used from its start to ready. */
  cpuMs: number;
}

type Reply = { type: 'ready'; timings: InitTimings } | { type: 'result'; id: number; response: unknown } | { type: 'error'; id: number; message: string };

/**
 * One Lambda sandbox for a bundle from cdk.out: a fresh plain `node` process (no loader, no
 * inherited NODE_OPTIONS or exec flags) with exactly the given environment, its output appended
 * to `logFile`. Invocations run one at a time, as in a real sandbox.
 */
export class Sandbox {
  private nextId = 0;
  private constructor(
    private readonly child: ChildProcess,
    readonly fn: DeployedFunction,
    readonly timings: InitTimings,
  ) {}

  /** `cwd`: the working directory (Lambda's is the function's code root); default this process's. */
  static start(fn: DeployedFunction, env: Record<string, string>, logFile: string, options: { cwd?: string } = {}): Promise<Sandbox> {
    const fd = openSync(logFile, 'a');
    const child = fork(HOST, [fn.bundle, fn.logicalId, String(fn.memoryMb)], {
      execPath: process.execPath,
      execArgv: [],
      env,
      ...(options.cwd ? { cwd: options.cwd } : {}),
      stdio: ['ignore', fd, fd, 'ipc'],
    });
    closeSync(fd);
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`${fn.logicalId} sandbox exited during init (code ${code}); see ${logFile}`));
      child.once('exit', onExit);
      child.on('message', (m: Reply) => {
        if (m.type !== 'ready') return;
        child.off('exit', onExit);
        resolve(new Sandbox(child, fn, m.timings));
      });
    });
  }

  /** Invoke the handler with `event` and a context that has the function's timeout left. */
  invoke<T>(event: unknown): Promise<T> {
    const id = ++this.nextId;
    return new Promise<T>((resolve, reject) => {
      const onExit = (code: number | null, signal: string | null) => reject(new Error(`${this.fn.logicalId} died mid-invocation (code ${code}, signal ${signal})`));
      const onMessage = (m: Reply) => {
        if (m.type === 'ready' || m.id !== id) return;
        this.child.off('message', onMessage);
        this.child.off('exit', onExit);
        if (m.type === 'result') resolve(m.response as T);
        else reject(new Error(`${this.fn.logicalId} handler threw: ${m.message}`));
      };
      this.child.on('message', onMessage);
      this.child.once('exit', onExit);
      this.child.send({ type: 'invoke', id, event, timeoutMs: this.fn.timeoutMs });
    });
  }

  stop(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}
