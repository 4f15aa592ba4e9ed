import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otlpTracing, rootSpanIdOf, traceIdOf } from 'logbook/engine';
import { parseOtlp } from '../../dev/cli/dev-command.js';
import { spanIdOf, type TraceSpan } from '../../lib/engine/tracing/trace-span.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';

let receiver: OtlpReceiver;
let vendor: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
  // A vendor-style receiver under a base path (…/otlp/v1/traces).
  vendor = await startOtlpReceiver('/otlp');
});
afterAll(async () => {
  await receiver.close();
  await vendor.close();
});

const run = { tenant: 't', runId: 'r-1' };
const root = { traceId: traceIdOf(run), spanId: rootSpanIdOf(run), name: 'invoke_agent a', kind: 'internal' as const, start: 1_000, end: 2_000, attributes: { 'gen_ai.operation.name': 'invoke_agent' } };
const chat: TraceSpan = {
  traceId: traceIdOf(run),
  spanId: spanIdOf(run, 'model', 2),
  parentSpanId: root.spanId,
  name: 'chat m',
  kind: 'client',
  start: 1_000,
  end: 1_400,
  attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'logbook.scripted', 'gen_ai.request.model': 'm', 'gen_ai.usage.input_tokens': 40, 'gen_ai.usage.output_tokens': 9 },
};
const since = (r: OtlpReceiver) => ({ spans: r.spans.length, metrics: r.metrics.length, log: r.log.length });

describe('otlpTracing: the SDK as Logbook sets it up from the standard variables', () => {
  it.each([
    ['http/json', 'json'],
    ['http/protobuf', 'protobuf'],
    [undefined, 'protobuf'],
  ] as const)('OTEL_EXPORTER_OTLP_PROTOCOL=%s sends %s, with the ids Logbook chose and the service name', async (protocol, encoding) => {
    const before = since(receiver);
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: `svc-${encoding}`, ...(protocol ? { OTEL_EXPORTER_OTLP_PROTOCOL: protocol } : {}) };
    const tracing = await otlpTracing({ env });
    tracing.record([root, { ...root, spanId: 'aaaaaaaaaaaaaaaa', parentSpanId: root.spanId, name: 'logbook.step', attributes: {} }]);
    await tracing.flush();
    await tracing.shutdown();
    const got = receiver.spans.slice(before.spans);
    expect(got.map((s) => [s.name, s.traceId, s.spanId, s.parentSpanId, s.encoding])).toEqual([
      ['invoke_agent a', root.traceId, root.spanId, undefined, encoding],
      ['logbook.step', root.traceId, 'aaaaaaaaaaaaaaaa', root.spanId, encoding],
    ]);
    expect(got[0]?.startNs).toBe(1_000_000_000n);
    expect(got[0]?.endNs).toBe(2_000_000_000n);
    expect(got[0]?.resource).toMatchObject({ 'service.name': `svc-${encoding}`, 'service.instance.id': expect.any(String), 'telemetry.sdk.language': 'nodejs' });
    // Metrics were not asked for: nothing reached /v1/metrics.
    expect(receiver.log.slice(before.log).map((r) => r.path)).toEqual(['/v1/traces']);
  });

  it('the traces endpoint as it is, its headers merged over the generic ones, OTEL_RESOURCE_ATTRIBUTES on the resource', async () => {
    const before = since(vendor);
    const tracing = await otlpTracing({
      env: {
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${vendor.url}/v1/traces`,
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9/never',
        OTEL_EXPORTER_OTLP_HEADERS: 'x-team=generic,x-api-key=generic',
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-api-key=k%3D1',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=staging,service.name=from-attributes',
      },
    });
    tracing.record([root]);
    await tracing.flush();
    await tracing.shutdown();
    const [request] = vendor.log.slice(before.log);
    expect(request).toMatchObject({ path: '/otlp/v1/traces', headers: { 'x-team': 'generic', 'x-api-key': 'k=1' } });
    expect(vendor.spans.at(-1)?.resource).toMatchObject({ 'service.name': 'from-attributes', 'deployment.environment.name': 'staging' });
  });

  it.each(['http/json', 'http/protobuf'] as const)('OTEL_METRICS_EXPORTER=otlp (%s): the GenAI histograms at /v1/metrics, flushed on demand', async (protocol) => {
    const before = since(receiver);
    const tracing = await otlpTracing({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_METRICS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: protocol, OTEL_SERVICE_NAME: 'svc-m' },
    });
    expect(tracing.metrics?.url).toBe(`${receiver.url}/v1/metrics`);
    tracing.committed?.([chat]);
    await tracing.flushMetrics();
    const points = receiver.metrics.slice(before.metrics);
    // Nothing recorded since: the next invocation's flush sends no request.
    const requests = receiver.log.length;
    await tracing.flushMetrics();
    expect(receiver.log.length).toBe(requests);
    await tracing.shutdown();
    expect(points.map((p) => [p.name, p.unit, p.attributes['gen_ai.token.type'], p.count, p.sum, p.encoding]).sort()).toEqual(
      [
        ['gen_ai.client.operation.duration', 's', undefined, 1, 0.4, protocol === 'http/json' ? 'json' : 'protobuf'],
        ['gen_ai.client.token.usage', '{token}', 'input', 1, 40, protocol === 'http/json' ? 'json' : 'protobuf'],
        ['gen_ai.client.token.usage', '{token}', 'output', 1, 9, protocol === 'http/json' ? 'json' : 'protobuf'],
      ].sort(),
    );
    expect(points[0]).toMatchObject({
      temporality: 2,
      scope: 'logbook',
      resource: { 'service.name': 'svc-m' },
      attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'logbook.scripted', 'gen_ai.system': 'logbook.scripted', 'gen_ai.request.model': 'm' },
    });
    expect(points.find((p) => p.name === 'gen_ai.client.token.usage')?.explicitBounds.slice(0, 3)).toEqual([1, 4, 16]);
  });

  it('metrics alone (OTEL_TRACES_EXPORTER=none): no span request, the metrics still go; the delta preference is honoured', async () => {
    const before = since(receiver);
    const tracing = await otlpTracing({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: 'delta' },
      metrics: true,
    });
    expect(tracing.traces).toBeUndefined();
    tracing.record([root]);
    tracing.committed?.([chat]);
    await tracing.flush();
    await tracing.flushMetrics();
    await tracing.shutdown();
    expect(receiver.log.slice(before.log).map((r) => r.path)).toEqual(['/v1/metrics']);
    expect(receiver.metrics.slice(before.metrics).map((p) => p.temporality)).toEqual([1, 1, 1]);
  });

  it('OTEL_SDK_DISABLED=true: nothing is set up and nothing is sent, whatever else says on', async () => {
    const before = since(receiver);
    const warnings: string[] = [];
    const tracing = await otlpTracing({
      endpoint: receiver.url,
      metrics: true,
      env: { OTEL_SDK_DISABLED: 'TRUE', OTEL_TRACES_EXPORTER: 'otlp', OTEL_METRICS_EXPORTER: 'otlp' },
      warn: (m) => warnings.push(m),
    });
    expect([tracing.traces, tracing.metrics, tracing.committed]).toEqual([undefined, undefined, undefined]);
    tracing.record([root]);
    await tracing.flush();
    await tracing.flushMetrics();
    await tracing.shutdown();
    expect(since(receiver)).toEqual(before);
    expect(warnings).toEqual([]);
  });

  it('gRPC is not offered: one warning line, that signal off, never a throw', async () => {
    const warnings: string[] = [];
    const tracing = await otlpTracing({ env: { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, warn: (m) => warnings.push(m) });
    expect(tracing.traces).toBeUndefined();
    expect(warnings).toEqual([expect.stringMatching(/^OTEL_EXPORTER_OTLP_PROTOCOL=grpc: Logbook exports OTLP over HTTP only, so traces are off/)]);
  });

  it('--otlp takes a base URL over HTTP, and says so for a signal path', () => {
    expect(parseOtlp('http://127.0.0.1:4318')).toBe('http://127.0.0.1:4318');
    expect(parseOtlp('https://c.example.com/otlp')).toBe('https://c.example.com/otlp');
    expect(() => parseOtlp('127.0.0.1:4318')).toThrow(/http/);
    expect(() => parseOtlp('grpc://127.0.0.1:4317')).toThrow(/OTLP over HTTP/);
    expect(() => parseOtlp('http://127.0.0.1:4318/v1/traces')).toThrow(/base URL \(e\.g\. http:\/\/127\.0\.0\.1:4318\): \/v1\/traces and \/v1\/metrics are appended/);
  });
});
