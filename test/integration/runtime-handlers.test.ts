import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventBridgeEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '../../dev/local/stack.js';
import { runIdForEvent } from '../../lib/lambda/trigger-handler.js';
import { endpointsFor, uniquePrefix } from '../setup/emulator-context.js';
import { fakeEventBridge } from '../setup/fake-eventbridge.js';
import { eventually } from './runtime-helpers.js';

const endpoints = endpointsFor('dynamodb-local') ?? endpointsFor('dynalite');

const requested = (id: string, detail: unknown, account = '123456789012'): EventBridgeEvent<string, unknown> => ({
  version: '0',
  id,
  'detail-type': 'Agent Run Requested',
  source: 'com.example.helpdesk',
  account,
  time: new Date().toISOString(),
  region: 'us-east-1',
  resources: [],
  detail,
});

describe.skipIf(!endpoints)('trigger, sweeper and outcome events', () => {
  let stack: LocalStack;
  let bus: Awaited<ReturnType<typeof fakeEventBridge>>;
  let workDir: string;

  beforeAll(async () => {
    bus = await fakeEventBridge();
    workDir = mkdtempSync(join(tmpdir(), 'logbook-rh-'));
    stack = await startLocalStack({
      port: 0,
      endpoints,
      prefix: uniquePrefix('rh'),
      workDir,
      sweepEveryMs: 0,
      agentsModule: 'examples/support-agent/agents.ts',
      env: { LOGBOOK_EVENT_BUS: 'logbook-outcomes', LOGBOOK_EVENTS_ENDPOINT: bus.url },
    });
    Object.assign(process.env, stack.env, { POWERTOOLS_LOG_LEVEL: 'SILENT', POWERTOOLS_METRICS_DISABLED: 'true' });
  });

  afterAll(async () => {
    await stack?.stop();
    bus?.server.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('starts one run per event id, for the source account, and publishes its outcome once it completes', async () => {
    const { handler } = await import('../../functions/trigger.js');
    const event = requested('evt-1', { agent: 'support', input: 'order arrived damaged' });
    const first = await handler(event);
    const runId = runIdForEvent('123456789012', 'evt-1');
    expect(first).toEqual({ runId, created: true });
    // EventBridge delivers at least once: the same event id is the same run.
    expect(await handler(event)).toEqual({ runId, created: false });
    // The same event id from another account is another tenant's run.
    expect(runIdForEvent('210987654321', 'evt-1')).not.toBe(runId);

    const heads = stack.runtime.engine.heads;
    const head = await eventually('the triggered run to complete', async () => {
      const h = await heads.getHead({ tenant: '123456789012', runId });
      return h?.status === 'completed' && h.notifiedSeq > 0 ? h : undefined;
    });
    const published = await eventually('the outcome event', () => bus.entries.find((e) => JSON.parse(e.Detail).runId === runId));
    expect(published).toMatchObject({ Source: 'logbook', DetailType: 'Agent Run Completed', EventBusName: 'logbook-outcomes' });
    expect(JSON.parse(published.Detail)).toMatchObject({ id: `${runId}:${head.lastSeq}`, tenant: '123456789012', status: 'completed' });
  });

  it('drops events it can never start (wrong type, bad detail, a tenant in the detail, unknown agent)', async () => {
    const { handler } = await import('../../functions/trigger.js');
    expect(await handler({ ...requested('evt-2', {}), 'detail-type': 'Something Else' })).toEqual({ dropped: 'detail-type' });
    expect(await handler(requested('evt-3', { agent: 'support' }))).toEqual({ dropped: 'detail' });
    expect(await handler(requested('evt-4', { agent: 'support', input: 'x', tenant: 'someone-else' }))).toEqual({ dropped: 'detail' });
    expect(await handler(requested('evt-5', { agent: 'nope', input: 'x' }))).toMatchObject({ dropped: 'validation_error' });
  });

  it('the sweeper handler wakes what is due and writes no events', async () => {
    const { handler } = await import('../../functions/sweeper.js');
    const out = await handler();
    expect(out.woken).toBeGreaterThanOrEqual(0);
  });
});
