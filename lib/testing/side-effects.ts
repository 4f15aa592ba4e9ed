import type { JsonValue } from '../core/json.js';
import type { Resolver } from './driver.js';
import { SideEffectShapeError } from './harness-errors.js';
import { idempotencyKey } from '../core/run-ref.js';

/**
 * A side effect as the default duplicate check reads it: `key` is the idempotency key the tool
 * passed (plus `op` when one call makes several kinds of effect); `applied: false` marks a write
 * the service deduplicated, `readOnly: true` a read. Any other shape needs `onceKey`.
 */
export interface SideEffectRecord {
  key: string;
  op?: string;
  applied?: boolean;
  readOnly?: boolean;
}

/** What effectLog() keeps: the record plus what the service did (what the tool returned, say). */
export interface RecordedEffect<D = unknown> extends SideEffectRecord {
  op: string;
  applied: boolean;
  readOnly: boolean;
  detail?: D;
}

/**
 * The ledger a test's fake downstream services write to, in memory. The harness reads it after
 * every crash point: a write recorded twice under the same op and key is a duplicate side effect.
 */
export interface EffectRecorder<D = unknown> {
  /** A write that happened. The same op and key again is what the harness reports as a duplicate. */
  write(op: string, key: string, detail?: D): RecordedEffect<D>;
  /**
   * A write to a service that deduplicates by key (what `idempotency_key` tools call): the first
   * one applies; a repeat is recorded with `applied: false` and gets the first one's detail back.
   */
  writeOnce(op: string, key: string, detail?: D): { applied: boolean; detail: D | undefined };
  /** A read: repeating it is harmless, the harness never counts it. */
  read(op: string, key: string, detail?: D): void;
  /** Any record, for services with their own rules. */
  record(effect: RecordedEffect<D>): void;
  all(): readonly RecordedEffect<D>[];
  /** The applied write for this key (and op): what a verify() or a person would look up. */
  find(key: string, op?: string): RecordedEffect<D> | undefined;
  clear(): void;
}

/** A fresh in-memory effect ledger for one world of a test. */
export function effectLog<D = unknown>(): EffectRecorder<D> {
  const effects: RecordedEffect<D>[] = [];
  const push = (effect: RecordedEffect<D>) => {
    // A copy: a tool that mutates its result afterwards must not rewrite history.
    const copy = structuredClone(effect);
    effects.push(copy);
    return structuredClone(copy);
  };
  const find = (key: string, op?: string) => effects.find((e) => e.key === key && (op === undefined || e.op === op) && e.applied && !e.readOnly);
  const withDetail = (detail: D | undefined) => (detail === undefined ? {} : { detail });
  return {
    write: (op, key, detail) => push({ op, key, applied: true, readOnly: false, ...withDetail(detail) }),
    writeOnce(op, key, detail) {
      const first = find(key, op);
      push({ op, key, applied: first === undefined, readOnly: false, ...withDetail(first ? first.detail : detail) });
      return { applied: first === undefined, detail: structuredClone(first ? first.detail : detail) };
    },
    read: (op, key, detail) => void push({ op, key, applied: true, readOnly: true, ...withDetail(detail) }),
    record: (effect) => void push(effect),
    all: () => structuredClone(effects),
    find: (key, op) => structuredClone(find(key, op)),
    clear: () => void effects.splice(0),
  };
}

/**
 * A scripted person for a harness scenario whose tools write to an effect log, keyed by
 * ctx.idempotencyKey: for a call that parked with no result, look whether its write landed; if
 * it did, record that as the call's result (its detail), if not, approve a rerun. A run-level
 * park (missing version, stalled model) gets `runLevel` (default retry).
 */
export function resolveFromEffects(effects: Pick<EffectRecorder, 'find'>, options: { runLevel?: 'retry' | 'fail' } = {}): Resolver {
  return (attention, head) => {
    if (!attention.callId) return options.runLevel ?? 'retry';
    const landed = effects.find(idempotencyKey(head, attention.callId));
    if (!landed) return { callId: attention.callId, outcome: 'rerun' };
    return { callId: attention.callId, outcome: 'succeeded', ...(landed.detail === undefined ? {} : { result: landed.detail as JsonValue }) };
  };
}

export function defaultOnceKey(effect: unknown): string | undefined {
  const e = effect as Partial<SideEffectRecord> | null;
  if (typeof e?.key !== 'string') throw new SideEffectShapeError(effect);
  if (e.readOnly || e.applied === false) return undefined;
  return `${e.op ?? 'effect'}:${e.key}`;
}

/** Effects that happened more than once under the same once-key: what must never happen. */
export function repeatedEffects<E>(effects: readonly E[], onceKey: (effect: E) => string | undefined = defaultOnceKey): { key: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const e of effects) {
    const k = onceKey(e);
    if (k === undefined) continue;
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return [...counts.entries()].filter(([, n]) => n > 1).map(([key, count]) => ({ key, count }));
}
