import type { EngineTracer } from './engine-tracer.js';
import { LogbookIdGenerator, otelTracer } from './otel-tracer.js';

export interface OtlpTracingOptions {
  /** Where OTEL_* settings are read (default process.env). */
  env?: Record<string, string | undefined>;
  /**
   * The collector (`logbook dev --otlp URL`): a base URL gets `/v1/traces` appended. Default: the
   * exporter's own reading of OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT
   * (http://localhost:4318, where the ADOT Lambda layer's collector listens).
   */
  endpoint?: string;
  /** Default: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, then OTEL_EXPORTER_OTLP_PROTOCOL, then http/protobuf. */
  protocol?: OtlpProtocol;
  /** service.name when OTEL_SERVICE_NAME does not say (default `logbook`). */
  serviceName?: string;
  /** Put prompt and tool payloads (redacted as logged) on spans. */
  payloads?: boolean;
  /** Warnings (an exporter that cannot send); default: none. */
  warn?: (message: string) => void;
}

export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** An EngineTracer that owns its SDK: shut it down when the process is done with it. */
export interface OtlpTracing extends EngineTracer {
  shutdown(): Promise<void>;
}

/**
 * The OpenTelemetry SDK as Logbook sets it up (the local stack, and Lambda when tracing is on):
 * a tracer provider with LogbookIdGenerator, a batch processor and the OTLP/HTTP exporter of the
 * configured protocol, the resource from OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES. Loaded on
 * demand: a process with tracing off never loads the SDK. gRPC is not offered (OTLP over HTTP only).
 */
export async function otlpTracing(options: OtlpTracingOptions = {}): Promise<OtlpTracing> {
  const env = options.env ?? process.env;
  const protocol = options.protocol ?? protocolOf(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL);
  const [{ BasicTracerProvider, BatchSpanProcessor }, { detectResources, envDetector, resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
  ]);
  const config = options.endpoint ? { url: tracesUrl(options.endpoint) } : {};
  const exporter =
    protocol === 'http/json'
      ? new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter(config)
      : new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter(config);
  const resource = resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME ?? options.serviceName ?? 'logbook' }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  const provider = new BasicTracerProvider({ resource, idGenerator: new LogbookIdGenerator(), spanProcessors: [new BatchSpanProcessor(exporter)] });
  const tracer = otelTracer({
    tracer: provider.getTracer('logbook'),
    flush: () => provider.forceFlush(),
    ...(options.payloads ? { payloads: true } : {}),
    ...(options.warn ? { warn: options.warn } : {}),
  });
  return { ...tracer, shutdown: () => provider.shutdown() };
}

function protocolOf(value: string | undefined): OtlpProtocol {
  const v = value?.trim();
  if (!v || v === 'http/protobuf') return 'http/protobuf';
  if (v === 'http/json') return 'http/json';
  throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL=${v} is not supported: Logbook exports OTLP over HTTP (http/protobuf or http/json)`);
}

/** `http://host:4318` → `http://host:4318/v1/traces`; a URL with a path is taken as it is. */
export function tracesUrl(endpoint: string): string {
  const url = new URL(endpoint);
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/v1/traces';
  return url.toString();
}
