import { appendFileSync, closeSync, existsSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';

/** One side effect a fake downstream service performed (or deduplicated, or refused). */
export interface SideEffect {
  service: 'orders' | 'tickets' | 'email' | 'payments';
  op: string;
  /** The idempotency key the tool passed (tenant:runId:callId). */
  key: string;
  runId: string;
  callId: string;
  /** False when the service recognised the key and did nothing, or refused the request. */
  applied: boolean;
  /** true for reads: repeating them is harmless. */
  readOnly: boolean;
  /** The fencing token the request carried (email and payments keep the highest one per key). */
  token?: number;
  detail: Record<string, unknown>;
}

export interface Ledger {
  record(effect: SideEffect): void;
  all(): SideEffect[];
  /**
   * Run `fn` (which reads and records) with no other writer in between, as a real service checks
   * and stores a request in one transaction. Across processes for the file ledger.
   */
  atomically<T>(fn: () => T): T;
}

export class MemoryLedger implements Ledger {
  private readonly effects: SideEffect[] = [];
  record(effect: SideEffect): void {
    this.effects.push(structuredClone(effect));
  }
  all(): SideEffect[] {
    return structuredClone(this.effects);
  }
  atomically<T>(fn: () => T): T {
    return fn(); // one process, synchronous fn: nothing can run in between
  }
}

const LOCK_WAIT_MS = 10_000;
const nap = new Int32Array(new SharedArrayBuffer(4));

/**
 * A ledger that survives a killed worker process: one JSON line per effect, appended
 * synchronously so an effect that happened is on disk before the tool returns. Worker processes
 * share it, so check-then-record runs under a lock file holding the holder's pid: a lock whose
 * holder is dead (a SIGKILLed worker) is broken; a frozen holder is waited for, as a real
 * database would keep a frozen client's transaction lock.
 */
export class FileLedger implements Ledger {
  constructor(private readonly path: string) {}
  record(effect: SideEffect): void {
    appendFileSync(this.path, JSON.stringify(effect) + '\n');
  }
  all(): SideEffect[] {
    if (!existsSync(this.path)) return [];
    return readFileSync(this.path, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as SideEffect);
  }
  atomically<T>(fn: () => T): T {
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
        else if (Date.now() > giveUpAt) throw new Error(`ledger ${this.path} stayed locked for ${LOCK_WAIT_MS} ms`);
        else Atomics.wait(nap, 0, 0, 2);
      }
    }
    try {
      return fn();
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
    return false; // just released, or not written yet: try again
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Non-read-only effects applied more than once for the same call: what must never happen. */
export function duplicateEffects(effects: SideEffect[]): { key: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const e of effects) {
    if (e.readOnly || !e.applied) continue;
    const k = `${e.service}:${e.op}:${e.key}`;
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return [...counts.entries()].filter(([, n]) => n > 1).map(([key, count]) => ({ key, count }));
}
