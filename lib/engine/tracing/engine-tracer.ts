import type { TraceSpan } from './trace-span.js';

/**
 * Where a step's spans go (EnginePorts.tracer; absent, tracing is off and costs one `if` per
 * step). `otelTracer` (otel-tracer.ts) is the OpenTelemetry one; a test may collect them itself.
 */
export interface EngineTracer {
  /** Hand finished spans over (buffered by the SDK: nothing is sent here). */
  record(spans: readonly TraceSpan[]): void;
  /**
   * Send what was recorded. A step awaits it (at most TRACE_FLUSH_MS) before it releases its run,
   * so a step's spans are out before the head says it is done: a worker that dies after that has
   * them re-sent by the next one, never lost.
   */
  flush(): Promise<void>;
  /**
   * The spans of one round of a step, once its head write covers their events (spans are recorded
   * before it, for a dead worker's successor to re-send): from here on no worker projects these
   * events again, so what is counted here (the GenAI metrics) is counted once. Optional.
   */
  committed?(spans: readonly TraceSpan[]): void;
  /** Put prompt and tool payloads on spans (as the log holds them: redacted). Off by default. */
  payloads?: boolean;
}
