import type { Admission } from '../ports/admission.js';
import type { BlobStore } from '../ports/blob-store.js';
import type { Clock } from '../ports/clock.js';
import type { EventLog } from '../ports/event-log.js';
import type { Ids } from '../ports/ids.js';
import type { Inbox } from '../ports/inbox.js';
import type { ModelResolver } from '../ports/model-client.js';
import type { OutcomePublisher } from '../ports/outcome-publisher.js';
import type { RunHeads } from '../ports/run-heads.js';
import type { RunStream } from '../ports/run-stream.js';
import type { StepQueue } from '../ports/step-queue.js';
import type { AgentRegistry } from '../authoring/registry.js';
import type { Checkpoints } from './checkpoints.js';
import { IN_PROCESS_WAIT_MS, LEASE_MS, MARGIN_MS, MAX_CLAIM_ATTEMPTS, MODEL_TIMEOUT_MS } from '../core/limits.js';
import { PayloadCodec } from './payload-codec.js';
import { Redactor, type RedactionOptions } from '../core/redaction.js';
import { RunLoader } from './run-loader.js';
import type { EngineTracer } from './tracing/engine-tracer.js';

/** Structured log lines from the engine; handlers route them to Powertools Logger. */
export interface EngineLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Per-turn measurements; handlers emit them as EMF metrics. */
export interface EngineMetrics {
  count(
    name: 'Turns' | 'AppendConflicts' | 'TicksWithoutProgress' | 'RunsParked' | 'InputTokens' | 'OutputTokens' | 'StreamChunks' | 'StreamWriteFailures',
    value?: number,
  ): void;
  duration(name: 'ModelLatency' | 'ToolLatency', ms: number): void;
  cost(usd: number): void;
}

export interface EngineConfig {
  leaseMs: number;
  /** Claims without progress before a run is parked as poisoned. */
  maxClaimAttempts: number;
  /** Attempts of a rerun/idempotency_key call. */
  maxToolAttempts: number;
  /** Starts of a rerun call that all died with their worker before it gets an error result (default MAX_CRASHED_TOOL_ATTEMPTS). */
  maxCrashedToolAttempts?: number;
  /** Kept free before the lease or the invocation ends. */
  marginMs: number;
  /** Upper bound of one model call, for the time-left check. */
  modelTimeoutMs: number;
  /** How long a completed / failed-or-parked run's head is kept. */
  retentionCompletedMs: number;
  retentionFailedMs: number;
  /**
   * Unfinished runs a tenant may hold at once (admission.ts); a start beyond it is refused with
   * TooManyRunsError (HTTP 429 + Retry-After). 0: no limit. Child runs are not counted: they run
   * under their parent's slot and budget.
   */
  maxActiveRuns?: number;
  /** The Retry-After a refused start is given (seconds). */
  admissionRetryAfterS?: number;
  /**
   * A workflow's wait (a retry back-off, a short sleep) that ends within this many ms is slept in
   * the worker instead of ending the step and waiting for the sweeper (IN_PROCESS_WAIT_MS). 0: never.
   */
  inProcessWaitMs?: number;
}

export const DEFAULT_ENGINE_CONFIG: EngineConfig = {
  leaseMs: LEASE_MS,
  maxClaimAttempts: MAX_CLAIM_ATTEMPTS,
  maxToolAttempts: 3,
  marginMs: MARGIN_MS,
  modelTimeoutMs: MODEL_TIMEOUT_MS,
  retentionCompletedMs: 30 * 86_400_000,
  retentionFailedMs: 90 * 86_400_000,
  inProcessWaitMs: IN_PROCESS_WAIT_MS,
};

export interface EnginePorts {
  log: EventLog;
  heads: RunHeads;
  inbox: Inbox;
  blobs: BlobStore;
  queue: StepQueue;
  models: ModelResolver;
  registry: AgentRegistry;
  clock: Clock;
  ids: Ids;
  publisher?: OutcomePublisher;
  /** Where a streaming model call's text is published as it is written; absent: no streaming. */
  stream?: RunStream;
  /** Per-tenant admission; required for config.maxActiveRuns to apply. */
  admission?: Admission;
  logger?: EngineLogger;
  metrics?: EngineMetrics;
  /** OpenTelemetry spans of each step, derived from the events it appends (tracing/); absent: off. */
  tracer?: EngineTracer;
}

export interface EngineDeps extends EnginePorts {
  codec: PayloadCodec;
  loader: RunLoader;
  config: EngineConfig;
  checkpoints?: Checkpoints;
}

export interface EngineOptions {
  config?: Partial<EngineConfig>;
  /** What to redact beyond the built-in secrets, and what never to (defineAgents' `redaction`). */
  redaction?: RedactionOptions;
  inlineLimitBytes?: number;
  snapshotEvery?: number;
  checkpoints?: Checkpoints;
}

/** Wire the engine once per cold start: the codec cache and the warm run cache live here. */
export function createEngine(ports: EnginePorts, options: EngineOptions = {}): EngineDeps {
  const codec = new PayloadCodec({
    blobs: ports.blobs,
    redactor: new Redactor(options.redaction),
    ...(options.inlineLimitBytes !== undefined ? { inlineLimitBytes: options.inlineLimitBytes } : {}),
  });
  const loader = new RunLoader(ports, options.snapshotEvery !== undefined ? { snapshotEvery: options.snapshotEvery } : {});
  return {
    ...ports,
    codec,
    loader,
    config: { ...DEFAULT_ENGINE_CONFIG, ...options.config },
    ...(options.checkpoints ? { checkpoints: options.checkpoints } : {}),
  };
}

export const silentLogger: EngineLogger = { info() {}, warn() {}, error() {} };
