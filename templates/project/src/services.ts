import { memoryState, type ServiceState } from './service-state.js';

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

/** What the fake services remember: every call, and the restart each idempotency key made. */
export interface OpsState {
  effects: SideEffect[];
  restarts: Record<string, string>;
}

export const emptyOpsState = (): OpsState => ({ effects: [], restarts: {} });

/**
 * Stand-ins for a status page and a deploy system, recording every call they get in `state`
 * (memory by default; a file shared by the worker processes under `logbook dev`, see agents.ts).
 * Replace them with your own clients: keep passing `ctx.idempotencyKey` to writes, so a retried
 * call lands once.
 */
export class OpsServices {
  constructor(private readonly state: ServiceState<OpsState> = memoryState(emptyOpsState())) {}

  /** Read-only and deterministic, so running it again after a crash is harmless. */
  lookup(service: string, key: string): ServiceStatus {
    this.state.transact((s) => void s.effects.push({ op: 'lookup', key, service, applied: true, readOnly: true }));
    return { service, status: 'degraded', errorRate: 0.37, version: '2026.11.3' };
  }

  /**
   * A write that deduplicates by idempotency key, as deploy and ticketing APIs commonly do. The
   * restart id is the service's own number, not made from the key: a model response written
   * after a crash gives its calls new ids (and keys), and an id made from the key would then
   * change what the agent answers.
   */
  restart(service: string, key: string): { restartId: string; deduplicated: boolean } {
    return this.state.transact((s) => {
      const seen = s.restarts[key];
      const restartId = seen ?? `rst-${Object.keys(s.restarts).length + 1}`;
      s.restarts[key] = restartId;
      s.effects.push({ op: 'restart', key, service, applied: seen === undefined, readOnly: false });
      return { restartId, deduplicated: seen !== undefined };
    });
  }

  /** Every call so far, oldest first. */
  effects(): SideEffect[] {
    return this.state.read().effects;
  }
}
