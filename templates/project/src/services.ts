import { createHash } from 'node:crypto';

/** One call a fake downstream service received, in the shape the crash harness reads by default. */
export interface SideEffect {
  op: 'lookup' | 'restart';
  /** The idempotency key the tool passed (`tenant:runId:callId`). */
  key: string;
  service: string;
  /** False when the service recognised the key and did nothing. */
  applied: boolean;
  /** Reads may repeat; the harness only counts writes. */
  readOnly: boolean;
}

export type ServiceStatus = {
  service: string;
  status: 'healthy' | 'degraded';
  errorRate: number;
  version: string;
};

/**
 * Stand-ins for a status page and a deploy system, recording every call they get. Replace them
 * with your own clients: keep passing `ctx.idempotencyKey` to writes, so a retried call lands once.
 */
export class OpsServices {
  private readonly log: SideEffect[] = [];
  private readonly restarted = new Map<string, string>();

  /** Read-only and deterministic, so running it again after a crash is harmless. */
  lookup(service: string, key: string): ServiceStatus {
    this.log.push({ op: 'lookup', key, service, applied: true, readOnly: true });
    return { service, status: 'degraded', errorRate: 0.37, version: '2026.11.3' };
  }

  /** A write that deduplicates by idempotency key, as deploy and ticketing APIs commonly do. */
  restart(service: string, key: string): { restartId: string; deduplicated: boolean } {
    const seen = this.restarted.get(key);
    const restartId = seen ?? `rst-${createHash('sha256').update(key).digest('hex').slice(0, 8)}`;
    this.restarted.set(key, restartId);
    this.log.push({ op: 'restart', key, service, applied: seen === undefined, readOnly: false });
    return { restartId, deduplicated: seen !== undefined };
  }

  /** Every call so far, oldest first. */
  effects(): SideEffect[] {
    return this.log.map((e) => ({ ...e }));
  }
}
