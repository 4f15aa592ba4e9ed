// The crash harness freezes a worker INSIDE each tool call (after the call started, before the
// tool's own code reaches a service), lets another worker take the run over, and wakes the frozen
// one after the takeover ended the run, or right before the new worker runs the call again: its
// late request carries its old fencing token and a deadline that has passed. Mutation tests with
// the shop agent's fake services (test/unit/testing/shop-agent.ts): careful services hold at
// every point; services that ignore the token, the deadline, or both, and tools whose key changes
// per attempt or is dropped, fail the harness with a message that says exactly that.
import { describe, expect, it } from 'vitest';
import { formatHarnessReport, runCrashHarness, type HarnessReport } from 'logbook/testing';
import { shopScenario, type ShopOptions } from './shop-agent.js';

const quick = { doubleCrashStride: 0, pausePoints: ['in-tool' as const] };
const failuresOf = (report: HarnessReport) => report.points.flatMap((p) => p.failures);
const lateOf = (report: HarnessReport) => report.points.filter((p) => p.kind === 'late-call');

async function harness(options: ShopOptions & { serviceLagMs?: number }) {
  return runCrashHarness(shopScenario(options), quick);
}

describe('the crash harness and a worker frozen inside a tool call', () => {
  it('careful services (token and deadline checked) hold at every late call, woken at the end or before the rerun', async () => {
    const report = await harness({});
    // Four tool calls in the uninterrupted run, each frozen twice.
    expect(lateOf(report).map((p) => p.at[0]?.label)).toEqual([
      expect.stringMatching(/^in-tool:check_stock#3-0 \(woken after the takeover ended the run\)$/),
      expect.stringMatching(/^in-tool:check_stock#3-0 \(woken before the new worker ran it again\)$/),
      expect.stringMatching(/^in-tool:reserve_item#3-1 /),
      expect.stringMatching(/^in-tool:reserve_item#3-1 /),
      expect.stringMatching(/^in-tool:charge_card#/),
      expect.stringMatching(/^in-tool:charge_card#/),
      expect.stringMatching(/^in-tool:send_receipt#/),
      expect.stringMatching(/^in-tool:send_receipt#/),
    ]);
    expect(report.failed, formatHarnessReport(report)).toBe(0);
  }, 60_000);

  it('services with fencing and deadline checks removed (and no assertLeaseFresh) fail, saying which call reached which service with which token, how late', async () => {
    const report = await harness({ services: 'careless' });
    const late = failuresOf(report).filter((f) => / reached the service \((charge|receipt)\) with fencing token/.test(f));
    expect(late.length, formatHarnessReport(report)).toBeGreaterThan(0);
    // Woken after the takeover: the new worker's token had reached the service first.
    expect(late.some((f) => /^call \d+-0 reached the service \(charge\) with fencing token \d+ after token \d+ was used, \d+ ms after its notAfter, and it was applied \(charge:t:order-1:\d+-0 happened twice\)/.test(f))).toBe(true);
    expect(late.some((f) => /^call \d+-0 reached the service \(receipt\) with fencing token \d+ after token \d+ was used/.test(f))).toBe(true);
    expect(late[0]).toContain('call ctx.assertLeaseFresh() in charge_card right before the write');
    // Only late calls fail: every crash point still holds with these services, and so did every
    // pause point before the late calls existed (the blind spot they close).
    expect(report.points.filter((p) => !p.held).every((p) => p.kind === 'late-call')).toBe(true);
    const before = await runCrashHarness(shopScenario({ services: 'careless' }), { doubleCrashStride: 0, pausePoints: ['before-tool', 'after-tool'] });
    expect(before.failed).toBe(0);
  }, 60_000);

  it('a service that ignores the token (its clock behind the workers\', so its deadline check lets the late call in) fails with the token named', async () => {
    const report = await harness({ services: 'no-token', serviceLagMs: 10 * 60_000 });
    const late = failuresOf(report).filter((f) => / reached the service \(charge\) with fencing token \d+ after token \d+ was used/.test(f));
    expect(late.length, formatHarnessReport(report)).toBeGreaterThan(0);
    // With a clock that agrees, the deadline alone refuses every late call: that holds.
    expect((await harness({ services: 'no-token' })).failed).toBe(0);
  }, 60_000);

  it('a service that ignores the deadline fails where only the deadline could tell: the late charge lands between the look and the rerun', async () => {
    const report = await harness({ services: 'no-deadline' });
    const late = failuresOf(report).filter((f) => / reached the service \(charge\) with fencing token \d+, \d+ ms after its notAfter, and it was applied/.test(f));
    expect(late.length, formatHarnessReport(report)).toBeGreaterThan(0);
    const at = report.points.filter((p) => p.failures.some((f) => late.includes(f)));
    expect(at.every((p) => p.at[0]?.label.endsWith('(woken before the new worker ran it again)'))).toBe(true);
  }, 60_000);

  it('a key built per attempt is reported as two different keys, not only as a differing answer', async () => {
    const report = await harness({ reserveKey: 'attempt' });
    const keys = failuresOf(report).filter((f) => f.includes('reached the service with two different keys'));
    expect(keys.length, formatHarnessReport(report)).toBeGreaterThan(0);
    expect(keys[0]).toMatch(
      /^call 3-1 reached the service with two different keys \(reserve\): "t:order-1:3-1:attempt-1" \(attempt 1, token \d+\), "t:order-1:3-1:attempt-2" \(attempt 2, token \d+\)\. Tool reserve_item must send the same idempotency key on every attempt/,
    );
    expect(keys[0]).not.toContain('does not pass it on');
  }, 60_000);

  it('a dropped key (a new one each time) is reported as such', async () => {
    const report = await harness({ reserveKey: 'random' });
    const keys = failuresOf(report).filter((f) => / reached the service with (two|\d+) different keys \(reserve\)/.test(f));
    expect(keys.length, formatHarnessReport(report)).toBeGreaterThan(0);
    expect(keys[0]).toContain('none of them is its ctx.idempotencyKey "t:order-1:3-1": the tool does not pass it on');
  }, 60_000);
});
