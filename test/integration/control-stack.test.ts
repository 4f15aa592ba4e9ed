// Control over runs end to end on the local stack: the support-guarded agent through the HTTP API,
// the worker handler in child processes and the AWS SDK adapters on DynamoDB Local (or dynalite)
// and fauxqs. A run waits for a signal holding no Lambda, asks for approval, runs the edited refund
// once, answers a follow-up, and is forked from its last turn.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, LogbookClient } from '../../dev/cli/api-client.js';
import { startLocalStack, type LocalStack } from '../../dev/local/stack.js';
import { FileLedger } from '../../examples/support-agent/ledger.js';
import { SUPPORT_AGENTS_MODULE } from '../../examples/support-agent/demo/stack-env.js';
import { endpointsFor, uniquePrefix } from '../setup/emulator-context.js';
import { eventually } from './runtime-helpers.js';

const endpoints = endpointsFor('dynamodb-local') ?? endpointsFor('dynalite');
let stack: LocalStack;
let client: LogbookClient;
let workDir: string;

const statusIs = (runId: string, status: string) =>
  eventually(`${runId} to be ${status}`, async () => {
    const view = await client.getRun(runId);
    return view.status === status ? view : undefined;
  });

async function refused(work: Promise<unknown>): Promise<ApiError> {
  const error = await work.then(() => undefined, (e: unknown) => e);
  if (!(error instanceof ApiError)) throw new Error(`expected an API error, got ${String(error)}`);
  return error;
}

describe.skipIf(!endpoints)('control over runs on the local stack', () => {
  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'logbook-control-'));
    stack = await startLocalStack({
      port: 0,
      endpoints,
      prefix: uniquePrefix('ctl'),
      workDir,
      concurrency: 2,
      sweepEveryMs: 0,
      agentsModule: SUPPORT_AGENTS_MODULE,
      env: { SUPPORT_LEDGER_FILE: join(workDir, 'ledger.jsonl') },
    });
    client = new LogbookClient(stack.apiUrl);
  });

  afterAll(async () => {
    await stack?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('waits for a signal, asks for approval, runs the edited refund once, takes a follow-up and forks', async () => {
    await client.startRun({ agent: 'support-guarded', runId: 'ctl-1', input: 'Customer c_77: my order arrived damaged.' });
    const waiting = await statusIs('ctl-1', 'waiting');
    expect(waiting.waiting).toMatchObject([{ kind: 'signal', signal: 'parcel_returned', tool: 'wait_for_return' }]);
    // Waiting holds no Lambda: nothing is invoked for the run while it waits.
    const invocations = stack.runner.stats.invocations;
    await new Promise((r) => setTimeout(r, 1_000));
    expect(stack.runner.stats.invocations).toBe(invocations);

    // The payload is checked against the pinned schema before anything is written.
    const bad = await refused(client.signal('ctl-1', { signal: 'parcel_returned', payload: { trackingId: 'T' } }));
    expect(bad.status).toBe(400);
    expect(bad.body?.error.issues?.map((i) => i.path)).toEqual(['body.payload.trackingId', 'body.payload.condition']);
    await client.signal('ctl-1', { signal: 'parcel_returned', payload: { trackingId: 'TRK-1', condition: 'damaged' } });
    expect((await refused(client.signal('ctl-1', { signal: 'parcel_returned', payload: { trackingId: 'TRK-2', condition: 'intact' } }))).status).toBe(409);

    const asking = await statusIs('ctl-1', 'awaiting_approval');
    const approval = asking.waiting?.[0];
    expect(approval).toMatchObject({ kind: 'approval', tool: 'issue_refund', args: { orderId: 'o_eb70', amountCents: 1299 } });
    // The signal woke it once (one step up to the approval request).
    expect(stack.runner.stats.invocations - invocations).toBeLessThanOrEqual(2);
    const edit = { callId: approval!.callId, decision: 'edit' as const, args: { orderId: 'o_eb70', amountCents: 1000 }, argsHash: approval!.argsHash!, comment: 'refund $10' };
    expect((await refused(client.approve('ctl-1', { ...edit, args: { orderId: 'o_eb70', amountCents: 0 } }))).status).toBe(400);
    await client.approve('ctl-1', edit);
    expect((await refused(client.approve('ctl-1', { callId: edit.callId, decision: 'reject' }))).status).toBe(409);

    const done = await statusIs('ctl-1', 'completed');
    expect(done.result).toBe('Refunded order o_eb70 ($10.00) after the parcel came back, and emailed c_77.');
    const refunds = () => new FileLedger(join(workDir, 'ledger.jsonl')).all().filter((e) => e.service === 'payments' && e.runId.startsWith('ctl-1'));
    expect(refunds().map((e) => e.detail.amountCents)).toEqual([1000]);
    const events = await client.allEvents('ctl-1');
    expect(events.find((e) => e.type === 'approval_decided')).toMatchObject({ decision: 'edit', decidedBy: 'local-user' });
    const lastTurn = events.filter((e) => e.type === 'tool_result').at(-1)!.seq as number;

    await client.message('ctl-1', { input: 'Thanks! When does the money arrive?' });
    await eventually('the follow-up answer', async () => {
      const view = await client.getRun('ctl-1');
      return view.status === 'completed' && String(view.result).includes('When does the money arrive?') ? view : undefined;
    });

    const fork = await client.fork('ctl-1', { atSeq: lastTurn, runId: 'ctl-1-fork' });
    expect(fork).toMatchObject({ runId: 'ctl-1-fork', created: true, forkedFrom: { runId: 'ctl-1', seq: lastTurn } });
    const forked = await statusIs('ctl-1-fork', 'completed');
    expect(forked.forkedFrom).toEqual({ runId: 'ctl-1', seq: lastTurn });
    expect(String(forked.result)).toContain('Refunded order o_eb70 ($10.00)');
    expect(refunds()).toHaveLength(1); // nothing copied ran again
    expect((await refused(client.fork('ctl-1', { atSeq: lastTurn - 1 }))).body?.error.code).toBe('fork_conflict');
  }, 120_000);
});
