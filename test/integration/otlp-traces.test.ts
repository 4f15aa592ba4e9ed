import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { LogbookIdGenerator, otelTracer, traceIdOf } from 'logbook/engine';
import { formatHarnessReport, runCrashHarness } from 'logbook/testing';
import { supportScenario, type SupportWorld } from '../../examples/support-agent/support-world.js';
import { logOf, traceFailures } from '../unit/tracing/trace-invariants.js';
import { startOtlpReceiver, type OtlpReceiver, type OtlpSpan } from './otlp-receiver.js';

const run = { tenant: supportScenario.request.tenant, runId: supportScenario.request.runId ?? 'harness-run' };
let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver.close();
});

/** One SDK per world, as one per process would be: its resource names the world, so the receiver can tell them apart. */
function worldTracer(world: number) {
  const url = `${receiver.url}/v1/traces`;
  // Half the worlds export OTLP JSON, half protobuf: the receiver decodes both.
  const exporter = world % 2 === 0 ? new JsonExporter({ url }) : new ProtoExporter({ url });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'logbook-test', 'logbook.test.world': world }),
    idGenerator: new LogbookIdGenerator(),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  return { provider, tracer: otelTracer({ tracer: provider.getTracer('logbook'), flush: () => provider.forceFlush() }) };
}

const asReceived = (s: OtlpSpan) => ({ ...s, ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}) });

describe('OpenTelemetry traces through a real OTLP/HTTP receiver', () => {
  it('a run crashed and resumed at every point is one trace: each model call and tool attempt once, every parent there', async () => {
    const worlds: { world: SupportWorld; provider: BasicTracerProvider }[] = [];
    const report = await runCrashHarness(
      {
        ...supportScenario,
        world: () => {
          const { provider, tracer } = worldTracer(worlds.length);
          const world = { ...supportScenario.world(), tracer };
          worlds.push({ world, provider });
          return world;
        },
      },
      { doubleCrashStride: 0 },
    );
    expect(report.failed, formatHarnessReport(report)).toBe(0);
    for (const { provider } of worlds) await provider.shutdown(); // sends what the last steps left buffered

    expect(receiver.requests.json).toBeGreaterThan(0);
    expect(receiver.requests.protobuf).toBeGreaterThan(0);
    const byWorld = new Map<number, OtlpSpan[]>();
    for (const s of receiver.spans) {
      const w = Number(s.resource['logbook.test.world']);
      byWorld.set(w, [...(byWorld.get(w) ?? []), s]);
    }
    let checked = 0;
    for (const [i, { world }] of worlds.entries()) {
      const log = await logOf(world, run);
      const spans = byWorld.get(i) ?? [];
      expect(traceFailures(spans.map(asReceived), log, run), `world ${i}`).toEqual([]);
      expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([traceIdOf(run)]));
      checked++;
    }
    expect(checked).toBeGreaterThan(40);

    // What the spans say (GenAI semantic conventions), as decoded from the wire.
    const all = receiver.spans;
    const chat = all.find((s) => s.name.startsWith('chat '));
    expect(chat?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'logbook.scripted',
      'gen_ai.request.model': expect.any(String),
      'gen_ai.usage.input_tokens': expect.any(Number),
      'gen_ai.usage.output_tokens': expect.any(Number),
      'gen_ai.response.finish_reasons': [expect.any(String)],
      'logbook.cost_usd': expect.any(Number),
    });
    expect(chat?.kind).toBe(3); // SPAN_KIND_CLIENT
    const outcomes = new Set(all.filter((s) => s.name.startsWith('execute_tool ')).map((s) => s.attributes['logbook.tool.outcome']));
    // The support agent's policies at the crash points: results, crashed attempts, verify() and a person.
    for (const o of ['ok', 'unknown', 'verified', 'escalated']) expect(outcomes, o).toContain(o);
    const tool = all.find((s) => s.name.startsWith('execute_tool '));
    expect(tool?.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.call.id': expect.any(String),
      'logbook.tool.policy': expect.any(String),
      'logbook.tool.attempt': expect.any(Number),
      'logbook.tool.idempotency_key': expect.stringContaining(`${run.tenant}:${run.runId}:`),
    });
    // No payloads unless the application opts in.
    expect(all.some((s) => 'gen_ai.tool.call.arguments' in s.attributes || 'gen_ai.output.messages' in s.attributes)).toBe(false);
    expect(all.filter((s) => s.name === 'logbook.step' && s.attributes['logbook.step.recovered'] === true).length).toBeGreaterThan(0);
    // A step's claim, load and turns are its span's events (and durations); its release, a span after it.
    const step = all.find((s) => s.name === 'logbook.step' && s.attributes['logbook.step.recovered'] === undefined);
    for (const phase of ['claim', 'load', 'turns']) expect(step?.attributes[`logbook.step.${phase}_ms`], phase).toEqual(expect.any(Number));
    expect(step?.events).toEqual(['logbook.claim', 'logbook.load', 'logbook.turns']);
    expect(all.some((s) => s.name === 'logbook.release')).toBe(true);

    // A sample for the README: the spans of one crashed-and-resumed world, as the receiver got them.
    const sampleWorld = [...byWorld.entries()].find(([, spans]) => spans.some((s) => s.attributes['logbook.step.recovered'] === true));
    if (sampleWorld) console.info(sampleOf(sampleWorld[1]));
  }, 300_000);
});

/** The spans of one trace as an indented tree (distinct ids; duration in ms of the manual clock). */
function sampleOf(spans: OtlpSpan[]): string {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const children = new Map<string, OtlpSpan[]>();
  for (const s of byId.values()) children.set(s.parentSpanId ?? '', [...(children.get(s.parentSpanId ?? '') ?? []), s]);
  const keys = ['gen_ai.request.model', 'gen_ai.usage.input_tokens', 'gen_ai.usage.output_tokens', 'gen_ai.tool.call.id', 'logbook.tool.attempt', 'logbook.tool.outcome', 'logbook.step.epoch', 'logbook.step.recovered'];
  const lines: string[] = [`trace ${spans[0]?.traceId}`];
  const walk = (parent: string, depth: number) => {
    for (const s of (children.get(parent) ?? []).sort((a, b) => Number(a.startNs - b.startNs))) {
      const attrs = keys.filter((k) => k in s.attributes).map((k) => `${k.replace(/^(gen_ai|logbook)\./, '')}=${String(s.attributes[k])}`);
      lines.push(`${'  '.repeat(depth)}${s.name} [${s.spanId}] ${attrs.join(' ')}${s.status.code === 2 ? ` ERROR ${s.status.message ?? ''}` : ''}`);
      walk(s.spanId, depth + 1);
    }
  };
  walk('', 0);
  return lines.join('\n');
}
