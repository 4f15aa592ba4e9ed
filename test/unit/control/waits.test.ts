import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { requestCancel } from '../../../lib/engine/requests.js';
import { requestSignal } from '../../../lib/engine/control-requests.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { sweep } from '../../../lib/engine/sweep.js';
import { sleepTool, waitForSignal } from '../../../lib/authoring/waits.js';
import type { ModelRequest } from '../../../lib/core/messages.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { logOf } from '../engine/helpers.js';
import { drain, headOf, later } from './helpers.js';

const lastTool = (r: ModelRequest) => [...r.messages].reverse().find((m) => m.role === 'tool');

const waitForPayment = waitForSignal({
  name: 'wait_for_payment',
  description: 'Wait until the bank confirms the transfer.',
  signal: 'payment_received',
  payload: z.object({ amountCents: z.number().int().positive(), reference: z.string().min(1) }),
  timeoutSeconds: 3600,
});

function paymentWorld() {
  return scriptedWorld({
    tools: [waitForPayment, sleepTool({ maxSeconds: 900 })],
    script: [
      { text: 'Waiting for the transfer.', calls: [{ name: 'wait_for_payment', args: {} }] },
      (r) => ({ text: `payment: ${lastTool(r)?.content ?? 'none'}` }),
    ],
  });
}

async function waitingRun() {
  const t = paymentWorld();
  await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'ship when paid' });
  await drain(t.world, t.worker);
  return t;
}

describe('durable waits for signals', () => {
  it('records tool_started with the wait, holds no Lambda while waiting, and completes with the signal payload', async () => {
    const t = await waitingRun();
    const head = await headOf(t.world, t.run);
    const { events, state } = await logOf(t.world, t.run);
    const started = events.find((e) => e.type === 'tool_started');
    expect(started).toMatchObject({ callId: '3-0', wait: { kind: 'signal', signal: 'payment_received', until: t.world.clock.now() + 3_600_000 } });
    expect(state.calls['3-0']?.status).toBe('started');
    // Waiting: no tick queued, no lease held, woken only at the timeout (or by a signal).
    expect(head).toMatchObject({ status: 'waiting', wakeAt: t.world.clock.now() + 3_600_000 });
    expect(head.lease).toBeUndefined();
    expect(head.waits).toEqual([{ callId: '3-0', tool: 'wait_for_payment', kind: 'signal', seq: 3, signal: 'payment_received', until: t.world.clock.now() + 3_600_000 }]);
    expect(t.storage.queue.take()).toBeUndefined();
    await t.world.clock.advance(3_000_000);
    expect((await sweep(t.worker.deps)).woken).toBe(0);

    const sent = await requestSignal(t.worker.deps, t.run, { signal: 'payment_received', payload: { amountCents: 4200, reference: 'TX-9' } }, 'bank-webhook');
    expect(sent).toEqual({ inboxId: 'signal-3-0', callId: '3-0' });
    await drain(t.world, t.worker);
    const after = await logOf(t.world, t.run);
    expect(after.events.find((e) => e.type === 'tool_result')).toMatchObject({
      callId: '3-0',
      ok: true,
      source: 'signal',
      sentBy: 'bank-webhook',
      inboxId: 'signal-3-0',
      output: { kind: 'inline', value: { amountCents: 4200, reference: 'TX-9' } },
    });
    expect(after.state.outcome).toMatchObject({ type: 'completed', answer: { value: 'payment: {"amountCents":4200,"reference":"TX-9"}' } });
  });

  it('refuses a payload that does not fit the schema (400 with paths) and writes nothing', async () => {
    const t = await waitingRun();
    const before = (await headOf(t.world, t.run)).inboxVersion;
    await expect(requestSignal(t.worker.deps, t.run, { signal: 'payment_received', payload: { amountCents: -1 } }, 'x')).rejects.toMatchObject({
      code: 'validation_error',
      issues: [
        { path: 'payload.amountCents', message: expect.stringContaining('>0') },
        { path: 'payload.reference', message: expect.any(String) },
      ],
    });
    expect((await headOf(t.world, t.run)).inboxVersion).toBe(before);
    expect(await t.storage.inbox.list(t.run)).toEqual([]);
  });

  it('applies a signal sent twice once: the second is refused, and a duplicate item is ignored', async () => {
    const t = await waitingRun();
    const payload = { amountCents: 1, reference: 'a' };
    await requestSignal(t.worker.deps, t.run, { signal: 'payment_received', payload }, 'bank');
    // The identical request again (a retry) is accepted; another payload for the same call is not.
    await expect(requestSignal(t.worker.deps, t.run, { signal: 'payment_received', payload }, 'bank')).resolves.toMatchObject({ callId: '3-0' });
    await expect(requestSignal(t.worker.deps, t.run, { signal: 'payment_received', payload: { ...payload, reference: 'b' } }, 'bank')).rejects.toMatchObject({
      code: 'signal_conflict',
      message: expect.stringContaining('already received'),
    });
    // Even a second item that slipped past the API (other id, same call) completes nothing more.
    await t.storage.inbox.put(t.run, { id: 'zz-other', kind: 'complete_call', by: 'rogue', callId: '3-0', via: 'signal', signal: 'payment_received', ok: true, output: { amountCents: 2, reference: 'c' } });
    await drain(t.world, t.worker);
    const { events, state } = await logOf(t.world, t.run);
    expect(events.filter((e) => e.type === 'tool_result')).toHaveLength(1);
    expect(state.calls['3-0']?.result?.output).toEqual({ kind: 'inline', value: payload });
    expect(await t.storage.inbox.list(t.run)).toEqual([]);
    // Once applied, the head waits for nothing: a late signal is a 409 naming the state.
    await expect(requestSignal(t.worker.deps, t.run, { signal: 'payment_received', payload }, 'bank')).rejects.toThrow('run r is completed: it takes no signals');
  });

  it('times out at wakeAt: the sweeper wakes the run, the call gets a timeout result the model sees', async () => {
    const t = await waitingRun();
    const { woken } = await later(t.world, t.worker, 3_600_000, 1);
    expect(woken).toBe(1);
    const { events, state } = await logOf(t.world, t.run);
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ callId: '3-0', ok: false, source: 'timeout', errorCode: 'signal_timeout' });
    expect(state.outcome?.type).toBe('completed');
    expect(JSON.stringify(state.outcome)).toContain('signal_timeout');
    // A signal after the wait ended is refused, not queued.
    await expect(requestSignal(t.worker.deps, t.run, { signal: 'payment_received', payload: { amountCents: 1, reference: 'x' } }, 'bank')).rejects.toMatchObject({ code: 'run_ended' });
  });

  it('refuses a signal nobody waits for, naming what the run waits for', async () => {
    const t = await waitingRun();
    await expect(requestSignal(t.worker.deps, t.run, { signal: 'refund_received', payload: {} }, 'x')).rejects.toThrow(
      'no call of run r waits for signal "refund_received": it waits for "payment_received"',
    );
    await expect(requestSignal(t.worker.deps, { tenant: 't', runId: 'nope' }, { signal: 'payment_received', payload: {} }, 'x')).rejects.toMatchObject({ code: 'run_not_found' });
  });

  it('a cancel while waiting ends the run with nothing unresolved', async () => {
    const t = await waitingRun();
    await requestCancel(t.worker.deps, t.run, 'ops');
    await drain(t.world, t.worker);
    const { state } = await logOf(t.world, t.run);
    expect(state.outcome).toMatchObject({ type: 'cancelled', unresolved: [] });
  });

  it('never waits past the run deadline', async () => {
    const t = scriptedWorld({ tools: [waitForPayment], budgets: { deadlineSeconds: 600 }, script: [{ calls: [{ name: 'wait_for_payment', args: {} }] }, { text: 'x' }] });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    await drain(t.world, t.worker);
    expect((await headOf(t.world, t.run)).wakeAt).toBe(t.world.clock.now() + 600_000);
    await later(t.world, t.worker, 600_000, 1);
    const { state } = await logOf(t.world, t.run);
    expect(state.calls['3-0']?.result).toMatchObject({ ok: false, source: 'timeout' });
    expect(state.outcome).toMatchObject({ type: 'failed', code: 'budget_exceeded:deadline' });
  });
});

describe('sleep', () => {
  it('resumes after the time with no compute in between, and refuses more than the maximum', async () => {
    const t = scriptedWorld({
      tools: [sleepTool({ maxSeconds: 900 })],
      script: [
        { calls: [{ name: 'sleep', args: { seconds: 86_400 } }] },
        { calls: [{ name: 'sleep', args: { seconds: 600 } }] },
        (r) => ({ text: `woke: ${lastTool(r)?.content}` }),
      ],
    });
    // The bound is in the pinned schema the model sees.
    expect(t.agent.pinnedTools[0]?.inputSchema).toMatchObject({ properties: { seconds: { maximum: 900 } } });
    expect(t.agent.pinnedTools[0]?.wait).toEqual({ kind: 'timer', maxMs: 900_000 });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'nap' });
    const results = await drain(t.world, t.worker);
    expect(results.at(-1)?.outcome).toBe('waiting');
    const { events } = await logOf(t.world, t.run);
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ callId: '3-0', ok: false, source: 'validation', errorCode: 'invalid_arguments' });
    const head = await headOf(t.world, t.run);
    expect(head).toMatchObject({ status: 'waiting', wakeAt: t.world.clock.now() + 600_000 });
    const steps = results.length;
    // Nothing runs before the time: the sweeper finds nothing due.
    expect((await later(t.world, t.worker, 599_000, 1)).woken).toBe(0);
    const woke = await later(t.world, t.worker, 1_000, 2);
    expect(woke.woken).toBe(1);
    const done = await logOf(t.world, t.run);
    expect(done.events.filter((e) => e.type === 'tool_result').at(-1)).toMatchObject({ callId: '6-0', ok: true, source: 'timer' });
    expect(done.state.outcome?.type).toBe('completed');
    // One step up to the sleep, one after it: nothing polls in between.
    expect([steps, woke.results.length]).toEqual([1, 1]);
  });
});
