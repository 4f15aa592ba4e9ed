import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEvent } from '../../lib/core/events.js';
import { LOCAL_CALLER } from '../../lib/api/tenant.js';
import { traceIdOf } from '../../lib/engine/tracing/trace-span.js';
import { LogbookClient } from '../../dev/cli/api-client.js';
import { startLocalStack, type LocalStack } from '../../dev/local/stack.js';
import { endpointsFor, uniquePrefix } from '../setup/emulator-context.js';
import { traceFailures } from '../unit/tracing/trace-invariants.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';
import { eventually } from './runtime-helpers.js';

const endpoints = endpointsFor('dynamodb-local') ?? endpointsFor('dynalite');
let stack: LocalStack;
let receiver: OtlpReceiver;
let workDir: string;

describe.skipIf(!endpoints)('logbook dev --otlp: the local stack sends its workers spans to a collector', () => {
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    workDir = mkdtempSync(join(tmpdir(), 'logbook-otlp-'));
    stack = await startLocalStack({
      port: 0,
      endpoints,
      prefix: uniquePrefix('otlp'),
      workDir,
      concurrency: 1,
      sweepEveryMs: 0,
      agentsModule: 'test/integration/runtime-agents.fixture.ts',
      otlp: receiver.url,
      // The standard variable picks the encoding: JSON here (protobuf is the default). The shorthand
      // wins over a per-signal endpoint and an exporter of none the environment has.
      env: {
        SUPPORT_LEDGER_FILE: join(workDir, 'ledger.jsonl'),
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:9/elsewhere',
        OTEL_TRACES_EXPORTER: 'none',
      },
    });
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver?.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('a run on the worker processes arrives as one trace, every span under its parent', async () => {
    expect(stack.telemetry).toEqual({ traces: { url: `${receiver.url}/v1/traces`, protocol: 'http/json' }, warnings: [] });
    const client = new LogbookClient(stack.apiUrl);
    await client.startRun({ agent: 'support', runId: 'traced-1', input: 'order arrived damaged' });
    const run = { tenant: LOCAL_CALLER.tenant, runId: 'traced-1' };
    const view = await eventually('traced-1 to end', async () => {
      const v = await client.getRun('traced-1');
      return ['completed', 'failed', 'parked'].includes(v.status) ? v : undefined;
    });
    expect(view.status).toBe('completed');
    // The worker flushes after each invocation, so the root (sent with the last step) arrives then.
    const spans = await eventually('the root span', () => {
      const mine = receiver.spans.filter((s) => s.traceId === traceIdOf(run));
      return mine.some((s) => s.name === 'invoke_agent support') ? mine : undefined;
    });
    const log = (await stack.runtime.engine.log.read(run, { afterSeq: 0 })).events.map((e) => parseEvent(e));
    expect(traceFailures(spans, log, run)).toEqual([]);
    expect(receiver.requests.json).toBeGreaterThan(0);
    expect(receiver.requests.protobuf).toBe(0);
    expect(spans[0]?.resource['service.name']).toBe('logbook-local');
    expect(spans.filter((s) => s.name.startsWith('chat ')).length).toBeGreaterThan(1);
    expect(spans.some((s) => s.name.startsWith('execute_tool '))).toBe(true);
  }, 180_000);
});
