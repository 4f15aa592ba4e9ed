import { randomBytes } from 'node:crypto';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace, type HrTime, type Link, type Meter, type Span, type Tracer } from '@opentelemetry/api';
import type { EngineTracer } from './engine-tracer.js';
import { GenAiMetrics } from './gen-ai-metrics.js';
import type { TraceSpan } from './trace-span.js';

/** The ids the next span started through `otelTracer` must get (set and cleared around one synchronous startSpan). */
let wanted: { traceId: string; spanId: string } | undefined;

/**
 * The SDK's IdGenerator for Logbook's spans: their ids are decided by Logbook (a hash of the run
 * and the event, trace-span.ts), so every step of a run, in any container, lands in one trace and
 * a span re-sent after a crash is the same span. Other spans get random ids as with the default.
 * `otlpTracing` installs it; a host that sets up its own TracerProvider passes it as `idGenerator`.
 */
export class LogbookIdGenerator {
  generateTraceId(): string {
    return wanted?.traceId ?? randomBytes(16).toString('hex');
  }
  generateSpanId(): string {
    return wanted?.spanId ?? randomBytes(8).toString('hex');
  }
}

export interface OtelTracerOptions {
  /** Default: the global tracer provider's `logbook` tracer (@opentelemetry/api). */
  tracer?: Tracer;
  /** Send what was recorded (the provider's forceFlush). Without it a step does not wait. */
  flush?: () => Promise<void>;
  /** Put prompt and tool payloads (redacted as logged) on spans. */
  payloads?: boolean;
  /** Told once when the provider's ids are not Logbook's (its IdGenerator is not LogbookIdGenerator). */
  warn?: (message: string) => void;
  /**
   * Record the GenAI client metrics (gen_ai.client.token.usage, gen_ai.client.operation.duration)
   * on this meter, e.g. `metrics.getMeter('logbook')` of your MeterProvider. Default: none.
   */
  meter?: Meter;
  /** Spans off, metrics only (otlpTracing with OTEL_TRACES_EXPORTER=none and metrics on). */
  spans?: false;
}

/**
 * An EngineTracer over @opentelemetry/api: each Logbook span is started with its recorded start
 * time under its (remote) parent's context and ended at its recorded end time, so any SDK behind
 * the API (Logbook's own, otlp-setup.ts, or the application's) processes and exports it.
 */
export function otelTracer(options: OtelTracerOptions = {}): EngineTracer {
  const tracer = options.tracer ?? trace.getTracer('logbook');
  let unstitched = false;
  const stitchedOr = (span: Span, s: TraceSpan) => {
    if (unstitched || !span.isRecording() || span.spanContext().spanId === s.spanId) return;
    unstitched = true;
    options.warn?.('the tracer provider does not use LogbookIdGenerator: its spans will not join their run trace');
  };
  const metrics = options.meter ? new GenAiMetrics(options.meter) : undefined;
  return {
    ...(options.payloads ? { payloads: true } : {}),
    ...(metrics ? { committed: (spans: readonly TraceSpan[]) => void metrics.record(spans) } : {}),
    record(spans) {
      if (options.spans === false) return;
      for (const s of spans) {
        const parent = s.parentSpanId
          ? trace.setSpanContext(ROOT_CONTEXT, { traceId: s.traceId, spanId: s.parentSpanId, traceFlags: TraceFlags.SAMPLED, isRemote: true })
          : ROOT_CONTEXT;
        wanted = { traceId: s.traceId, spanId: s.spanId };
        let span: Span;
        try {
          span = tracer.startSpan(
            s.name,
            {
              kind: s.kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL,
              startTime: hrTime(s.start),
              attributes: s.attributes,
              links: links(s),
              root: !s.parentSpanId,
            },
            parent,
          );
        } finally {
          wanted = undefined;
        }
        // A provider without LogbookIdGenerator gives random ids: the spans still arrive, but a
        // resumed step's spans no longer meet their parents. Said once, not per span.
        stitchedOr(span, s);
        for (const e of s.events ?? []) span.addEvent(e.name, e.attributes ?? {}, hrTime(e.at));
        if (s.status)
          span.setStatus(
            s.status.code === 'ok' ? { code: SpanStatusCode.OK } : { code: SpanStatusCode.ERROR, ...(s.status.message ? { message: s.status.message } : {}) },
          );
        span.end(hrTime(s.end));
      }
    },
    flush: options.flush ?? (() => Promise.resolve()),
  };
}

/**
 * Epoch ms as [seconds, nanoseconds]: a plain number small enough is read by the SDK as
 * performance.now() time, never as a date; the tuple is read as it is.
 */
function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}

function links(s: TraceSpan): Link[] {
  return (s.links ?? []).map((l) => ({
    context: { traceId: l.traceId, spanId: l.spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true },
    ...(l.attributes ? { attributes: l.attributes } : {}),
  }));
}
