import type { OutcomeNotice, OutcomePublisher } from '../ports/outcome-publisher.js';
import { WRITE_METHODS, type WritePort } from '../engine/checkpoints.js';

// The writes, with what dying around each leaves and its recovery, are the engine's crash story
// (engine/checkpoints.ts: WRITE_METHODS and WRITE_CRASH_POINTS); the harness crashes around them.
export { WRITE_METHODS, type WritePort };

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
