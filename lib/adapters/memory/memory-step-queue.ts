import type { StepQueue, Tick } from '../../ports/step-queue.js';

export interface QueuedTick {
  tick: Tick;
  dedupeId: string;
}

/** FIFO queue fake with SQS FIFO's dedupe: a dedupe id seen within the window is dropped. */
export class MemoryStepQueue implements StepQueue {
  readonly messages: QueuedTick[] = [];
  private readonly seen = new Set<string>();
  sent = 0;
  deduped = 0;

  async enqueue(tick: Tick, options: { dedupeId: string }): Promise<void> {
    this.sent++;
    if (this.seen.has(options.dedupeId)) {
      this.deduped++;
      return;
    }
    this.seen.add(options.dedupeId);
    this.messages.push({ tick: { ...tick }, dedupeId: options.dedupeId });
  }

  take(): QueuedTick | undefined {
    return this.messages.shift();
  }
}
