import { appendFileSync, existsSync, readFileSync } from 'node:fs';

/** One side effect a fake downstream service performed (or deduplicated). */
export interface SideEffect {
  service: 'orders' | 'tickets' | 'email' | 'payments';
  op: string;
  /** The idempotency key the tool passed (tenant:runId:callId). */
  key: string;
  runId: string;
  callId: string;
  /** False when the service recognised the key and did nothing. */
  applied: boolean;
  /** true for reads: repeating them is harmless. */
  readOnly: boolean;
  detail: Record<string, unknown>;
}

export interface Ledger {
  record(effect: SideEffect): void;
  all(): SideEffect[];
}

export class MemoryLedger implements Ledger {
  private readonly effects: SideEffect[] = [];
  record(effect: SideEffect): void {
    this.effects.push(structuredClone(effect));
  }
  all(): SideEffect[] {
    return structuredClone(this.effects);
  }
}

/**
 * A ledger that survives a killed worker process: one JSON line per effect, appended
 * synchronously so an effect that happened is on disk before the tool returns.
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
