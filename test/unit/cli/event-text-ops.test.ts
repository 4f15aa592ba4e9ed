// A workflow operation's events as `runs watch` and `runs events` say them: one line each, naming
// the operation's number, kind and name, and what it waits for, returned, threw or verified.
import { describe, expect, it } from 'vitest';
import { describeEvent } from '../../../dev/cli/event-text.js';

const at = Date.UTC(2026, 10, 2);
const inline = (value: unknown) => ({ kind: 'inline', value });

describe('describeEvent: workflow operations', () => {
  it('says a started step with its policy and attempt, and each kind of wait', () => {
    expect(describeEvent({ type: 'op_started', op: 3, kind: 'step', name: 'charge', attempt: 1, policy: 'idempotency_key', notAfter: at })).toBe(
      'op 3 step charge started (idempotency_key)',
    );
    expect(describeEvent({ type: 'op_started', op: 3, kind: 'step', name: 'charge', attempt: 2, policy: 'verify', notAfter: at })).toBe(
      'op 3 step charge started, attempt 2 (verify)',
    );
    expect(describeEvent({ type: 'op_started', op: 4, kind: 'sleep', name: 'sleep', attempt: 1, notAfter: at, wait: { kind: 'timer', until: at } })).toBe(
      'op 4 sleep started; sleeps until 2026-11-02T00:00:00.000Z',
    );
    expect(
      describeEvent({
        type: 'op_started',
        op: 2,
        kind: 'signal',
        name: 'shipped',
        attempt: 1,
        notAfter: at,
        wait: { kind: 'signal', signal: 'shipped', until: at },
      }),
    ).toBe('op 2 signal shipped started; waits for signal shipped until 2026-11-02T00:00:00.000Z');
    const child = { kind: 'child', runId: 'p-cop-5', definition: { kind: 'agent', name: 'researcher', version: '2' }, until: at };
    expect(describeEvent({ type: 'op_started', op: 5, kind: 'child', name: 'researcher', attempt: 1, notAfter: at, wait: child })).toBe(
      'op 5 child researcher started; child run p-cop-5 (agent researcher@2)',
    );
    expect(
      describeEvent({
        type: 'op_started',
        op: 6,
        kind: 'approval',
        name: 'send refund',
        attempt: 1,
        notAfter: at,
        wait: { kind: 'approval', argsHash: 'ab'.repeat(32) },
      }),
    ).toBe('op 6 approval send refund started; awaits approval (args abababababab)');
  });

  it('says a result, a retry and a verification', () => {
    expect(describeEvent({ type: 'op_result', op: 1, kind: 'step', name: 'load', ok: true, output: inline({ cents: 5 }), source: 'step' })).toBe(
      'op 1 step load succeeded from step: {"cents":5}',
    );
    expect(describeEvent({ type: 'op_result', op: 1, kind: 'step', name: 'load', ok: true, output: inline(null), source: 'step', void: true })).toBe(
      'op 1 step load succeeded from step',
    );
    expect(
      describeEvent({
        type: 'op_result',
        op: 2,
        kind: 'step',
        name: 'charge',
        ok: false,
        output: inline({ error: 'card_declined' }),
        source: 'step',
        errorCode: 'card_declined',
      }),
    ).toBe('op 2 step charge failed card_declined from step: {"error":"card_declined"}');
    expect(
      describeEvent({ type: 'op_result', op: 6, kind: 'approval', name: 'send', ok: true, output: inline({ cents: 1 }), source: 'human', sentBy: 'alice' }),
    ).toBe('op 6 approval send succeeded from human by alice: {"cents":1}');
    expect(
      describeEvent({ type: 'op_retry', op: 2, kind: 'step', name: 'charge', attempt: 1, error: { code: 'step_error', message: 'timeout' }, retryAt: at }),
    ).toBe('op 2 step charge attempt 1 failed (step_error: timeout); next attempt at 2026-11-02T00:00:00.000Z');
    expect(describeEvent({ type: 'op_verified', op: 2, kind: 'step', name: 'charge', status: 'not_landed' })).toBe('op 2 step charge verified: not_landed');
  });
});
