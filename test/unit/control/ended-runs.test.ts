// An ended run (completed, failed, cancelled) lists nothing pending and refuses every control
// request with RunEndedError (409 run_ended): the worker would drop the inbox item anyway, so
// accepting it would be a lie. A follow-up message to a completed run is the exception: it reopens it.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runView } from '../../../lib/api/run-views.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { waitForSignal } from '../../../lib/authoring/waits.js';
import type { EventOf } from '../../../lib/core/events.js';
import { RunEndedError } from '../../../lib/engine/control-errors.js';
import { requestApproval, requestMessage, requestSignal } from '../../../lib/engine/control-requests.js';
import { requestCancel, requestResolution, requestRunAction } from '../../../lib/engine/requests.js';
import { runStep } from '../../../lib/engine/step-runner.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { spawnWorker } from '../../../lib/testing/world.js';
import { drain, headOf } from './helpers.js';

const refund = defineTool({
  name: 'issue_refund',
  version: '1',
  description: 'Refund.',
  input: z.object({ orderId: z.string() }),
  approval: 'always',
  execute: async () => ({ refunded: true }),
});
const parcel = waitForSignal({
  name: 'wait_for_return',
  description: 'Wait.',
  signal: 'parcel_returned',
  payload: z.object({ id: z.string() }),
  timeoutSeconds: 600,
});

function world(first: 'refund' | 'wait') {
  return scriptedWorld({
    tools: [refund, parcel],
    script: [
      { calls: [first === 'refund' ? { name: 'issue_refund', args: { orderId: 'o-1' } } : { name: 'wait_for_return', args: {} }] },
      { text: 'done' },
      { text: 'again' },
    ],
  });
}

async function viewOf(t: ReturnType<typeof world>) {
  const head = await headOf(t.world, t.run);
  const started = (await t.storage.log.readOne(t.run, 1)) as EventOf<'run_started'>;
  const terminal = head.outcome ? await t.storage.log.readOne(t.run, head.outcome.seq) : undefined;
  return runView(head, started, terminal as never);
}

/** Every control request but a message, each expected to be refused as run_ended naming the status. */
async function expectAllRefused(t: ReturnType<typeof world>, status: string) {
  const deps = t.worker.deps;
  const attempts = {
    approve: requestApproval(deps, t.run, { callId: '3-0', decision: 'approve' }, 'ops'),
    edit: requestApproval(deps, t.run, { callId: '3-0', decision: 'edit', args: { orderId: 'o-2' } }, 'ops'),
    signal: requestSignal(deps, t.run, { signal: 'parcel_returned', payload: { id: 'p' } }, 'hook'),
    resolve: requestResolution(deps, t.run, { callId: '3-0', outcome: 'failed' }, 'ops'),
    retry: requestRunAction(deps, t.run, 'retry', 'ops'),
    fail: requestRunAction(deps, t.run, 'fail', 'ops'),
    cancel: requestCancel(deps, t.run, 'ops'),
  };
  for (const [what, attempt] of Object.entries(attempts)) {
    const error = await attempt.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error, what).toBeInstanceOf(RunEndedError);
    expect((error as RunEndedError).message, what).toMatch(new RegExp(`^run ${t.run.runId} is ${status}: `));
  }
  expect(await t.storage.inbox.list(t.run), 'nothing was put for the worker to drop').toEqual([]);
}

describe('an ended run offers nothing and refuses every control request', () => {
  it('cancelled while a call awaits approval: the head lists no wait, the approval is refused (was 202 "queued")', async () => {
    const t = world('refund');
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'refund' });
    await drain(t.world, t.worker);
    expect((await headOf(t.world, t.run)).waits).toMatchObject([{ kind: 'approval', callId: '3-0' }]);
    await requestCancel(t.worker.deps, t.run, 'ops');
    await drain(t.world, t.worker);
    const head = await headOf(t.world, t.run);
    expect(head).toMatchObject({ status: 'cancelled', attention: [] });
    expect(head.waits ?? []).toEqual([]);
    const view = await viewOf(t);
    expect(view.waiting).toBeUndefined();
    expect(view.attention).toEqual([]);
    await expectAllRefused(t, 'cancelled');
    await expect(requestMessage(t.worker.deps, t.run, { input: 'hi' }, 'c')).rejects.toMatchObject({ code: 'message_conflict' });
  });

  it('cancelled while waiting for a signal: the signal is refused', async () => {
    const t = world('wait');
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'wait' });
    await drain(t.world, t.worker);
    expect((await headOf(t.world, t.run)).waits).toMatchObject([{ kind: 'signal' }]);
    await requestCancel(t.worker.deps, t.run, 'ops');
    await drain(t.world, t.worker);
    const head = await headOf(t.world, t.run);
    expect(head.status).toBe('cancelled');
    expect(head.waits ?? []).toEqual([]);
    await expectAllRefused(t, 'cancelled');
  });

  it('cancelled with an escalated call open: no attention to resolve, the call shown as unresolved', async () => {
    const pay = defineTool({ name: 'pay', version: '1', description: 'p', input: z.object({}), execute: async () => 'paid' });
    const t = scriptedWorld({ tools: [pay], script: [{ calls: [{ name: 'pay', args: {} }] }, { text: 'x' }] });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    const dying = spawnWorker(t.world, {
      at: (p) => {
        if (p === 'after-tool') throw new Error('boom');
      },
    });
    await runStep(dying.deps, t.storage.queue.take()!.tick, { owner: 'w1', deadlineAt: t.world.clock.now() + 300_000 }).catch(() => undefined);
    dying.kill();
    const parked = await driveRun(t.world, t.run, { worker: () => t.worker });
    expect(parked.head.attention).toMatchObject([{ callId: '3-0' }]);
    await requestCancel(t.worker.deps, t.run, 'ops');
    await driveRun(t.world, t.run, { worker: () => t.worker });
    const view = await viewOf(t as ReturnType<typeof world>);
    expect(view).toMatchObject({ status: 'cancelled', attention: [], unresolved: ['3-0'] });
    await expect(requestResolution(t.worker.deps, t.run, { callId: '3-0', outcome: 'succeeded' }, 'ops')).rejects.toThrow(
      'run r is cancelled: it takes no resolutions; a call a cancel left unresolved is listed under `unresolved`, to check by hand',
    );
  });

  it('completed: every control request refused, a follow-up message taken', async () => {
    const t = world('refund');
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'refund' });
    await drain(t.world, t.worker);
    await requestApproval(t.worker.deps, t.run, { callId: '3-0', decision: 'approve' }, 'ops');
    await drain(t.world, t.worker);
    expect((await headOf(t.world, t.run)).status).toBe('completed');
    await expectAllRefused(t, 'completed');
    expect(await requestMessage(t.worker.deps, t.run, { input: 'one more' }, 'c')).toMatchObject({ inboxId: expect.any(String) });
  });

  it('failed on its head by a person: a retry no longer revives it', async () => {
    const t = world('refund');
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'refund' });
    const head = await headOf(t.world, t.run);
    await t.storage.heads.setPark(t.run, { reason: 'poisoned', detail: 'claims kept dying', at: 0 }, 'parked');
    await requestRunAction(t.worker.deps, t.run, 'fail', 'ops');
    await drain(t.world, t.worker);
    expect(await headOf(t.world, t.run)).toMatchObject({ status: 'failed', park: { reason: 'poisoned' } });
    expect(head.status).toBe('running');
    await expectAllRefused(t, 'failed');
  });

  it('a head projected before this rule (cancelled, still listing a wait and attention) is shown with nothing pending', async () => {
    const t = world('refund');
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'refund' });
    await drain(t.world, t.worker);
    await requestCancel(t.worker.deps, t.run, 'ops');
    await drain(t.world, t.worker);
    const head = await headOf(t.world, t.run);
    const stale = {
      ...head,
      waits: [{ callId: '3-0', tool: 'issue_refund', kind: 'approval' as const, seq: 4, argsHash: 'a'.repeat(64) }],
      attention: [{ seq: 5, reason: 'unknown_outcome' as const, detail: 'x', callId: '3-0' }],
    };
    const started = (await t.storage.log.readOne(t.run, 1)) as EventOf<'run_started'>;
    const view = runView(stale, started, undefined);
    expect(view.waiting).toBeUndefined();
    expect(view.attention).toEqual([]);
  });
});
