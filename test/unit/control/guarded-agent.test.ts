import { describe, expect, it } from 'vitest';
import { requestApproval, requestMessage, requestSignal } from '../../../lib/engine/control-requests.js';
import { forkRun } from '../../../lib/engine/fork.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { spawnWorker } from '../../../lib/testing/world.js';
import { guardedWorld } from '../../../examples/support-agent/guarded-world.js';
import { duplicateEffects } from '../../../examples/support-agent/ledger.js';
import { logOf } from '../engine/helpers.js';
import { drain, headOf, later } from './helpers.js';

const run = { tenant: 'acme', runId: 'g-1' };

async function waitingForParcel() {
  const world = guardedWorld();
  const worker = spawnWorker(world);
  await startRun(worker.deps, { ...run, agent: 'support-guarded', input: 'Customer c_77: my order arrived damaged.' });
  await drain(world, worker);
  return { world, worker };
}

describe('the support-guarded demo agent', () => {
  it('waits for the parcel, asks approval for the refund, runs the edited refund once, answers follow-ups, forks from its last turn', async () => {
    const { world, worker } = await waitingForParcel();
    expect(await headOf(world, run)).toMatchObject({ status: 'waiting', waits: [{ kind: 'signal', signal: 'parcel_returned', tool: 'wait_for_return' }] });
    expect(world.ledger.all().filter((e) => e.service === 'payments')).toEqual([]);

    await requestSignal(worker.deps, run, { signal: 'parcel_returned', payload: { trackingId: 'TRK-1', condition: 'damaged' } }, 'warehouse');
    await drain(world, worker);
    const head = await headOf(world, run);
    expect(head).toMatchObject({ status: 'awaiting_approval', waits: [{ kind: 'approval', tool: 'issue_refund' }] });
    const callId = head.waits![0]!.callId;

    await requestApproval(worker.deps, run, { callId, decision: 'edit', args: { orderId: 'o_eb70', amountCents: 1000 }, comment: 'refund $10 of $12.99' }, 'alice');
    await drain(world, worker);
    const done = await logOf(world, run);
    expect(done.state.outcome).toMatchObject({ type: 'completed', answer: { value: 'Refunded order o_eb70 ($10.00) after the parcel came back, and emailed c_77.' } });
    expect(world.ledger.all().filter((e) => e.service === 'payments').map((e) => e.detail.amountCents)).toEqual([1000]);

    await requestMessage(worker.deps, run, { input: 'Thanks! When does the money arrive?' }, 'c_77');
    await drain(world, worker);
    const followed = await logOf(world, run);
    expect(followed.state.outcome).toMatchObject({ type: 'completed', answer: { value: expect.stringContaining('When does the money arrive?') } });

    // Fork the finished run from its last turn (before the follow-up): nothing copied runs again.
    const lastResult = done.events.filter((e) => e.type === 'tool_result').at(-1)!.seq;
    await forkRun(worker.deps, { tenant: run.tenant, from: run.runId, atSeq: lastResult, runId: 'g-1-fork' });
    await drain(world, worker);
    const fork = await logOf(world, { tenant: run.tenant, runId: 'g-1-fork' });
    expect(fork.state.outcome).toMatchObject({ type: 'completed', answer: { value: expect.stringContaining('Refunded order o_eb70 ($10.00)') } });
    expect(world.ledger.all().filter((e) => e.service === 'payments')).toHaveLength(1);
    expect(duplicateEffects(world.ledger.all())).toEqual([]);
  });

  it('tells the customer when the refund is rejected, and when the parcel never comes back', async () => {
    const a = await waitingForParcel();
    await requestSignal(a.worker.deps, run, { signal: 'parcel_returned', payload: { trackingId: 'TRK-2', condition: 'intact' } }, 'warehouse');
    await drain(a.world, a.worker);
    const callId = (await headOf(a.world, run)).waits![0]!.callId;
    await requestApproval(a.worker.deps, run, { callId, decision: 'reject', comment: 'the parcel came back intact' }, 'bob');
    await drain(a.world, a.worker);
    expect((await logOf(a.world, run)).state.outcome).toMatchObject({ answer: { value: 'The refund was not issued: the parcel came back intact. I told c_77.' } });
    expect(a.world.ledger.all().filter((e) => e.service === 'payments')).toEqual([]);

    const b = await waitingForParcel();
    await later(b.world, b.worker, 14 * 86_400_000, 1);
    expect((await logOf(b.world, run)).state.outcome).toMatchObject({ answer: { value: expect.stringContaining('did not come back in time') } });
  });
});
