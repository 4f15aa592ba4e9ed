import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, Context, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileLedger, duplicateEffects } from '../../examples/support-agent/ledger.js';
import { LogbookClient } from '../../dev/cli/api-client.js';
import { startRun } from '../../lib/engine/start-run.js';
import { SWEEP_QUEUED_MS } from '../../lib/ports/sweep-index.js';
import { lambdaContext } from '../../dev/local/lambda-context.js';
import { startLocalStack, type LocalStack } from '../../dev/local/stack.js';
import { endpointsFor, uniquePrefix } from '../setup/emulator-context.js';
import { eventually, sqsRecord } from './runtime-helpers.js';

const endpoints = endpointsFor('dynamodb-local') ?? endpointsFor('dynalite');
let stack: LocalStack;
let client: LogbookClient;
let workDir: string;


const statusIs = (runId: string, ...statuses: string[]) =>
  eventually(`${runId} to be ${statuses.join('/')}`, async () => {
    const view = await client.getRun(runId);
    return statuses.includes(view.status) ? view : undefined;
  });

const eventOf = (runId: string, match: (e: Record<string, unknown>) => boolean) =>
  eventually(`an event of ${runId}`, async () => (await client.allEvents(runId)).find(match));

function expectContiguous(events: Record<string, unknown>[]) {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
}

describe.skipIf(!endpoints)('runtime on the emulators', () => {
  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'logbook-rt-'));
    stack = await startLocalStack({
      port: 0,
      endpoints,
      prefix: uniquePrefix('rt'),
      workDir,
      concurrency: 2,
      sweepEveryMs: 0,
      agentsModule: 'test/integration/runtime-agents.fixture.ts',
      env: { SUPPORT_LEDGER_FILE: join(workDir, 'ledger.jsonl') },
    });
    client = new LogbookClient(stack.apiUrl);
    // The in-process handlers below read the same environment the worker processes get.
    Object.assign(process.env, stack.env, { POWERTOOLS_LOG_LEVEL: 'SILENT', POWERTOOLS_METRICS_DISABLED: 'true' });
  });

  afterAll(async () => {
    await stack?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('drives a run started through the API to completion; the events endpoint shows the log', async () => {
    const created = await client.startRun({ agent: 'support', runId: 'e2e-1', input: 'order arrived damaged' });
    expect(created).toMatchObject({ runId: 'e2e-1', created: true });
    const view = await statusIs('e2e-1', 'completed', 'failed', 'parked');
    expect(view.status).toBe('completed');
    expect(String(view.result)).toContain('Refunded order');
    const events = await client.allEvents('e2e-1');
    expectContiguous(events);
    expect(events[0]?.type).toBe('run_started');
    expect(events.at(-1)?.type).toBe('run_completed');
    expect(events.filter((e) => e.type === 'tool_result')).toHaveLength(4);
    expect(stack.runner.stats.invocations).toBeGreaterThan(0);
  });

  it('serves the API Lambda handler with the tenant from the authorizer (another tenant gets 404)', async () => {
    const { handler } = await import('../../functions/api.js');
    const request = (method: string, path: string, authorizer: unknown, body?: unknown) =>
      handler(
        {
          version: '2.0',
          routeKey: '$default',
          rawPath: path,
          rawQueryString: '',
          headers: { 'content-type': 'application/json', host: 'api.example.com' },
          body: body === undefined ? null : JSON.stringify(body),
          isBase64Encoded: false,
          requestContext: {
            accountId: '000000000000',
            apiId: 'api',
            domainName: 'api.example.com',
            domainPrefix: 'api',
            http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
            requestId: 'req',
            routeKey: '$default',
            stage: '$default',
            time: '',
            timeEpoch: Date.now(),
            authorizer,
          },
        } as unknown as APIGatewayProxyEventV2,
        lambdaContext('logbook-api', 30_000) as Context,
      ) as Promise<{ statusCode: number; body: string }>;
    const acme = { iam: { accountId: '111111111111', userArn: 'arn:aws:iam::111111111111:user/alice' } };
    const globex = { jwt: { claims: { sub: 'globex-user' } } };
    const created = await request('POST', '/runs', acme, { agent: 'support', runId: 'iam-1', input: 'private to acme' });
    expect(created.statusCode).toBe(201);
    expect((await request('GET', '/runs/iam-1', acme)).statusCode).toBe(200);
    const other = await request('GET', '/runs/iam-1', globex);
    expect(other.statusCode).toBe(404);
    expect(other.body).not.toContain('private');
    expect((await request('GET', '/runs/iam-1/events', globex)).statusCode).toBe(404);
    expect((await request('GET', '/runs/iam-1', undefined)).statusCode).toBe(401);
    const bad = await request('POST', '/runs', acme, { agent: 'support', input: 'x', budgets: { maxCostUsd: -1 } });
    expect(bad.statusCode).toBe(400);
    expect(JSON.parse(bad.body).error.issues[0].path).toBe('body.budgets.maxCostUsd');
    await eventually('iam-1 to finish', async () => {
      const res = await request('GET', '/runs/iam-1', acme);
      return JSON.parse(res.body).status === 'completed' ? true : undefined;
    });
  });

  it('drops a malformed tick (the record succeeds) and reports a held run as a batch item failure', async () => {
    const { handler } = await import('../../functions/worker.js');
    const record = (body: string, id: string) => sqsRecord(body, id, `not-a-receipt-${id}`);
    const ctx = lambdaContext('logbook-worker', 60_000) as Context;
    const malformed = await handler({ Records: [record('{"tenant":"local"', 'm-1'), record('{"tenant":"local","runId":"x","extra":1}', 'm-2')] } as SQSEvent, ctx);
    expect(malformed.batchItemFailures).toEqual([]);

    // A run whose lease another worker holds: retried later, not run twice.
    await client.startRun({ agent: 'slow', runId: 'held-1', input: 'slow-lookup please' });
    await eventOf('held-1', (e) => e.type === 'tool_started');
    const busy = await handler({ Records: [record(JSON.stringify({ tenant: 'local', runId: 'held-1' }), 'm-3')] } as SQSEvent, ctx);
    expect(busy.batchItemFailures).toEqual([{ itemIdentifier: 'm-3' }]);
    await client.cancel('held-1');
    await statusIs('held-1', 'cancelled');
  });

  it('stays correct with duplicate and reordered ticks', async () => {
    const queue = stack.runtime.engine.queue;
    await client.startRun({ agent: 'support', runId: 'dup-1', input: 'order arrived damaged' });
    // Extra wake-ups from every kind of sender, including a stale one naming an old seq and epoch.
    for (const dedupeId of ['dup-1:sweep:0:1', 'dup-1:inbox:fake', 'dup-1:1:0-stale', 'dup-1:sweep:0:2']) {
      await queue.enqueue({ tenant: 'local', runId: 'dup-1' }, { dedupeId });
    }
    const view = await statusIs('dup-1', 'completed', 'failed', 'parked');
    expect(view.status).toBe('completed');
    const lastSeq = view.lastSeq;
    // Ticks arriving after the end change nothing.
    for (const dedupeId of ['dup-1:late:1', 'dup-1:late:2']) await queue.enqueue({ tenant: 'local', runId: 'dup-1' }, { dedupeId });
    await stack.runtime.clients.sqs.send(
      new SendMessageCommand({ QueueUrl: stack.resources.queueUrl, MessageBody: '{"runId":"dup-1"}', MessageGroupId: 'dup-1', MessageDeduplicationId: 'dup-1:junk' }),
    );
    const before = stack.runner.stats.deleted;
    await eventually('the late ticks to be consumed', async () => (stack.runner.stats.deleted >= before + 3 ? true : undefined));
    const events = await client.allEvents('dup-1');
    expectContiguous(events);
    expect(events).toHaveLength(lastSeq);
    const effects = new FileLedger(join(workDir, 'ledger.jsonl')).all().filter((e) => e.runId === 'dup-1');
    expect(duplicateEffects(effects)).toEqual([]);
    expect(effects.filter((e) => e.service === 'payments' && e.applied)).toHaveLength(1);
  });

  it('cancels during a long tool call: the call is aborted and the run ends cancelled', async () => {
    await client.startRun({ agent: 'slow', runId: 'cancel-1', input: 'slow-lookup please' });
    await eventOf('cancel-1', (e) => e.type === 'tool_started');
    await client.cancel('cancel-1', 'customer changed their mind');
    const view = await statusIs('cancel-1', 'cancelled', 'failed', 'completed');
    expect(view.status).toBe('cancelled');
    const types = (await client.allEvents('cancel-1')).map((e) => e.type);
    expect(types).toContain('cancel_requested');
    expect(types.at(-1)).toBe('run_cancelled');
    expect(types).not.toContain('run_completed');
  });

  it('parks an escalate call whose worker died mid-call, and a resolution lets it finish without re-running it', async () => {
    await client.startRun({ agent: 'slow', runId: 'park-1', input: 'slow-charge please' });
    const started = await eventOf('park-1', (e) => e.type === 'tool_started' && String(e.callId) !== '3-0');
    expect(stack.runner.killBusyWorker()).toBe(true);
    const parked = await statusIs('park-1', 'parked', 'failed', 'completed');
    expect(parked.status).toBe('parked');
    expect(parked.attention).toMatchObject([{ reason: 'unknown_outcome', callId: started.callId }]);
    await client.resolve('park-1', { callId: String(started.callId), outcome: 'succeeded', result: { chargeId: 'checked-by-hand' } });
    const done = await statusIs('park-1', 'completed', 'failed');
    expect(done.status).toBe('completed');
    const events = await client.allEvents('park-1');
    expectContiguous(events);
    expect(events.filter((e) => e.type === 'tool_started' && e.callId === started.callId)).toHaveLength(1);
    expect(events.some((e) => e.type === 'attention_resolved' && e.outcome === 'succeeded')).toBe(true);
    const charges = readFileSync(`${join(workDir, 'ledger.jsonl')}.slow`, 'utf8').split('\n').filter((l) => l.includes('park-1'));
    expect(charges.filter((l) => l.includes('"charge-start"'))).toHaveLength(1);
  });

  it('keeps a long tool call to one invocation: the heartbeat extends the lease and the tick visibility together', async () => {
    const before = { ...stack.runner.stats };
    await client.startRun({ agent: 'slow', runId: 'long-1', input: 'medium-lookup please' });
    const view = await statusIs('long-1', 'completed', 'failed', 'parked');
    expect(view.status).toBe('completed');
    // The call outlived the visibility the worker first set (lease + margin), yet the tick was not
    // delivered to a second worker: no busy retries, one claim.
    expect(stack.runner.stats.itemFailures).toBe(before.itemFailures);
    const head = await stack.runtime.engine.heads.getHead({ tenant: 'local', runId: 'long-1' });
    expect(head?.epoch).toBe(1);
  });

  it('the sweeper repairs a lost enqueue', async () => {
    const dropping = { ...stack.runtime.engine, queue: { enqueue: async () => undefined } };
    await startRun(dropping, { tenant: 'local', runId: 'lost-1', agent: 'support', input: 'order arrived damaged' });
    expect((await client.getRun('lost-1')).lastSeq).toBe(1);
    // The scheduled sweeper, once the hold on a tick recorded as queued ends (the head cannot tell
    // a tick waiting in the backlog from a lost one).
    const { woken } = await stack.sweepNow(Date.now() + SWEEP_QUEUED_MS + 1_000);
    expect(woken).toBeGreaterThanOrEqual(1);
    expect((await statusIs('lost-1', 'completed', 'failed', 'parked')).status).toBe('completed');
  });
});
