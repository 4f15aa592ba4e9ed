import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Where the fake airline and payment service keep their state. A real service keeps it in its
 * own database, outside the worker that calls it; so must a fake, or a killed worker would take
 * the service's memory (and its idempotency keys) with it.
 */
export interface StateStore<S> {
  /** A copy of the state now. */
  read(): S;
  /**
   * Run `change` on the state with no other writer in between (what a real service does in one
   * transaction: look the idempotency key up, then record the request) and keep what it leaves.
   */
  transact<T>(change: (state: S) => T): T;
}

/** State in this process's memory: tests, where one process plays every worker. */
export class MemoryStore<S> implements StateStore<S> {
  private state: S;
  constructor(initial: S) {
    this.state = structuredClone(initial);
  }
  read(): S {
    return structuredClone(this.state);
  }
  transact<T>(change: (state: S) => T): T {
    // Synchronous: nothing else in this process runs between the read and the write.
    const next = structuredClone(this.state);
    const result = change(next);
    this.state = next;
    return structuredClone(result);
  }
}

const LOCK_WAIT_MS = 10_000;
const nap = new Int32Array(new SharedArrayBuffer(4));

/**
 * State in one JSON file shared by every process on this machine (the local stack runs each
 * worker as its own process, and kills them). A transaction holds a lock file naming its pid (a
 * lock whose holder died, say by SIGKILL, is broken), reads the file, and writes the new state to
 * a temporary file renamed over the old one: a reader never sees half a file, and a process killed
 * mid-write leaves the previous state whole.
 */
export class JsonFileStore<S> implements StateStore<S> {
  constructor(
    readonly path: string,
    private readonly initial: S,
  ) {
    mkdirSync(dirname(path), { recursive: true });
  }

  read(): S {
    if (!existsSync(this.path)) return structuredClone(this.initial);
    return JSON.parse(readFileSync(this.path, 'utf8')) as S;
  }

  transact<T>(change: (state: S) => T): T {
    const lock = `${this.path}.lock`;
    const giveUpAt = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        const fd = openSync(lock, 'wx');
        writeSync(fd, String(process.pid));
        closeSync(fd);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        if (holderIsDead(lock)) rmSync(lock, { force: true });
        else if (Date.now() > giveUpAt) throw new Error(`${this.path} stayed locked for ${LOCK_WAIT_MS} ms`);
        else Atomics.wait(nap, 0, 0, 2);
      }
    }
    try {
      const state = this.read();
      const result = change(state);
      const temp = `${this.path}.${process.pid}.tmp`;
      const fd = openSync(temp, 'w');
      try {
        writeSync(fd, JSON.stringify(state));
      } finally {
        closeSync(fd);
      }
      renameSync(temp, this.path);
      return result;
    } finally {
      rmSync(lock, { force: true });
    }
  }
}

function holderIsDead(lock: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(lock, 'utf8'));
  } catch {
    return false; // just released, or its pid not written yet: try again
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
