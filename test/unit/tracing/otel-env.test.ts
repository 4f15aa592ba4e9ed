import { describe, expect, it } from 'vitest';
import { namesService, otelConfig, signalUrl } from '../../../lib/engine/tracing/otel-env.js';

const C = 'http://collector:4318';

describe('otelConfig: the standard variables, one at a time', () => {
  it('nothing set: nothing exported (no SDK loaded), service.name the default', () => {
    expect(otelConfig({})).toEqual({ resource: { 'service.name': 'logbook' }, warnings: [] });
    expect(otelConfig({}, { serviceName: 'logbook-worker' }).resource).toEqual({ 'service.name': 'logbook-worker' });
  });

  it('OTEL_EXPORTER_OTLP_ENDPOINT alone turns spans on, to the base URL + /v1/traces (a path kept, a slash not doubled); metrics stay off', () => {
    expect(otelConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: C }).traces).toEqual({ url: `${C}/v1/traces`, protocol: 'http/protobuf', headers: {} });
    expect(otelConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: `${C}/` }).traces?.url).toBe(`${C}/v1/traces`);
    expect(otelConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com/otlp' }).traces?.url).toBe('https://otlp.example.com/otlp/v1/traces');
    expect(otelConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: C }).metrics).toBeUndefined();
  });

  it('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT alone turns spans on, used as it is (only an empty path becomes /)', () => {
    expect(otelConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://x.example.com/api/spans' }).traces?.url).toBe('https://x.example.com/api/spans');
    expect(otelConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: C }).traces?.url).toBe(`${C}/`);
  });

  it('OTEL_TRACES_EXPORTER=otlp alone: spans to the spec default, localhost:4318', () => {
    expect(otelConfig({ OTEL_TRACES_EXPORTER: 'otlp' }).traces?.url).toBe('http://localhost:4318/v1/traces');
  });

  it('OTEL_TRACES_EXPORTER=none turns spans off; a list with none too, with a warning; other exporters are not offered', () => {
    expect(otelConfig({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: C }).traces).toBeUndefined();
    const both = otelConfig({ OTEL_TRACES_EXPORTER: 'otlp,none', OTEL_EXPORTER_OTLP_ENDPOINT: C });
    expect(both.traces).toBeUndefined();
    expect(both.warnings).toEqual(['OTEL_TRACES_EXPORTER=otlp,none: "none" is listed, so nothing is exported']);
    const console = otelConfig({ OTEL_TRACES_EXPORTER: 'console', OTEL_EXPORTER_OTLP_ENDPOINT: C });
    expect(console.traces).toBeUndefined();
    expect(console.warnings).toEqual(['OTEL_TRACES_EXPORTER: console not offered (Logbook exports otlp only): ignored']);
    expect(otelConfig({ OTEL_TRACES_EXPORTER: ' Console , OTLP ' }).traces?.url).toBe('http://localhost:4318/v1/traces');
  });

  it('OTEL_EXPORTER_OTLP_PROTOCOL picks the encoding; grpc turns the signal off with one clear line', () => {
    expect(otelConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: C, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).traces?.protocol).toBe('http/json');
    const grpc = otelConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    expect(grpc.traces).toBeUndefined();
    expect(grpc.warnings).toEqual([
      "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: Logbook exports OTLP over HTTP only, so traces are off (use http/protobuf and the collector's port 4318)",
    ]);
    const odd = otelConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: C, OTEL_EXPORTER_OTLP_PROTOCOL: 'thrift' });
    expect(odd.traces?.protocol).toBe('http/protobuf');
    expect(odd.warnings).toHaveLength(1);
  });

  it('OTEL_EXPORTER_OTLP_HEADERS: key=value pairs, values percent-decoded; a bad entry is skipped and named by position, never echoed', () => {
    const c = otelConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: C, OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=s3cr%3Dt, authorization=Bearer%20abc,broken-secret-entry' });
    expect(c.traces?.headers).toEqual({ 'x-api-key': 's3cr=t', authorization: 'Bearer abc' });
    expect(c.warnings).toEqual(['OTEL_EXPORTER_OTLP_HEADERS: entry 3 is not key=value (percent-encoded): skipped']);
    expect(c.warnings.join()).not.toMatch(/secret|abc|s3cr/);
  });

  it('OTEL_SERVICE_NAME names the service; OTEL_RESOURCE_ATTRIBUTES adds attributes, its service.name below OTEL_SERVICE_NAME', () => {
    expect(otelConfig({ OTEL_SERVICE_NAME: 'agents' }).resource).toEqual({ 'service.name': 'agents' });
    const attrs = 'deployment.environment.name=prod%20eu,service.name=from-attrs,team=a';
    expect(otelConfig({ OTEL_RESOURCE_ATTRIBUTES: attrs }, { serviceName: 'default' }).resource).toEqual({
      'deployment.environment.name': 'prod eu',
      'service.name': 'from-attrs',
      team: 'a',
    });
    expect(otelConfig({ OTEL_RESOURCE_ATTRIBUTES: attrs, OTEL_SERVICE_NAME: 'wins' }).resource['service.name']).toBe('wins');
    expect(namesService({})).toBe(false);
    expect(namesService({ OTEL_SERVICE_NAME: 'x' })).toBe(true);
    expect(namesService({ OTEL_RESOURCE_ATTRIBUTES: 'service.name=x' })).toBe(true);
    expect(namesService({ OTEL_RESOURCE_ATTRIBUTES: 'team=a' })).toBe(false);
  });

  it('OTEL_SDK_DISABLED=true (any case) turns everything off; another value is false, with a warning', () => {
    const all = { OTEL_TRACES_EXPORTER: 'otlp', OTEL_METRICS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: C };
    for (const v of ['true', 'TRUE', 'True']) {
      const c = otelConfig({ ...all, OTEL_SDK_DISABLED: v }, { traces: true, metrics: true, endpoint: C });
      expect([c.traces, c.metrics]).toEqual([undefined, undefined]);
    }
    const yes = otelConfig({ ...all, OTEL_SDK_DISABLED: 'yes' });
    expect(yes.traces).toBeDefined();
    expect(yes.warnings).toEqual(['OTEL_SDK_DISABLED=yes is not true or false: taken as false']);
    expect(otelConfig({ ...all, OTEL_SDK_DISABLED: 'false' }).warnings).toEqual([]);
  });

  it('OTEL_METRICS_EXPORTER=otlp turns the GenAI metrics on, to /v1/metrics, with its reader settings', () => {
    const c = otelConfig({ OTEL_METRICS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: C });
    expect(c.metrics).toEqual({ url: `${C}/v1/metrics`, protocol: 'http/protobuf', headers: {}, temporality: 'cumulative', intervalMs: 60_000, timeoutMs: 30_000 });
    const tuned = otelConfig({
      OTEL_METRICS_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: 'Delta',
      OTEL_METRIC_EXPORT_INTERVAL: '5000',
      OTEL_METRIC_EXPORT_TIMEOUT: '-1',
    });
    expect(tuned.metrics).toMatchObject({ temporality: 'delta', intervalMs: 5000, timeoutMs: 30_000 });
    expect(tuned.warnings).toEqual(['OTEL_METRIC_EXPORT_TIMEOUT=-1 is not a positive number of milliseconds: 30000']);
    expect(otelConfig({ OTEL_METRICS_EXPORTER: 'none' }, { metrics: true }).metrics).toBeUndefined();
    expect(otelConfig({ OTEL_METRICS_EXPORTER: 'prometheus' }).warnings).toEqual(['OTEL_METRICS_EXPORTER: prometheus not offered (Logbook exports otlp only): ignored']);
  });

  it('empty values count as unset', () => {
    expect(otelConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_TRACES_EXPORTER: ' ', OTEL_SDK_DISABLED: '' })).toEqual({ resource: { 'service.name': 'logbook' }, warnings: [] });
    expect(otelConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: C, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' }).traces?.url).toBe(`${C}/v1/traces`);
  });

  it('a URL that is not one, or not http(s), is ignored with a warning and the next candidate used', () => {
    const c = otelConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'collector:4318', OTEL_EXPORTER_OTLP_ENDPOINT: C });
    expect(c.traces?.url).toBe(`${C}/v1/traces`);
    expect(c.warnings).toEqual(['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is not an http:// or https:// URL (Logbook exports OTLP over HTTP): ignored']);
    expect(otelConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' }).warnings).toEqual(['OTEL_EXPORTER_OTLP_ENDPOINT is not a URL: ignored']);
  });
});

describe('otelConfig: which variable wins', () => {
  it('the signal endpoint over the generic one, per signal', () => {
    const env = { OTEL_METRICS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: C, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:9999/t' };
    const c = otelConfig(env);
    expect(c.traces?.url).toBe('http://traces:9999/t');
    expect(c.metrics?.url).toBe(`${C}/v1/metrics`);
    expect(otelConfig({ ...env, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://metrics:9999/m' }).metrics?.url).toBe('http://metrics:9999/m');
  });

  it('the signal protocol over the generic one, per signal; grpc on one signal leaves the other', () => {
    const c = otelConfig({ OTEL_METRICS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: C, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' });
    expect(c.traces?.protocol).toBe('http/json');
    expect(c.metrics).toBeUndefined();
    expect(c.warnings).toEqual(["OTEL_EXPORTER_OTLP_PROTOCOL=grpc: Logbook exports OTLP over HTTP only, so metrics are off (use http/protobuf and the collector's port 4318)"]);
  });

  it('headers: the generic and the signal variables merged, the signal one winning per key', () => {
    const c = otelConfig({
      OTEL_METRICS_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: C,
      OTEL_EXPORTER_OTLP_HEADERS: 'a=generic,b=generic',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'b=traces',
      OTEL_EXPORTER_OTLP_METRICS_HEADERS: 'c=metrics',
    });
    expect(c.traces?.headers).toEqual({ a: 'generic', b: 'traces' });
    expect(c.metrics?.headers).toEqual({ a: 'generic', b: 'generic', c: 'metrics' });
  });

  it("the exporter variable over Logbook's switch, the switch over the endpoint's presence", () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: C };
    expect(otelConfig(env, { traces: false }).traces).toBeUndefined();
    expect(otelConfig({ ...env, OTEL_TRACES_EXPORTER: 'otlp' }, { traces: false }).traces).toBeDefined();
    expect(otelConfig({ ...env, OTEL_TRACES_EXPORTER: 'none' }, { traces: true }).traces).toBeUndefined();
    expect(otelConfig({}, { traces: true }).traces?.url).toBe('http://localhost:4318/v1/traces');
    expect(otelConfig(env, { metrics: true }).metrics?.url).toBe(`${C}/v1/metrics`);
  });

  it("the code's endpoint and protocol over the variables (as an SDK's code configuration is)", () => {
    const env = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://env:1/v1/traces', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' };
    expect(otelConfig(env, { endpoint: C, protocol: 'http/protobuf' }).traces).toEqual({ url: `${C}/v1/traces`, protocol: 'http/protobuf', headers: {} });
  });

  it('OTEL_SDK_DISABLED over everything, the code included', () => {
    expect(otelConfig({ OTEL_SDK_DISABLED: 'true' }, { traces: true, metrics: true, endpoint: C })).toEqual({ resource: { 'service.name': 'logbook' }, warnings: [] });
  });

  it('signalUrl appends the relative path to a base, as the spec says', () => {
    expect(signalUrl('http://h:4318', 'traces')).toBe('http://h:4318/v1/traces');
    expect(signalUrl('http://h:4318/x/', 'metrics')).toBe('http://h:4318/x/v1/metrics');
  });
});
