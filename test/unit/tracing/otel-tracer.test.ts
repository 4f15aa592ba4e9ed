import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as semconv from '@opentelemetry/semantic-conventions/incubating';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { LogbookIdGenerator, otelTracer, rootSpanIdOf, traceIdOf } from 'logbook/engine';
import { GEN_AI } from '../../../lib/engine/tracing/trace-span.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const run = { tenant: 't', runId: 'r' };
const spans = [
  { traceId: traceIdOf(run), spanId: rootSpanIdOf(run), name: 'invoke_agent a', kind: 'internal' as const, start: Date.UTC(2026, 0, 1), end: Date.UTC(2026, 0, 1, 0, 1), attributes: {} },
  { traceId: traceIdOf(run), spanId: '00000000000000aa', parentSpanId: rootSpanIdOf(run), name: 'logbook.step', kind: 'internal' as const, start: Date.UTC(2026, 0, 1), end: Date.UTC(2026, 0, 1, 0, 0, 30), attributes: {}, events: [{ name: 'logbook.claim', at: Date.UTC(2026, 0, 1, 0, 0, 1) }] },
];

function provider(idGenerator?: LogbookIdGenerator) {
  const exporter = new InMemorySpanExporter();
  const p = new BasicTracerProvider({ ...(idGenerator ? { idGenerator } : {}), spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, tracer: p.getTracer('logbook') };
}

describe('otelTracer over @opentelemetry/api', () => {
  it('with LogbookIdGenerator, the SDK keeps the ids, parents, times and events Logbook decided', () => {
    const { exporter, tracer } = provider(new LogbookIdGenerator());
    const warnings: string[] = [];
    otelTracer({ tracer, warn: (m) => warnings.push(m) }).record(spans);
    const [root, step] = exporter.getFinishedSpans();
    expect(root?.spanContext()).toMatchObject({ traceId: traceIdOf(run), spanId: rootSpanIdOf(run) });
    expect(root?.parentSpanContext).toBeUndefined();
    expect(step?.spanContext()).toMatchObject({ traceId: traceIdOf(run), spanId: '00000000000000aa' });
    expect(step?.parentSpanContext?.spanId).toBe(rootSpanIdOf(run));
    expect(step?.startTime).toEqual([Date.UTC(2026, 0, 1) / 1000, 0]);
    expect(step?.events.map((e) => [e.name, e.time])).toEqual([['logbook.claim', [Date.UTC(2026, 0, 1, 0, 0, 1) / 1000, 0]]]);
    expect(warnings).toEqual([]);
  });

  it("without it, the spans still go out, and the host is told once that they will not join their run's trace", () => {
    const { exporter, tracer } = provider();
    const warnings: string[] = [];
    const t = otelTracer({ tracer, warn: (m) => warnings.push(m) });
    t.record(spans);
    t.record(spans);
    expect(exporter.getFinishedSpans()).toHaveLength(4);
    expect(warnings).toEqual([expect.stringContaining('LogbookIdGenerator')]);
  });

  it('names its attributes as the GenAI semantic conventions of @opentelemetry/semantic-conventions do', () => {
    const c = semconv as unknown as Record<string, string>;
    expect(GEN_AI).toEqual({
      operation: c.ATTR_GEN_AI_OPERATION_NAME,
      provider: c.ATTR_GEN_AI_PROVIDER_NAME,
      requestModel: c.ATTR_GEN_AI_REQUEST_MODEL,
      inputTokens: c.ATTR_GEN_AI_USAGE_INPUT_TOKENS,
      outputTokens: c.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
      finishReasons: c.ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
      agentName: c.ATTR_GEN_AI_AGENT_NAME,
      agentId: c.ATTR_GEN_AI_AGENT_ID,
      agentVersion: c.ATTR_GEN_AI_AGENT_VERSION,
      conversationId: c.ATTR_GEN_AI_CONVERSATION_ID,
      toolName: c.ATTR_GEN_AI_TOOL_NAME,
      toolCallId: c.ATTR_GEN_AI_TOOL_CALL_ID,
      toolType: c.ATTR_GEN_AI_TOOL_TYPE,
      toolCallArguments: c.ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
      toolCallResult: c.ATTR_GEN_AI_TOOL_CALL_RESULT,
      outputMessages: c.ATTR_GEN_AI_OUTPUT_MESSAGES,
    });
    expect([c.GEN_AI_OPERATION_NAME_VALUE_CHAT, c.GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL, c.GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT]).toEqual(['chat', 'execute_tool', 'invoke_agent']);
    expect([c.GEN_AI_PROVIDER_NAME_VALUE_AWS_BEDROCK, c.GEN_AI_PROVIDER_NAME_VALUE_OPENAI]).toEqual(['aws.bedrock', 'openai']);
  });

  it('the library imports the SDK only on demand: tracing off never loads it', () => {
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : f.endsWith('.ts') ? [join(dir, f)] : []));
    const staticSdk = files(join(ROOT, 'lib')).filter((f) => /^import [^;]*from '@opentelemetry\/(?!api')/m.test(readFileSync(f, 'utf8')));
    expect(staticSdk).toEqual([]);
    // And the one place that loads it does so with import().
    expect(readFileSync(join(ROOT, 'lib/engine/tracing/otlp-setup.ts'), 'utf8')).toMatch(/import\('@opentelemetry\/sdk-trace-base'\)/);
  });
});
