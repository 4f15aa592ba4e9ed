import type { Attributes, Histogram, Meter } from '@opentelemetry/api';
import { GEN_AI, type TraceSpan } from './trace-span.js';

/**
 * The OpenTelemetry GenAI client metrics (semantic conventions, development status, as of 1.45.0:
 * the names test/unit/tracing compares with @opentelemetry/semantic-conventions' incubating ones).
 */
export const GEN_AI_METRICS = {
  tokenUsage: 'gen_ai.client.token.usage',
  operationDuration: 'gen_ai.client.operation.duration',
} as const;

/** The bucket boundaries the conventions advise for each histogram. */
export const TOKEN_USAGE_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
export const DURATION_BUCKETS_S = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];

/** What one model call contributes: its duration, and its tokens when it answered. */
export interface GenAiPoint {
  /** The call's chat span (trace id and span id: a hash of the run and its model_started). */
  key: string;
  attributes: Record<string, string>;
  durationS: number;
  tokens?: { input: number; output: number };
}

/**
 * The points of the chat spans among `spans` (the projection of the log the spans are): a call
 * that answered gives its duration and its input and output tokens; one that failed its duration
 * with `error.type`; one left open by a dead worker (`error.type` no_response) nothing, since its
 * end is when the next worker found it, not when a call ended, and no usage came back.
 */
export function genAiPoints(spans: readonly TraceSpan[]): GenAiPoint[] {
  const points: GenAiPoint[] = [];
  for (const s of spans) {
    const a = s.attributes;
    if (s.kind !== 'client' || a[GEN_AI.operation] !== 'chat' || a['error.type'] === 'no_response') continue;
    const provider = String(a[GEN_AI.provider] ?? '');
    const attributes: Record<string, string> = {
      [GEN_AI.operation]: 'chat',
      [GEN_AI.provider]: provider,
      // The attribute the conventions used before gen_ai.provider.name (1.36 and earlier): dashboards built on it keep working.
      'gen_ai.system': provider,
      [GEN_AI.requestModel]: String(a[GEN_AI.requestModel] ?? ''),
      ...(typeof a['error.type'] === 'string' ? { 'error.type': a['error.type'] } : {}),
    };
    const input = a[GEN_AI.inputTokens];
    const output = a[GEN_AI.outputTokens];
    points.push({
      key: `${s.traceId}/${s.spanId}`,
      attributes,
      durationS: Math.max(0, s.end - s.start) / 1000,
      ...(typeof input === 'number' && typeof output === 'number' ? { tokens: { input, output } } : {}),
    });
  }
  return points;
}

/** Keys remembered per process: far more model calls than one container sees between two head writes of a run. */
const REMEMBERED_KEYS = 4096;

/**
 * Records GenAI points on a meter, each model call once. Which calls a step counts is the
 * engine's rule (StepTrace.committed): the spans of a round once the head covers their events, so
 * a worker that dies before that leaves them to the next one and a worker that got that far never
 * has them projected again. The keys are the second guard: a projection handed over twice in one
 * process (the same chat span id) is counted once.
 */
export class GenAiMetrics {
  private readonly tokens: Histogram;
  private readonly duration: Histogram;
  private readonly seen = new Set<string>();

  constructor(meter: Meter) {
    this.tokens = meter.createHistogram(GEN_AI_METRICS.tokenUsage, {
      description: 'Number of input and output tokens used.',
      unit: '{token}',
      advice: { explicitBucketBoundaries: TOKEN_USAGE_BUCKETS },
    });
    this.duration = meter.createHistogram(GEN_AI_METRICS.operationDuration, {
      description: 'GenAI operation duration.',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS_S },
    });
  }

  record(spans: readonly TraceSpan[]): number {
    let recorded = 0;
    for (const p of genAiPoints(spans)) {
      if (this.seen.has(p.key)) continue;
      this.remember(p.key);
      this.duration.record(p.durationS, p.attributes as Attributes);
      // Only a call that answered has usage (and so never an error.type).
      if (p.tokens) {
        this.tokens.record(p.tokens.input, { ...p.attributes, 'gen_ai.token.type': 'input' });
        this.tokens.record(p.tokens.output, { ...p.attributes, 'gen_ai.token.type': 'output' });
      }
      recorded++;
    }
    return recorded;
  }

  private remember(key: string): void {
    this.seen.add(key);
    if (this.seen.size <= REMEMBERED_KEYS) return;
    // Sets iterate in insertion order: the oldest key goes first.
    const oldest = this.seen.values().next().value;
    if (oldest !== undefined) this.seen.delete(oldest);
  }
}
