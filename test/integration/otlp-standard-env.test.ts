/**
 * The standard OTEL_* variables alone turn tracing (and the GenAI metrics) on, as an OpenTelemetry
 * user expects: `npm start` and `logbook dev` as real processes, and the Lambda worker's handler
 * in-process, each exporting to a real OTLP/HTTP receiver on 127.0.0.1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_CALLER } from '../../lib/api/tenant.js';
import { traceIdOf } from '../../lib/engine/tracing/trace-span.js';
import { LogbookClient } from '../../dev/cli/api-client.js';
import { startOtlpReceiver, type OtlpReceiver, type OtlpSpan } from './otlp-receiver.js';
import { orphans, spawnEntry, tokenTotals, type Child } from './otlp-processes.js';
import { eventually } from './runtime-helpers.js';

const AGENTS = fileURLToPath(new URL('./runtime-agents.fixture.ts', import.meta.url));
let receiver: OtlpReceiver;
let vendor: OtlpReceiver;
let dir: string;
const children: Child[] = [];

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  vendor = await startOtlpReceiver('/otlp');
  dir = mkdtempSync(join(tmpdir(), 'logbook-otel-env-'));
});
afterAll(async () => {
  await Promise.all(children.map((c) => c.stop()));
  await receiver?.close();
  await vendor?.close();
  rmSync(dir, { recursive: true, force: true });
});

const unique = (spans: readonly OtlpSpan[]) => [...new Map(spans.map((s) => [s.spanId, s])).values()];

describe('npm start with only OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  it("exports the demo run's spans: one trace, every parent there, protobuf by default, the local service name", async () => {
    const cwd = mkdtempSync(join(dir, 'start-'));
    const child = spawnEntry('examples/support-agent/demo/main.ts', ['start', '--once', '--port', '0', '--dynamo', 'dynalite', '--tool-delay', '0'], cwd, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    });
    children.push(child);
    expect(await child.exited, child.output()).toBe(0);
    expect(child.output()).toContain(`Traces:   every step's spans to ${receiver.url}/v1/traces (OTLP/HTTP, http/protobuf)`);
    expect(child.output()).not.toMatch(/warning: OpenTelemetry/);
    const runId = /Demo run (\S+) /.exec(child.output())?.[1] ?? '';
    const trace = traceIdOf({ tenant: LOCAL_CALLER.tenant, runId });
    // Every step sent its spans before its head moved, so the run's end in the log means they are out.
    const spans = unique(receiver.spans.filter((s) => s.traceId === trace));
    expect(spans.filter((s) => s.name === 'invoke_agent support')).toHaveLength(1);
    expect(orphans(spans)).toEqual([]);
    expect(spans.filter((s) => s.name.startsWith('chat '))).toHaveLength(4);
    expect(spans.filter((s) => s.name.startsWith('execute_tool '))).toHaveLength(4);
    expect(new Set(spans.map((s) => s.encoding))).toEqual(new Set(['protobuf']));
    expect(spans[0]?.resource['service.name']).toBe('logbook-local');
    // No metric was asked for.
    expect(receiver.log.filter((r) => r.path === '/v1/metrics')).toEqual([]);
  }, 240_000);
});

describe('logbook dev with the per-signal variables, JSON, headers, resource attributes and metrics', () => {
  it('sends the spans and the GenAI metrics where each variable says, the token sums equal to the run usage', async () => {
    const cwd = mkdtempSync(join(dir, 'dev-'));
    const child = spawnEntry('dev/cli/main.ts', ['dev', '--agents', AGENTS, '--port', '0', '--dynamo', 'dynalite', '--workers', '2', '--json'], cwd, {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_METRICS_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${vendor.url}/v1/traces`,
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${receiver.url}/v1/metrics`,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9/unused',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-api-key=dev%20key',
      OTEL_SERVICE_NAME: 'helpdesk-agents',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=dev',
    });
    children.push(child);
    const started = await eventually('the dev stack', () => {
      const line = child.output().split('\n').find((l) => l.startsWith('{"apiUrl"'));
      return line ? (JSON.parse(line) as { apiUrl: string }) : undefined;
    }, 120_000);
    expect(child.output()).toContain(`Traces:   every step's spans to ${vendor.url}/v1/traces (OTLP/HTTP, http/json)`);
    expect(child.output()).toContain(`Metrics:  GenAI token usage and call duration to ${receiver.url}/v1/metrics (OTLP/HTTP, http/json)`);

    const client = new LogbookClient(started.apiUrl);
    await client.startRun({ agent: 'support', runId: 'dev-otel-1', input: 'order arrived damaged' });
    const view = await eventually('the run to end', async () => {
      const v = await client.getRun('dev-otel-1');
      return ['completed', 'failed', 'parked'].includes(v.status) ? v : undefined;
    });
    expect(view.status).toBe('completed');
    const trace = traceIdOf({ tenant: LOCAL_CALLER.tenant, runId: 'dev-otel-1' });
    const spans = unique(vendor.spans.filter((s) => s.traceId === trace));
    expect(spans.filter((s) => s.name === 'invoke_agent support')).toHaveLength(1);
    expect(orphans(spans)).toEqual([]);
    expect(spans[0]).toMatchObject({ encoding: 'json', resource: { 'service.name': 'helpdesk-agents', 'deployment.environment.name': 'dev' } });
    expect(vendor.log.filter((r) => r.path === '/otlp/v1/traces').every((r) => r.headers['x-api-key'] === 'dev key')).toBe(true);

    // Each invocation sends its metrics when it ends, after the head write that ended the run.
    const totals = await eventually('the metrics of every model call', () => {
      const t = tokenTotals(receiver.metrics);
      return t.calls >= 4 ? t : undefined;
    });
    expect(totals).toEqual({ input: view.usage.inputTokens, output: view.usage.outputTokens, calls: spans.filter((s) => s.name.startsWith('chat ')).length });
    expect(receiver.metrics.every((p) => p.encoding === 'json' && p.resource['service.name'] === 'helpdesk-agents')).toBe(true);
    // The metrics endpoint took no span of this run: each signal went where its own variable said.
    expect(receiver.spans.filter((s) => s.traceId === trace)).toEqual([]);
    await child.stop();
    expect(child.output()).toContain('Stopping...');
  }, 240_000);
});
