import type { Clock } from '../../ports/clock.js';

interface Sleeper {
  until: number;
  resolve: () => void;
}

/** A clock that only moves when told: sleeps resolve as `advance` passes their deadline. */
export class ManualClock implements Clock {
  private sleepers: Sleeper[] = [];
  constructor(private current = Date.UTC(2026, 10, 1)) {}

  now(): number {
    return this.current;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const sleeper: Sleeper = { until: this.current + ms, resolve };
      this.sleepers.push(sleeper);
      signal?.addEventListener(
        'abort',
        () => {
          this.sleepers = this.sleepers.filter((s) => s !== sleeper);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }

  async advance(ms: number): Promise<void> {
    this.current += ms;
    const due = this.sleepers.filter((s) => s.until <= this.current);
    this.sleepers = this.sleepers.filter((s) => s.until > this.current);
    for (const s of due) s.resolve();
    // Let the woken tasks run before the caller continues.
    await new Promise((r) => setImmediate(r));
  }
}

/** Deterministic ids for tests. */
export class SequentialIds {
  private n = 0;
  constructor(private readonly prefix = 'id') {}
  nonce(): string {
    return `${this.prefix}-nonce-${++this.n}`;
  }
  inboxId(): string {
    return `${this.prefix}-${String(++this.n).padStart(10, '0')}`;
  }
}
