import type { RunState } from '../core/state.js';
import type { RunRef } from '../ports/run-ref.js';

/**
 * Step boundaries the engine announces: before and after every append, tool execution, model call
 * and blob write. Production passes none; the crash-injection harness throws or pauses here.
 */
export interface Checkpoints {
  at(point: CheckpointName, detail: string): void | Promise<void>;
  /** After each successful append, with the state the worker folded from it (for invariant checks). */
  appended?(run: RunRef, state: RunState): void | Promise<void>;
}

export type CheckpointName =
  | 'before-append'
  | 'after-append'
  | 'before-tool'
  | 'after-tool'
  | 'before-verify'
  | 'after-verify'
  | 'before-model'
  | 'after-model'
  | 'before-blob-put'
  | 'after-blob-put'
  /** Around an inbox put by a control request (approve, signal, message): the API process may die between put and wake-up. */
  | 'before-inbox'
  | 'after-inbox';

/**
 * Thrown from a checkpoint to stop the worker as if its process died. Engine code never catches
 * it: no result, no cleanup, no release — exactly what a kill -9 leaves behind.
 */
export class WorkerHalt extends Error {
  constructor(readonly point: string) {
    super(`worker halted at ${point}`);
    this.name = 'WorkerHalt';
  }
}

export function rethrowHalt(error: unknown): void {
  if (error instanceof WorkerHalt) throw error;
}
