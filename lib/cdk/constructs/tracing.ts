/**
 * The worker's OpenTelemetry tracing (engine/tracing): where its spans go and what that needs.
 * Off unless set. Either an OTLP/HTTP endpoint the worker reaches itself (a vendor's collector,
 * Honeycomb, Grafana Cloud, a collector you run), or the ADOT collector Lambda layer, which
 * listens on localhost:4318 inside the sandbox and forwards per its collector config (X-Ray by
 * default): see docs/guides/tracing.md.
 */
export interface LogbookTracing {
  /**
   * OTLP/HTTP base URL (`/v1/traces` is appended by the exporter). Default with `adotLayerArn`:
   * http://localhost:4318, the layer's collector.
   */
  readonly endpoint?: string;
  /** Default http/protobuf. */
  readonly protocol?: 'http/protobuf' | 'http/json';
  /**
   * The ADOT collector layer for the worker's architecture (arm64), e.g.
   * `arn:aws:lambda:<region>:901920570463:layer:aws-otel-collector-arm64-ver-<version>:<n>`.
   * The collector-only layer: Logbook brings its own SDK (the layer with the Node SDK would also
   * instrument the handler with spans that have random ids).
   */
  readonly adotLayerArn?: string;
  /**
   * A collector config in the bundle or on S3 (OPENTELEMETRY_COLLECTOR_CONFIG_URI), with the layer;
   * default the layer's own (OTLP in, X-Ray out).
   */
  readonly collectorConfigUri?: string;
  /**
   * IAM actions the collector's exporter needs, on `*`. Default with the layer: the X-Ray write
   * actions of its default config (xray:PutTraceSegments, xray:PutTelemetryRecords); none without.
   */
  readonly actions?: readonly string[];
  /**
   * OTEL_EXPORTER_OTLP_HEADERS (`key=value,...`), e.g. a vendor's ingest key. Lambda shows it to
   * anyone who can read the function's configuration: prefer a collector that holds the key.
   */
  readonly headers?: string;
  /** Prompt and tool payloads on spans, redacted as the log holds them. Default false. */
  readonly payloads?: boolean;
  /** OTEL_SERVICE_NAME; default the worker's service name. */
  readonly serviceName?: string;
}

/** The X-Ray write actions the ADOT collector's default config (awsxray exporter) calls. */
export const XRAY_WRITE_ACTIONS = ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'] as const;

/** The worker environment a tracing option sets (checked against the env schema by the caller). */
export function tracingEnvironment(tracing: LogbookTracing, serviceName: string): Record<string, string> {
  const endpoint = tracing.endpoint ?? (tracing.adotLayerArn ? 'http://localhost:4318' : undefined);
  if (!endpoint) throw new Error('tracing: set an OTLP endpoint, or adotLayerArn for the ADOT collector layer');
  return {
    LOGBOOK_TRACING: 'otlp',
    LOGBOOK_TRACING_PAYLOADS: tracing.payloads ? 'true' : 'false',
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: tracing.protocol ?? 'http/protobuf',
    OTEL_SERVICE_NAME: tracing.serviceName ?? serviceName,
    ...(tracing.headers ? { OTEL_EXPORTER_OTLP_HEADERS: tracing.headers } : {}),
    ...(tracing.adotLayerArn && tracing.collectorConfigUri ? { OPENTELEMETRY_COLLECTOR_CONFIG_URI: tracing.collectorConfigUri } : {}),
  };
}
