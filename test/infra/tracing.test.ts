import { Logbook } from 'logbook/cdk';
import { describe, expect, it } from 'vitest';
import { envSchema } from '../../lib/lambda/env.js';
import { otelConfig } from '../../lib/engine/tracing/otel-env.js';
import { asArray } from './synth.js';
import { userApp } from './user-app.js';

const AGENTS = 'test/fixtures/apps/scripted-agents/agents.ts';
const LAYER = 'arn:aws:lambda:us-east-1:901920570463:layer:aws-otel-collector-arm64-ver-0-117-0:1';

type Fn = { Properties: { Environment?: { Variables?: Record<string, unknown> }; Layers?: unknown[]; Description?: string; Role?: unknown } };
type Statement = { Action: string | string[]; Resource: unknown };

function synth(tracing?: ConstructorParameters<typeof Logbook>[2]['tracing']) {
  const u = userApp();
  new Logbook(u.stack, 'Agents', { agents: AGENTS, ...(tracing ? { tracing } : {}) });
  const { template, nagViolations } = u.synth();
  const fns = Object.values(template.findResources('AWS::Lambda::Function')) as Fn[];
  const worker = fns.find((f) => String(f.Properties.Description).startsWith('Logbook worker'));
  const others = fns.filter((f) => f !== worker && String(f.Properties.Description).startsWith('Logbook '));
  const xray = Object.values(template.findResources('AWS::IAM::Policy')).flatMap((p) =>
    (p.Properties as { PolicyDocument: { Statement: Statement[] } }).PolicyDocument.Statement.filter((s) => asArray(s.Action).some((a) => a.startsWith('xray:'))),
  );
  return { worker, others, xray, nagViolations, template };
}

describe('the construct\'s tracing option', () => {
  it('is off by default: no tracing environment, no layer, no X-Ray grant', () => {
    const { worker, xray } = synth();
    const env = (worker?.Properties.Environment?.Variables ?? {}) as Record<string, string>;
    expect(Object.keys(env).filter((k) => k.startsWith('OTEL_') || k.startsWith('LOGBOOK_TRACING'))).toEqual([]);
    expect(otelConfig(env)).toMatchObject({ warnings: [] });
    expect(otelConfig(env).traces).toBeUndefined();
    expect(worker?.Properties.Layers).toBeUndefined();
    expect(xray).toEqual([]);
  });

  it('with the ADOT collector layer: the layer on the worker only, OTLP to its localhost collector, the X-Ray write actions, cdk-nag clean', () => {
    const { worker, others, xray, nagViolations } = synth({ adotLayerArn: LAYER, payloads: true });
    expect(worker?.Properties.Layers).toEqual([LAYER]);
    const env = worker?.Properties.Environment?.Variables ?? {};
    expect(env).toMatchObject({
      OTEL_TRACES_EXPORTER: 'otlp',
      LOGBOOK_TRACING_PAYLOADS: 'true',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_SERVICE_NAME: expect.any(String),
    });
    expect(env.OTEL_METRICS_EXPORTER).toBeUndefined();
    // The worker reads these as the standard variables: spans to the layer's collector, no metrics.
    const read = otelConfig(env as Record<string, string>);
    expect(read.traces).toEqual({ url: 'http://localhost:4318/v1/traces', protocol: 'http/protobuf', headers: {} });
    expect(read.metrics).toBeUndefined();
    expect(read.warnings).toEqual([]);
    expect(envSchema.pick({ LOGBOOK_TRACING_PAYLOADS: true }).parse(env)).toEqual({ LOGBOOK_TRACING_PAYLOADS: 'true' });
    for (const f of others) {
      expect(f.Properties.Layers).toBeUndefined();
      expect(Object.keys(f.Properties.Environment?.Variables ?? {}).filter((k) => k.startsWith('OTEL_'))).toEqual([]);
    }
    expect(xray).toEqual([{ Effect: 'Allow', Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], Resource: '*' }]);
    expect(nagViolations).toEqual([]);
  });

  it('with an OTLP endpoint: no layer, no X-Ray grant, the endpoint, protocol and headers as the OTEL_* variables', () => {
    const { worker, xray, nagViolations } = synth({ endpoint: 'https://otlp.example.com', protocol: 'http/json', headers: 'x-api-key=by-name' });
    expect(worker?.Properties.Layers).toBeUndefined();
    expect(worker?.Properties.Environment?.Variables).toMatchObject({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=by-name',
      LOGBOOK_TRACING_PAYLOADS: 'false',
    });
    expect(xray).toEqual([]);
    expect(nagViolations).toEqual([]);
  });

  it('with metrics and resource attributes: OTEL_METRICS_EXPORTER=otlp to the same collector, the attributes percent-encoded', () => {
    const { worker } = synth({ endpoint: 'https://otlp.example.com/base', metrics: true, resourceAttributes: { 'deployment.environment.name': 'prod eu', 'service.version': '1,2' } });
    const env = (worker?.Properties.Environment?.Variables ?? {}) as Record<string, string>;
    expect(env).toMatchObject({ OTEL_METRICS_EXPORTER: 'otlp', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod%20eu,service.version=1%2C2' });
    const read = otelConfig(env);
    expect(read.traces?.url).toBe('https://otlp.example.com/base/v1/traces');
    expect(read.metrics?.url).toBe('https://otlp.example.com/base/v1/metrics');
    expect(read.resource).toMatchObject({ 'deployment.environment.name': 'prod eu', 'service.version': '1,2', 'service.name': env.OTEL_SERVICE_NAME });
    expect(() => synth({ endpoint: 'https://otlp.example.com', resourceAttributes: { 'bad key': 'x' } })).toThrow(/resource attribute name/);
  });

  it('refuses a tracing option with nowhere to send', () => {
    expect(() => synth({ payloads: true })).toThrow(/endpoint/);
  });
});
