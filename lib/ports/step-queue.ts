/** A wake-up for a run. Ticks carry no commands: the log and the inbox say what to do. */
export interface Tick {
  tenant: string;
  runId: string;
}

export interface StepQueue {
  /**
   * `dedupeId` names its sender so a real wake-up is never swallowed by FIFO's 5-minute window:
   * worker `runId:seq:epoch`, API `runId:inbox:<id>`, sweeper `runId:sweep:<epoch>:<n>`.
   */
  enqueue(tick: Tick, options: { dedupeId: string }): Promise<void>;
}

/** Visibility control of the tick being processed (shortened at claim, extended on heartbeat). */
export interface TickVisibility {
  setVisibility(receiptHandle: string, seconds: number): Promise<void>;
}
