import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineWorkflow } from '../../../lib/authoring/define-workflow.js';
import { requestApproval, requestSignal } from '../../../lib/engine/control-requests.js';
import { ValidationError } from '../../../lib/core/errors.js';
import { SignalNotAwaitedError } from '../../../lib/engine/control-errors.js';
import { drain, headOf, later } from '../control/helpers.js';
import { logOf } from '../engine/helpers.js';
import { startAndDrain, workflowWorld } from './world.js';

const review = defineWorkflow({
  name: 'review',
  version: '1',
  input: z.object({ amount: z.number() }),
  async run(ctx, input) {
    const decision = await ctx.waitForSignal('reviewed', {
      payload: z.object({ approve: z.boolean(), note: z.string().optional() }),
      timeoutSeconds: 3 * 86_400,
    });
    if (decision.timedOut) return 'no answer in time';
    const approval = await ctx.approval('refund', { args: { amount: input.amount }, schema: z.object({ amount: z.number().max(500) }) });
    if (!approval.approved) return `refused by ${approval.by}: ${approval.reason}`;
    return `refund ${approval.args.amount} (${decision.payload.approve ? 'approved' : 'declined'} by ${decision.sentBy})`;
  },
});

describe('waiting for a signal and an approval', () => {
  it('waits holding no Lambda, takes a typed signal through the API, then an edited approval bound to its arguments', async () => {
    const t = workflowWorld({ workflows: [review] });
    const first = await startAndDrain(t, 'review', { amount: 900 });
    expect(first.types).toEqual(['run_started', 'op_started']);
    expect(first.events[1]).toMatchObject({
      op: 1,
      kind: 'signal',
      name: 'reviewed',
      wait: { kind: 'signal', signal: 'reviewed', until: t.world.clock.now() + 3 * 86_400_000 },
    });
    const head = await headOf(t.world, t.run);
    expect(head).toMatchObject({ status: 'waiting', wakeAt: t.world.clock.now() + 3 * 86_400_000 });
    expect(head.waits).toEqual([{ callId: 'op-1', tool: 'reviewed', kind: 'signal', seq: 2, signal: 'reviewed', until: t.world.clock.now() + 3 * 86_400_000 }]);
    expect(head.lease).toBeUndefined();

    // A payload that does not fit the pinned JSON Schema is a 400 with its path; nothing is queued.
    await expect(requestSignal(t.worker.deps, t.run, { signal: 'reviewed', payload: { approve: 'yes' } }, 'alice')).rejects.toBeInstanceOf(ValidationError);
    await expect(requestSignal(t.worker.deps, t.run, { signal: 'other', payload: {} }, 'alice')).rejects.toBeInstanceOf(SignalNotAwaitedError);
    expect(await requestSignal(t.worker.deps, t.run, { signal: 'reviewed', payload: { approve: true } }, 'alice')).toEqual({
      inboxId: 'signal-op-1',
      callId: 'op-1',
    });
    await drain(t.world, t.worker);
    const waiting = await headOf(t.world, t.run);
    expect(waiting.status).toBe('awaiting_approval');
    const approval = waiting.waits?.[0];
    expect(approval).toMatchObject({ callId: 'op-2', kind: 'approval', tool: 'refund' });

    // An edit must fit the approval's schema; a decision about other arguments is refused.
    await expect(requestApproval(t.worker.deps, t.run, { callId: 'op-2', decision: 'edit', args: { amount: 900 } }, 'bob')).rejects.toBeInstanceOf(
      ValidationError,
    );
    await expect(requestApproval(t.worker.deps, t.run, { callId: 'op-2', decision: 'approve', argsHash: '0'.repeat(64) }, 'bob')).rejects.toThrow(/look again/);
    await requestApproval(t.worker.deps, t.run, { callId: 'op-2', decision: 'edit', args: { amount: 450 }, argsHash: approval!.argsHash! }, 'bob');
    await drain(t.world, t.worker);
    const { state, events } = await logOf(t.world, t.run);
    expect(events.find((e) => e.type === 'op_result' && e.op === 1)).toMatchObject({ source: 'signal', sentBy: 'alice', inboxId: 'signal-op-1' });
    expect(state.outcome).toMatchObject({ type: 'completed', answer: { kind: 'inline', value: 'refund 450 (approved by alice)' } });
  });

  it('a signal that never comes times out at its deadline (the sweeper wakes the run) and the code sees it', async () => {
    const t = workflowWorld({ workflows: [review] });
    await startAndDrain(t, 'review', { amount: 10 });
    const early = await later(t.world, t.worker, 86_400_000, 1);
    expect(early.woken).toBe(0);
    await later(t.world, t.worker, 2 * 86_400_000, 2);
    const { state } = await logOf(t.world, t.run);
    expect(state.outcome).toMatchObject({ type: 'completed', answer: { kind: 'inline', value: 'no answer in time' } });
  });
});
