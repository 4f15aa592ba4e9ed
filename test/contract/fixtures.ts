import { randomBytes } from 'node:crypto';
import type { RunEvent, Writer } from '../../lib/core/events.js';
import type { InboxItem } from '../../lib/core/inbox.js';
import type { ManualClock } from '../../lib/adapters/memory/manual-clock.js';
import type { EventLog } from '../../lib/ports/event-log.js';
import type { Inbox } from '../../lib/ports/inbox.js';
import type { RunHead, RunHeads } from '../../lib/ports/run-heads.js';
import type { RunRef } from '../../lib/core/run-ref.js';
import { initialHead } from '../../lib/engine/start-run.js';

export type Store = EventLog & RunHeads & Inbox & { readonly stats: { requests: number; itemsRead: number } };

/** One store implementation under test, with the hooks the shared assertions need. */
export interface StoreUnderTest {
  store: Store;
  /** The clock the store filters TTL with (the memory store has none). */
  clock: ManualClock;
  /** Overwrite the stored event at seq with something that is not a valid event. */
  corrupt(run: RunRef, seq: number): Promise<void>;
  /** A second, independent client on the same data (another Lambda container). */
  peer(): Store;
  dispose(): Promise<void>;
}

/** A store implementation to run the contract against. */
export interface StoreTarget {
  name: string;
  /** DynamoDB refuses items over 400 KB; the memory fake does not check. */
  enforcesItemLimit: boolean;
  /** Whether the target is available here (an emulator may be missing). */
  available: boolean;
  setup(): Promise<StoreUnderTest>;
}

const unique = () => randomBytes(4).toString('hex');

/** A fresh tenant and run per test, so tests share one table without seeing each other. */
export function newRun(label = 'run'): RunRef {
  return { tenant: `tenant-${unique()}`, runId: `${label}-${unique()}` };
}

export const DAY = 86_400_000;

export function writer(epoch: number, nonce = `nonce-${unique()}`): Writer {
  return { epoch, nonce };
}

/** A small valid event at seq (cancel_requested carries few fields). */
export function smallEvent(seq: number, by: Writer, at = 1): RunEvent {
  return { v: 1, seq, at, by, type: 'cancel_requested', requestedBy: 'tester', inboxId: `in-${seq}` };
}

/** A valid event of about `bytes` bytes (a model_failed with a long message). */
export function sizedEvent(seq: number, by: Writer, bytes: number): RunEvent {
  return { v: 1, seq, at: 1, by, type: 'model_failed', code: 'test', message: 'x'.repeat(bytes), retryable: false };
}

export function runStarted(run: RunRef, by: Writer, opts: { at: number; expiresAt: number; requestHash?: string }): RunEvent {
  return {
    v: 1,
    seq: 1,
    at: opts.at,
    by,
    type: 'run_started',
    tenant: run.tenant,
    runId: run.runId,
    requestHash: opts.requestHash ?? 'hash-a',
    agent: { name: 'agent', version: '1' },
    model: { id: 'scripted', maxOutputTokens: 100, price: { inputPerMTokUsd: 0, outputPerMTokUsd: 0 } },
    prompt: { version: '1', text: { kind: 'inline', value: 'You are a test.' }, sha256: 'a'.repeat(64) },
    tools: [],
    input: { kind: 'inline', value: { question: 'why?' } },
    budgets: { maxSteps: 10, maxInputTokens: 1000, maxOutputTokens: 1000, maxCostUsd: 1, deadlineAt: opts.at + DAY },
    graceMs: 1000,
    expiresAt: opts.expiresAt,
  };
}

export function newHead(run: RunRef, now: number, overrides: Partial<RunHead> = {}): RunHead {
  const head = initialHead({ ...run, agent: { name: 'agent', version: '1' }, at: now, expiresAt: now + 90 * DAY }, now);
  return { ...head, ...overrides };
}

export function cancelItem(id: string): InboxItem {
  return { id, kind: 'cancel', by: 'tester', reason: 'test' };
}

/** Settle several promises and split them into fulfilled values and rejection reasons. */
export async function settle<T>(promises: Promise<T>[]): Promise<{ ok: T[]; errors: unknown[] }> {
  const results = await Promise.allSettled(promises);
  return {
    ok: results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])),
    errors: results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : [])),
  };
}
