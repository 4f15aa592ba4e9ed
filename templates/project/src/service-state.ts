import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Where a fake service keeps what it has seen (the idempotency keys it answered). A real service
 * keeps that in its own database, outside the worker that calls it; a fake must too, or a worker
 * killed mid-call would take the service's memory with it and the retried call would land twice.
 */
export interface ServiceState<S> {
  /** A copy of the state now. */
  read(): S;
  /** Run `change` with no other writer in between (one transaction: look the key up, record the call) and keep what it leaves. */
  transact<T>(change: (state: S) => T): T;
}

/** State in this process's memory: the tests (one process plays every worker), and a deployed fake. */
export function memoryState<S>(initial: S): ServiceState<S> {
  let state = structuredClone(initial);
  return {
    read: () => structuredClone(state),
    transact(change) {
      const next = structuredClone(state);
      const result = change(next);
      state = next;
      return structuredClone(result);
    },
  };
}

const LOCK_WAIT_MS = 10_000;
const nap = new Int32Array(new SharedArrayBuffer(4));

/**
 * State in one JSON file that every process on this machine shares (`logbook dev` runs each worker
 * as a process, and a crash or `kill -9` ends it mid-call). A transaction holds a lock file with
 * its pid (the lock of a dead process is broken), reads the file, and writes the new state to a
 * temporary file that is renamed over the old one: no reader sees half a file, no process killed
 * mid-write leaves one, and no two processes lose each other's writes.
 */
export function fileState<S>(path: string, initial: S): ServiceState<S> {
  mkdirSync(dirname(path), { recursive: true });
  const read = (): S => (existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as S) : structuredClone(initial));
  return {
    read,
    transact(change) {
      const lock = `${path}.lock`;
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
          else if (Date.now() > giveUpAt) throw new Error(`${path} stayed locked for ${LOCK_WAIT_MS} ms`);
          else Atomics.wait(nap, 0, 0, 2);
        }
      }
      try {
        const state = read();
        const result = change(state);
        const temp = `${path}.${process.pid}.tmp`;
        const fd = openSync(temp, 'w');
        try {
          writeSync(fd, JSON.stringify(state));
        } finally {
          closeSync(fd);
        }
        renameSync(temp, path);
        return result;
      } finally {
        rmSync(lock, { force: true });
      }
    },
  };
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

/**
 * A file under the local stack's work directory when `logbook dev` runs this process (it sets
 * LOGBOOK_WORK_DIR, `.logbook/` by default, for its workers), else memory (Lambda, the tests).
 */
export function serviceState<S>(name: string, initial: S, env: Record<string, string | undefined> = process.env): ServiceState<S> {
  return env.LOGBOOK_WORK_DIR ? fileState(join(env.LOGBOOK_WORK_DIR, `${name}.json`), initial) : memoryState(initial);
}
