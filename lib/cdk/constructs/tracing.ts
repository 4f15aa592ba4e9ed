/**
 * The worker's OpenTelemetry tracing (engine/tracing): where its spans go and what that needs.
 * Off unless set. Either an OTLP/HTTP endpoint the worker reaches itself (a vendor's collector,
 * Honeycomb, Grafana Cloud, a collector you run), or the ADOT collector Lambda layer, which
 * listens on localhost:4318 inside the sandbox and forwards per its collector config (X-Ray by
 * default): see docs/guides/tracing.md.
 */
export interface LogbookTracing {
  /**
   * OTLP/HTTP base URL, OTEL_EXPORTER_OTLP_ENDPOINT (`/v1/traces` and `/v1/metrics` are appended).
   * Default with `adotLayerArn`: http://localhost:4318, the layer's collector.
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
  /** OTEL_RESOURCE_ATTRIBUTES (`deployment.environment.name`, `service.version`, ...): values are percent-encoded. */
  readonly resourceAttributes?: Readonly<Record<string, string>>;
  /**
   * The GenAI client metrics (`gen_ai.client.token.usage`, `gen_ai.client.operation.duration`),
   * OTEL_METRICS_EXPORTER=otlp, to the same collector (`/v1/metrics`). Default false.
   */
  readonly metrics?: boolean;
}

/** The X-Ray write actions the ADOT collector's default config (awsxray exporter) calls. */
export const XRAY_WRITE_ACTIONS = ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'] as const;

/** The worker environment a tracing option sets (checked against the env schema by the caller). */
export function tracingEnvironment(tracing: LogbookTracing, serviceName: string): Record<string, string> {
  const endpoint = tracing.endpoint ?? (tracing.adotLayerArn ? 'http://localhost:4318' : undefined);
  if (!endpoint) throw new Error('tracing: set an OTLP endpoint, or adotLayerArn for the ADOT collector layer');
  const attributes = Object.entries(tracing.resourceAttributes ?? {});
  for (const [key] of attributes) if (!/^[\w.-]+$/.test(key)) throw new Error(`tracing.resourceAttributes: "${key}" is not a resource attribute name`);
  // The standard variables, which the worker reads as any OpenTelemetry SDK would (engine/tracing/otel-env.ts).
  return {
    OTEL_TRACES_EXPORTER: 'otlp',
    ...(tracing.metrics ? { OTEL_METRICS_EXPORTER: 'otlp' } : {}),
    LOGBOOK_TRACING_PAYLOADS: tracing.payloads ? 'true' : 'false',
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: tracing.protocol ?? 'http/protobuf',
    OTEL_SERVICE_NAME: tracing.serviceName ?? serviceName,
    ...(attributes.length > 0 ? { OTEL_RESOURCE_ATTRIBUTES: attributes.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join(',') } : {}),
    ...(tracing.headers ? { OTEL_EXPORTER_OTLP_HEADERS: tracing.headers } : {}),
    ...(tracing.adotLayerArn && tracing.collectorConfigUri ? { OPENTELEMETRY_COLLECTOR_CONFIG_URI: tracing.collectorConfigUri } : {}),
  };
}
