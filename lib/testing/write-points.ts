import type { OutcomeNotice, OutcomePublisher } from '../ports/outcome-publisher.js';

/**
 * Every port call that writes, by port: what a handler (API, trigger, worker, sweeper) can die
 * before or after. The harness crashes before and after each of them, in the order the
 * uninterrupted run performs them, besides the engine's named checkpoints. Reads are left out:
 * dying before a read is dying after the write before it.
 */
export const WRITE_METHODS = {
  log: ['append'],
  heads: ['createHead', 'claimLease', 'renewLease', 'releaseLease', 'resetAttempts', 'markLoaded', 'project', 'projectAndRelease', 'setPark', 'setSnapshot', 'markNotified', 'markSwept'],
  inbox: ['put', 'delete'],
  blobs: ['put'],
  queue: ['enqueue'],
  publisher: ['publish'],
} as const satisfies Record<string, readonly string[]>;
export type WritePort = keyof typeof WRITE_METHODS;

export function isWrite(port: WritePort, method: string): boolean {
  return (WRITE_METHODS[port] as readonly string[]).includes(method);
}

/** Told before and after every write a process makes; throwing WorkerHalt kills the process there. */
export interface WritePoints {
  write(phase: 'before-write' | 'after-write', label: string): void | Promise<void>;
}

/**
 * A deliberate defect in the order of writes, for the check that the harness notices one: skip a
 * write, or swap two neighbours (`label` is held back and goes out right after `next` when that
 * is the very next write; before any other write it goes out as written).
 */
export interface WriteMutation {
  kind: 'skip' | 'swap';
  /** `port.method` of the write to skip, or the first of the pair to swap. */
  label: string;
  /** For a swap: the `port.method` of the write that must come next for the pair to be swapped. */
  next?: string;
  /** Only the calls of `label` whose arguments match (default: every call). */
  match?: (args: unknown[]) => boolean;
}

/** The outcome notices a world's publisher received, in order (what EventBridge would carry). */
export class RecordingPublisher implements OutcomePublisher {
  readonly notices: OutcomeNotice[] = [];
  async publish(notice: OutcomeNotice): Promise<void> {
    this.notices.push(structuredClone(notice));
  }
}
