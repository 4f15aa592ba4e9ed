import { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit, Metrics } from '@aws-lambda-powertools/metrics';
import type { EngineLogger, EngineMetrics } from '../engine/engine.js';

export const METRICS_NAMESPACE = 'Logbook';

/**
 * Metric names emitted in EMF under the `Logbook` namespace. The CDK stack alarms on
 * TicksWithoutProgress, InvocationsPerRun and RunsParked.
 */
export const METRIC = {
  Turns: 'Turns',
  ModelLatency: 'ModelLatency',
  ToolLatency: 'ToolLatency',
  InputTokens: 'InputTokens',
  OutputTokens: 'OutputTokens',
  CostUsd: 'CostUsd',
  AppendConflicts: 'AppendConflicts',
  TicksWithoutProgress: 'TicksWithoutProgress',
  InvocationsPerRun: 'InvocationsPerRun',
  RunsParked: 'RunsParked',
  MalformedTicks: 'MalformedTicks',
  RunsStarted: 'RunsStarted',
  /** Agent Run Requested events dropped because they can never start a run (bad detail or input, instructions that threw). */
  RunRequestsRejected: 'RunRequestsRejected',
  SweepWakeUps: 'SweepWakeUps',
  /** Schedule firings that started nothing (overlap 'skip', an earlier firing's run unfinished). */
  ScheduleFiringsSkipped: 'ScheduleFiringsSkipped',
  /** Chunks of streamed model text written, and writes that failed (streaming stopped for that call). */
  StreamChunks: 'StreamChunks',
  StreamWriteFailures: 'StreamWriteFailures',
  /** Streams ended because text already written would have redacted differently after what followed. */
  StreamRedactionStops: 'StreamRedactionStops',
} as const;
export type MetricName = (typeof METRIC)[keyof typeof METRIC];

/**
 * Fields that may carry payloads (tool output, model text, user input) are never logged, whatever
 * a caller passes: the log line keeps the key with a marker so it is visible that something was
 * withheld.
 */
const WITHHELD = new Set(['output', 'args', 'arguments', 'input', 'result', 'answer', 'text', 'content', 'body', 'detail']);

export function safeFields(fields: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!fields) return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (WITHHELD.has(key)) out[key] = '[withheld]';
    else if (value instanceof Error) out[key] = { name: value.name, message: value.message };
    else out[key] = value;
  }
  return out;
}

/** POWERTOOLS_SERVICE_NAME (set by the CDK stack, and what the alarms select) wins over the default. */
const service = (fallback: string) => process.env.POWERTOOLS_SERVICE_NAME ?? fallback;

type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'CRITICAL' | 'SILENT';

export function createLogger(serviceName: string, logLevel = process.env.POWERTOOLS_LOG_LEVEL): Logger {
  return new Logger({ serviceName: service(serviceName), logLevel: (logLevel as LogLevel | undefined) ?? 'INFO' });
}

/** Route engine log lines to Powertools; a `seq` field also becomes a key of later lines. */
export function engineLogger(logger: Logger): EngineLogger {
  const emit = (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => {
    const safe = safeFields(fields);
    if (typeof safe.seq === 'number') logger.appendKeys({ seq: safe.seq });
    logger[level](message, safe);
  };
  return {
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  };
}

export function createMetrics(serviceName: string): Metrics {
  return new Metrics({ namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? METRICS_NAMESPACE, serviceName: service(serviceName) });
}

export function addCount(metrics: Metrics, name: MetricName, value = 1): void {
  metrics.addMetric(name, MetricUnit.Count, value);
}

/** The engine's per-turn measurements as EMF metrics; published once per invocation. */
export function engineMetrics(metrics: Metrics): EngineMetrics {
  return {
    count: (name, value = 1) => addCount(metrics, name, value),
    duration: (name, ms) => metrics.addMetric(name, MetricUnit.Milliseconds, ms),
    cost: (usd) => metrics.addMetric(METRIC.CostUsd, MetricUnit.NoUnit, usd),
  };
}

/** Flush stored metrics without throwing when there are none. */
export function flushMetrics(metrics: Metrics): void {
  if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
}
