/**
 * The standard OpenTelemetry variables as Logbook reads them (OpenTelemetry specification:
 * "Environment Variable Specification" and "OTLP Exporter Configuration"). Pure: the environment
 * goes in, what is on, where it goes and what was wrong with it come out. otlp-setup.ts builds the
 * SDK from the result; the Lambda wiring and the local stack decide with it whether to load it.
 */

/** OTLP over HTTP, the two encodings Logbook exports (gRPC is not offered). */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** Where one signal goes. */
export interface OtlpTarget {
  /** The full URL the requests are POSTed to (`…/v1/traces`, `…/v1/metrics`). */
  url: string;
  protocol: OtlpProtocol;
  /** OTEL_EXPORTER_OTLP_HEADERS merged with the signal's own (its keys win). Never logged. */
  headers: Record<string, string>;
}

export type MetricsTemporality = 'cumulative' | 'delta' | 'lowmemory';

export interface OtelConfig {
  /** Set when spans are exported. */
  traces?: OtlpTarget;
  /** Set when the GenAI metrics are exported. */
  metrics?: OtlpTarget & { temporality: MetricsTemporality; intervalMs: number; timeoutMs: number };
  /** Resource attributes: OTEL_RESOURCE_ATTRIBUTES, with service.name from OTEL_SERVICE_NAME or the default. */
  resource: Record<string, string>;
  /** One line per setting that was ignored or that turned a signal off (no value of a header is ever in one). */
  warnings: string[];
}

/** What the code (not the environment) says; each is below the standard variable that covers it. */
export interface OtelSwitches {
  /**
   * Logbook's own switch for spans: LOGBOOK_TRACING, `logbook dev --otlp`, the construct's
   * `tracing`, a call of otlpTracing. Below OTEL_TRACES_EXPORTER; unset, spans are on when an OTLP
   * endpoint variable is set.
   */
  traces?: boolean;
  /** The explicit metrics option (`metrics: true`). Below OTEL_METRICS_EXPORTER; unset, metrics are off. */
  metrics?: boolean;
  /** A collector's base URL given in code: used as OTEL_EXPORTER_OTLP_ENDPOINT is, and above every endpoint variable. */
  endpoint?: string;
  /** Above the protocol variables. */
  protocol?: OtlpProtocol;
  /** service.name when neither OTEL_SERVICE_NAME nor OTEL_RESOURCE_ATTRIBUTES names one (default `logbook`). */
  serviceName?: string;
}

type Env = Record<string, string | undefined>;
type Signal = 'traces' | 'metrics';

/** The spec's default collector (OTLP/HTTP), where the ADOT Lambda layer's collector listens. */
export const DEFAULT_OTLP_ENDPOINT = 'http://localhost:4318';

/**
 * Read the standard variables. For each signal, the first rule that applies decides:
 * 1. `OTEL_SDK_DISABLED=true` (any case): everything off, whatever else is set.
 * 2. `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER`: a list with `none` is off, with `otlp` on;
 *    other exporters (console, zipkin, prometheus) are not offered: a warning, and off.
 * 3. The code's switch (`switches.traces`, `switches.metrics`).
 * 4. Spans only: on when `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` is
 *    set (the spec's default exporter is otlp; saying where to send is saying to send). Metrics
 *    stay off unless asked for (rule 2 or 3).
 * 5. Off. (The spec defaults to otlp; Logbook sends nothing to localhost:4318 unasked.)
 * An enabled signal goes to `switches.endpoint` + `/v1/<signal>`, else the signal's endpoint
 * variable as it is, else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/<signal>`, else localhost:4318. Its
 * protocol is `switches.protocol`, else the signal's protocol variable, else the generic one, else
 * http/protobuf; `grpc` turns the signal off with a warning (OTLP over HTTP only). Empty values
 * count as unset, as the spec says.
 */
export function otelConfig(env: Env, switches: OtelSwitches = {}): OtelConfig {
  const warnings: string[] = [];
  const resource = resourceOf(env, switches.serviceName ?? 'logbook', warnings);
  if (sdkDisabled(env, warnings)) return { resource, warnings };
  const config: OtelConfig = { resource, warnings };
  const endpointSet = value(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') !== undefined || value(env, 'OTEL_EXPORTER_OTLP_ENDPOINT') !== undefined;
  if (enabled(env, 'OTEL_TRACES_EXPORTER', switches.traces ?? (endpointSet || undefined), warnings)) {
    const target = targetOf(env, 'traces', switches, warnings);
    if (target) config.traces = target;
  }
  if (enabled(env, 'OTEL_METRICS_EXPORTER', switches.metrics, warnings)) {
    const target = targetOf(env, 'metrics', switches, warnings);
    if (target) {
      config.metrics = {
        ...target,
        temporality: temporalityOf(env, warnings),
        intervalMs: millisOf(env, 'OTEL_METRIC_EXPORT_INTERVAL', 60_000, warnings),
        timeoutMs: millisOf(env, 'OTEL_METRIC_EXPORT_TIMEOUT', 30_000, warnings),
      };
    }
  }
  return config;
}

/** True when OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES names the service (a host's default must not override it). */
export function namesService(env: Env): boolean {
  return value(env, 'OTEL_SERVICE_NAME') !== undefined || 'service.name' in keyValues(value(env, 'OTEL_RESOURCE_ATTRIBUTES'), []);
}

/** `http://host:4318` + traces → `http://host:4318/v1/traces`; a base with a path keeps it (`/otlp` → `/otlp/v1/traces`). */
export function signalUrl(base: string, signal: Signal): string {
  return `${base.endsWith('/') ? base : `${base}/`}v1/${signal}`;
}

const value = (env: Env, name: string): string | undefined => {
  const v = env[name]?.trim();
  return v ? v : undefined;
};

function sdkDisabled(env: Env, warnings: string[]): boolean {
  const v = value(env, 'OTEL_SDK_DISABLED')?.toLowerCase();
  if (v === undefined || v === 'false') return false;
  if (v === 'true') return true;
  warnings.push(`OTEL_SDK_DISABLED=${value(env, 'OTEL_SDK_DISABLED')} is not true or false: taken as false`);
  return false;
}

function enabled(env: Env, name: string, fallback: boolean | undefined, warnings: string[]): boolean {
  const raw = value(env, name);
  if (raw === undefined) return fallback === true;
  const names = [...new Set(raw.split(',').map((n) => n.trim().toLowerCase()))].filter(Boolean);
  if (names.includes('none')) {
    if (names.length > 1) warnings.push(`${name}=${raw}: "none" is listed, so nothing is exported`);
    return false;
  }
  const other = names.filter((n) => n !== 'otlp');
  if (other.length > 0) warnings.push(`${name}: ${other.join(', ')} not offered (Logbook exports otlp only): ignored`);
  return names.includes('otlp');
}

function targetOf(env: Env, signal: Signal, switches: OtelSwitches, warnings: string[]): OtlpTarget | undefined {
  const SIGNAL = signal.toUpperCase();
  const protocolVar = value(env, `OTEL_EXPORTER_OTLP_${SIGNAL}_PROTOCOL`) ? `OTEL_EXPORTER_OTLP_${SIGNAL}_PROTOCOL` : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = switches.protocol ?? value(env, protocolVar) ?? 'http/protobuf';
  if (protocol === 'grpc') {
    warnings.push(`${protocolVar}=grpc: Logbook exports OTLP over HTTP only, so ${signal} are off (use http/protobuf and the collector's port 4318)`);
    return undefined;
  }
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    warnings.push(`${protocolVar}=${protocol} is not http/protobuf, http/json or grpc: ${signal} use http/protobuf`);
  }
  const url = urlOf(env, signal, switches.endpoint, warnings);
  if (!url) return undefined;
  const headers = {
    ...keyValues(value(env, 'OTEL_EXPORTER_OTLP_HEADERS'), warnings, 'OTEL_EXPORTER_OTLP_HEADERS'),
    ...keyValues(value(env, `OTEL_EXPORTER_OTLP_${SIGNAL}_HEADERS`), warnings, `OTEL_EXPORTER_OTLP_${SIGNAL}_HEADERS`),
  };
  return { url, protocol: protocol === 'http/json' ? 'http/json' : 'http/protobuf', headers };
}

function urlOf(env: Env, signal: Signal, codeEndpoint: string | undefined, warnings: string[]): string | undefined {
  const SIGNAL = signal.toUpperCase();
  const candidates: [string, string | undefined, boolean][] = [
    ['the endpoint option', codeEndpoint, true],
    [`OTEL_EXPORTER_OTLP_${SIGNAL}_ENDPOINT`, value(env, `OTEL_EXPORTER_OTLP_${SIGNAL}_ENDPOINT`), false],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', value(env, 'OTEL_EXPORTER_OTLP_ENDPOINT'), true],
    ['the default', DEFAULT_OTLP_ENDPOINT, true],
  ];
  for (const [name, raw, isBase] of candidates) {
    if (raw === undefined) continue;
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      warnings.push(`${name} is not a URL: ignored`);
      continue;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      warnings.push(`${name} is not an http:// or https:// URL (Logbook exports OTLP over HTTP): ignored`);
      continue;
    }
    // A per-signal URL is used as it is (only an empty path becomes `/`, which URL does); a base gets the signal's path.
    return isBase ? signalUrl(raw, signal) : url.toString();
  }
  return undefined;
}

/**
 * `key1=value1,key2=value2` (W3C Baggage without properties), values percent-decoded: the format
 * of the header and resource variables. A malformed entry is skipped with a warning that names
 * the variable and the entry's position, never its text (a header may hold an API key).
 */
function keyValues(raw: string | undefined, warnings: string[], name = 'OTEL_RESOURCE_ATTRIBUTES'): Record<string, string> {
  const out: Record<string, string> = {};
  if (!raw) return out;
  raw.split(',').forEach((entry, i) => {
    if (!entry.trim()) return;
    const eq = entry.indexOf('=');
    const key = eq > 0 ? entry.slice(0, eq).trim() : '';
    let decoded: string | undefined;
    try {
      decoded = eq > 0 ? decodeURIComponent(entry.slice(eq + 1).trim()) : undefined;
    } catch {
      decoded = undefined;
    }
    if (!key || decoded === undefined) warnings.push(`${name}: entry ${i + 1} is not key=value (percent-encoded): skipped`);
    else out[key] = decoded;
  });
  return out;
}

function resourceOf(env: Env, fallbackName: string, warnings: string[]): Record<string, string> {
  const attributes = keyValues(value(env, 'OTEL_RESOURCE_ATTRIBUTES'), warnings);
  const serviceName = value(env, 'OTEL_SERVICE_NAME') ?? attributes['service.name'] ?? fallbackName;
  return { ...attributes, 'service.name': serviceName };
}

function temporalityOf(env: Env, warnings: string[]): MetricsTemporality {
  const raw = value(env, 'OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE');
  const v = raw?.toLowerCase();
  if (v === undefined) return 'cumulative';
  if (v === 'cumulative' || v === 'delta' || v === 'lowmemory') return v;
  warnings.push(`OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE=${raw} is not cumulative, delta or lowmemory: cumulative`);
  return 'cumulative';
}

function millisOf(env: Env, name: string, fallback: number, warnings: string[]): number {
  const raw = value(env, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (Number.isInteger(n) && n > 0) return n;
  warnings.push(`${name}=${raw} is not a positive number of milliseconds: ${fallback}`);
  return fallback;
}
