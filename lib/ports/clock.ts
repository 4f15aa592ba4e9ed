export interface Clock {
  now(): number;
  /** Resolves after ms, or rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}
