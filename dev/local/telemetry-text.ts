import type { LocalTelemetry } from './stack.js';

/**
 * What `logbook dev` and `npm start` print about OpenTelemetry: where the workers' spans and
 * metrics go, and each warning about the OTEL_* variables on a line of its own (the workers log
 * them too, but in the worker log, where nobody starting a stack looks).
 */
export function telemetryLines(telemetry: LocalTelemetry): string[] {
  const lines: string[] = [];
  if (telemetry.traces) lines.push(`Traces:   every step's spans to ${telemetry.traces.url} (OTLP/HTTP, ${telemetry.traces.protocol})`);
  if (telemetry.metrics) lines.push(`Metrics:  GenAI token usage and call duration to ${telemetry.metrics.url} (OTLP/HTTP, ${telemetry.metrics.protocol})`);
  for (const w of telemetry.warnings) lines.push(`warning: OpenTelemetry: ${w}`);
  return lines;
}
