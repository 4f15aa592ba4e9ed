import type { EngineTracer } from '../../../lib/engine/tracing/engine-tracer.js';
import type { TraceSpan } from '../../../lib/engine/tracing/trace-span.js';

/** Records the spans a world's workers send, as a receiver would get them. */
export function collectTracer(): EngineTracer & { spans: TraceSpan[]; flushes: number } {
  const spans: TraceSpan[] = [];
  const t = {
    spans,
    flushes: 0,
    record: (batch: readonly TraceSpan[]) => void spans.push(...batch.map((s) => structuredClone(s))),
    flush: async () => {
      t.flushes++;
    },
  };
  return t;
}
