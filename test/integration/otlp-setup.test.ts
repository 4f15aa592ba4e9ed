import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otlpTracing, rootSpanIdOf, traceIdOf } from 'logbook/engine';
import { tracesUrl } from '../../lib/engine/tracing/otlp-setup.js';
import { parseOtlp } from '../../dev/cli/dev-command.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver.close();
});

const run = { tenant: 't', runId: 'r-1' };
const root = { traceId: traceIdOf(run), spanId: rootSpanIdOf(run), name: 'invoke_agent a', kind: 'internal' as const, start: 1_000, end: 2_000, attributes: { 'gen_ai.operation.name': 'invoke_agent' } };

describe('otlpTracing: the SDK as Logbook sets it up', () => {
  it.each([
    ['http/json', 'json'],
    ['http/protobuf', 'protobuf'],
    [undefined, 'protobuf'],
  ] as const)('OTEL_EXPORTER_OTLP_PROTOCOL=%s sends %s, with the ids Logbook chose and the service name', async (protocol, encoding) => {
    const before = receiver.spans.length;
    const env = { OTEL_SERVICE_NAME: `svc-${encoding}`, ...(protocol ? { OTEL_EXPORTER_OTLP_PROTOCOL: protocol } : {}) };
    const tracing = await otlpTracing({ endpoint: receiver.url, env });
    tracing.record([root, { ...root, spanId: 'aaaaaaaaaaaaaaaa', parentSpanId: root.spanId, name: 'logbook.step', attributes: {} }]);
    await tracing.flush();
    await tracing.shutdown();
    const got = receiver.spans.slice(before);
    expect(got.map((s) => [s.name, s.traceId, s.spanId, s.parentSpanId, s.encoding])).toEqual([
      ['invoke_agent a', root.traceId, root.spanId, undefined, encoding],
      ['logbook.step', root.traceId, 'aaaaaaaaaaaaaaaa', root.spanId, encoding],
    ]);
    expect(got[0]?.startNs).toBe(1_000_000_000n);
    expect(got[0]?.endNs).toBe(2_000_000_000n);
    expect(got[0]?.resource['service.name']).toBe(`svc-${encoding}`);
  });

  it('refuses gRPC (OTLP over HTTP only), and finds /v1/traces under a base URL', async () => {
    await expect(otlpTracing({ env: { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' } })).rejects.toThrow(/http\/protobuf or http\/json/);
    expect(tracesUrl('http://127.0.0.1:4318')).toBe('http://127.0.0.1:4318/v1/traces');
    expect(tracesUrl('https://c.example.com/otlp/v1/traces')).toBe('https://c.example.com/otlp/v1/traces');
    expect(parseOtlp('http://127.0.0.1:4318')).toBe('http://127.0.0.1:4318');
    expect(() => parseOtlp('127.0.0.1:4318')).toThrow(/http/);
    expect(() => parseOtlp('grpc://127.0.0.1:4317')).toThrow(/OTLP over HTTP/);
  });
});
