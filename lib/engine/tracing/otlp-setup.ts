import { randomUUID } from 'node:crypto';
import type { EngineTracer } from './engine-tracer.js';
import { otelConfig, type OtelConfig, type OtlpProtocol, type OtlpTarget } from './otel-env.js';
import { LogbookIdGenerator, otelTracer } from './otel-tracer.js';

export type { OtlpProtocol } from './otel-env.js';

export interface OtlpTracingOptions {
  /** Where the OTEL_* variables are read (default process.env): otel-env.ts says how. */
  env?: Record<string, string | undefined>;
  /**
   * A collector's base URL (`logbook dev --otlp URL`): `/v1/traces` and `/v1/metrics` are appended,
   * as to OTEL_EXPORTER_OTLP_ENDPOINT, and it is used above every endpoint variable. Default: the
   * variables, then http://localhost:4318 (where the ADOT Lambda layer's collector listens).
   */
  endpoint?: string;
  /** Above OTEL_EXPORTER_OTLP_{TRACES,METRICS}_PROTOCOL and OTEL_EXPORTER_OTLP_PROTOCOL (default http/protobuf). */
  protocol?: OtlpProtocol;
  /** service.name when neither OTEL_SERVICE_NAME nor OTEL_RESOURCE_ATTRIBUTES says (default `logbook`). */
  serviceName?: string;
  /** Put prompt and tool payloads (redacted as logged) on spans. */
  payloads?: boolean;
  /** `false`: no spans unless OTEL_TRACES_EXPORTER=otlp (metrics only). Default true: spans unless OTEL_TRACES_EXPORTER or OTEL_SDK_DISABLED says otherwise. */
  traces?: boolean;
  /**
   * The GenAI client metrics (gen_ai.client.token.usage, gen_ai.client.operation.duration), off by
   * default: `true` turns them on unless OTEL_METRICS_EXPORTER or OTEL_SDK_DISABLED says otherwise;
   * unset, OTEL_METRICS_EXPORTER=otlp turns them on.
   */
  metrics?: boolean;
  /** Warnings (a variable ignored, a signal turned off, an exporter that cannot send); default: none. */
  warn?: (message: string) => void;
}

/** An EngineTracer that owns its SDK: shut it down when the process is done with it. */
export interface OtlpTracing extends EngineTracer {
  /** Where spans go (unset: spans are off, by OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED). */
  readonly traces?: OtlpTarget;
  /** Where the GenAI metrics go (unset: off). */
  readonly metrics?: OtlpTarget;
  /** Send the metrics recorded so far: a host whose process may freeze after each invocation (Lambda) awaits it then. */
  flushMetrics(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * The OpenTelemetry SDK as Logbook sets it up (the local stack, and Lambda when tracing is on),
 * from the standard variables (otel-env.ts: which are read, which wins): a tracer provider with
 * LogbookIdGenerator, a batch processor and the OTLP/HTTP exporter of the configured protocol; with
 * metrics on, a meter provider with a periodic reader and the OTLP/HTTP metric exporter. Both carry
 * the resource of OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME, plus a service.instance.id of the
 * process (a cumulative metric stream per container). Loaded on demand: a process with tracing off
 * never loads the SDK. OTEL_SDK_DISABLED=true gives a tracer that does nothing and loads nothing.
 */
export async function otlpTracing(options: OtlpTracingOptions = {}): Promise<OtlpTracing> {
  const config = otelConfig(options.env ?? process.env, {
    traces: options.traces ?? true,
    ...(options.metrics !== undefined ? { metrics: options.metrics } : {}),
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.protocol ? { protocol: options.protocol } : {}),
    ...(options.serviceName ? { serviceName: options.serviceName } : {}),
  });
  for (const w of config.warnings) options.warn?.(w);
  if (!config.traces && !config.metrics) return { record() {}, flush: async () => {}, flushMetrics: async () => {}, shutdown: async () => {} };
  const resource = await resourceOf(config);
  const spans = config.traces ? await tracerProvider(config.traces, resource) : undefined;
  const meters = config.metrics ? await meterProvider(config.metrics, resource) : undefined;
  const tracer = otelTracer({
    ...(spans ? { tracer: spans.getTracer('logbook'), flush: () => spans.forceFlush() } : { spans: false }),
    ...(meters ? { meter: meters.getMeter('logbook') } : {}),
    ...(options.payloads ? { payloads: true } : {}),
    ...(options.warn ? { warn: options.warn } : {}),
  });
  // A flush with nothing new since the last one sends nothing (an invocation that called no model).
  let recorded = false;
  const committed = tracer.committed;
  return {
    ...tracer,
    ...(committed
      ? {
          committed: (committedSpans: Parameters<typeof committed>[0]) => {
            committed(committedSpans);
            recorded ||= committedSpans.some((s) => s.kind === 'client');
          },
        }
      : {}),
    ...(config.traces ? { traces: config.traces } : {}),
    ...(config.metrics ? { metrics: config.metrics } : {}),
    flushMetrics: async () => {
      if (!meters || !recorded) return;
      recorded = false;
      await meters.forceFlush();
    },
    shutdown: async () => {
      await Promise.all([spans?.shutdown(), meters?.shutdown()]);
    },
  };
}

async function resourceOf(config: OtelConfig) {
  const { defaultResource, resourceFromAttributes } = await import('@opentelemetry/resources');
  // The SDK's own attributes (telemetry.sdk.*) under what the variables say.
  return defaultResource().merge(resourceFromAttributes({ 'service.instance.id': randomUUID(), ...config.resource }));
}

type Resource = Awaited<ReturnType<typeof resourceOf>>;

async function tracerProvider(target: OtlpTarget, resource: Resource) {
  const { BasicTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const exporterConfig = { url: target.url, headers: target.headers };
  const exporter =
    target.protocol === 'http/json'
      ? new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter(exporterConfig)
      : new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter(exporterConfig);
  return new BasicTracerProvider({ resource, idGenerator: new LogbookIdGenerator(), spanProcessors: [new BatchSpanProcessor(exporter)] });
}

async function meterProvider(target: NonNullable<OtelConfig['metrics']>, resource: Resource) {
  const [{ MeterProvider, PeriodicExportingMetricReader }, http] = await Promise.all([
    import('@opentelemetry/sdk-metrics'),
    import('@opentelemetry/exporter-metrics-otlp-http'),
  ]);
  const preference = http.AggregationTemporalityPreference;
  const exporterConfig = {
    url: target.url,
    headers: target.headers,
    temporalityPreference:
      target.temporality === 'delta' ? preference.DELTA : target.temporality === 'lowmemory' ? preference.LOWMEMORY : preference.CUMULATIVE,
  };
  const exporter =
    target.protocol === 'http/json'
      ? new http.OTLPMetricExporter(exporterConfig)
      : new (await import('@opentelemetry/exporter-metrics-otlp-proto')).OTLPMetricExporter(exporterConfig);
  const reader = new PeriodicExportingMetricReader({
    exporter,
    exportIntervalMillis: target.intervalMs,
    exportTimeoutMillis: Math.min(target.timeoutMs, target.intervalMs),
  });
  return new MeterProvider({ resource, readers: [reader] });
}
