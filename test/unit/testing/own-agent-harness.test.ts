import { describe, expect, it } from 'vitest';
import {
  BaselineParkedError,
  BaselineUnfinishedError,
  effectLog,
  formatHarnessReport,
  repeatedEffects,
  runCrashHarness,
  SideEffectShapeError,
  type PointReport,
} from 'logbook/testing';
import { shopScenario } from './shop-agent.js';

const failures = (points: PointReport[]) => points.flatMap((p) => p.failures);

describe('crash harness over an application agent of its own', () => {
  it('holds at every point for a correct tool set (rerun read, keyed write, verify, escalate)', async () => {
    const report = await runCrashHarness(shopScenario(), { doubleCrashStride: 9 });
    console.info(formatHarnessReport(report));
    expect(report.baseline).toMatchObject({ status: 'completed', answer: 'Mug reserved, charged and receipted.', steps: 4 });
    expect(report.points.filter((p) => p.kind === 'crash')).toHaveLength(report.baseline.checkpoints);
    expect(report.points.filter((p) => p.kind === 'double-crash').length).toBeGreaterThan(10);
    expect(report.points.filter((p) => p.kind === 'pause').length).toBeGreaterThanOrEqual(8);
    // The escalated charge was answered by the scripted person at some points, from the ledger.
    expect(report.points.some((p) => p.resolutions > 0)).toBe(true);
    expect(report.failed, formatHarnessReport(report)).toBe(0);
  }, 60_000);

  it('catches a non-idempotent tool marked rerun: the charge happens twice, and the message says why', async () => {
    const report = await runCrashHarness(shopScenario({ chargePolicy: 'rerun' }), { doubleCrashStride: 0 });
    const dup = failures(report.points).filter((f) => f.startsWith('side effect charge:t:order-1:'));
    expect(dup.length).toBeGreaterThan(0);
    expect(dup[0]).toMatch(/^side effect charge:t:order-1:\d+-0 happened 2 times: call \d+-0 of tool charge_card \(policy rerun, 2 attempts\); rerun runs a call again after a crash, so only read-only tools may have it/);
    // A crash after the charge and before its result is exactly where it repeats.
    const at = report.points.filter((p) => p.failures.some((f) => f.startsWith('side effect charge:')));
    expect(at.some((p) => p.at[0]?.label.startsWith('after-tool:charge_card'))).toBe(true);
    // The same agent with the right policy holds at those points (the escalate test above).
    expect(failures(report.points).every((f) => f.startsWith('side effect charge:'))).toBe(true);
  }, 60_000);

  it('without a resolver, a point that parks for a person fails naming the park, not a budget reset', async () => {
    const report = await runCrashHarness(shopScenario({ resolver: false }), { doubleCrashStride: 0 });
    const parked = report.points.filter((p) => p.finalStatus === 'parked');
    expect(parked.length).toBeGreaterThan(0);
    for (const p of parked) {
      expect(p.held).toBe(false);
      expect(p.failures).toHaveLength(1);
      expect(p.failures[0]).toMatch(
        /^parked for a person \(unknown_outcome on call \d+-0: charge_card \(\d+-0\) started with no result; it may have happened: a person must decide\) and the scenario has no resolver: give the scenario a resolver$/,
      );
    }
    expect(failures(report.points).join('\n')).not.toMatch(/budget|differs/);
    // Every point that did not park still holds: only the park is reported.
    expect(report.points.filter((p) => !p.held)).toEqual(parked);
  }, 60_000);

  it('a run that fails at a point is named as a failure with its code, not as a different answer', async () => {
    // Exactly the baseline's four model calls: a crash between model_started and its response
    // spends a step that never answered, and the run runs out of steps before it is done.
    const report = await runCrashHarness(shopScenario({ budgets: { maxSteps: 4 } }), { doubleCrashStride: 0, pausePoints: [] });
    const failed = report.points.filter((p) => p.finalStatus === 'failed');
    expect(failed.length).toBeGreaterThan(0);
    for (const p of failed) {
      expect(p.failures[0]).toMatch(/^failed \(budget_exceeded:steps: .+\) where the uninterrupted run completed with "Mug reserved/);
      expect(p.failures.join('\n')).not.toMatch(/below the uninterrupted/);
    }
    // Between a reservation and model_response: the named checkpoints, and the writes there
    // (the reservation's own put, a model_started or the turn's last tool_result that carries it,
    // landed or not, and the response's put before it lands).
    const between = /^(after-append:model_started|after-append:tool_result|before-model|after-model|before-append:model_response|after-write:log\.append|before-write:log\.append)/;
    expect(failed.filter((p) => !between.test(p.at[0]?.label ?? '')).map((p) => p.at[0]?.label)).toEqual([]);
  }, 60_000);

  it('a resolver whose answer the run refuses is named with the park and the answer', async () => {
    // "retry" is for a run-level park; the escalated charge is a call-level one.
    const report = await runCrashHarness({ ...shopScenario(), resolver: () => () => 'retry' }, { doubleCrashStride: 0, pausePoints: [] });
    const refused = report.points.filter((p) => !p.held);
    expect(refused.length).toBeGreaterThan(0);
    for (const p of refused) {
      expect(p.finalStatus).toBe('unfinished');
      expect(p.failures).toEqual([
        expect.stringMatching(/^the scenario resolver answered "retry" to unknown_outcome on call \d+-0, and the run refused it: run has no run-level park to retry or fail; the run is parked at seq \d+ \(last event attention_required \d+-0\)$/),
      ]);
    }
  }, 60_000);

  it('stops with a clear error when the uninterrupted run itself parks, or never finishes', async () => {
    // The app's models no longer serve the pinned id: the very first step parks for missing_model.
    const noModel = runCrashHarness(shopScenario({ noModel: true, resolver: false }));
    await expect(noModel).rejects.toBeInstanceOf(BaselineParkedError);
    await expect(noModel).rejects.toThrow(
      /scenario "shop \(charge_card: escalate\)": the uninterrupted run parked for a person \(missing_model on the run: model scripted:shop is not available\) and the scenario has no resolver: give the scenario a resolver/,
    );
    await expect(noModel).rejects.toMatchObject({ code: 'harness_baseline_parked' });
    // A resolver that keeps answering "retry" to a park that cannot lift: the run never ends.
    const forever = runCrashHarness({ ...shopScenario({ noModel: true }), resolver: () => () => 'retry' });
    await expect(forever).rejects.toBeInstanceOf(BaselineUnfinishedError);
    await expect(forever).rejects.toThrow(/the uninterrupted run did not finish: run order-1 did not settle within 300 iterations \(status parked\); the run is parked at seq \d+ \(last event attention_required\)/);
  }, 60_000);
});

describe('effectLog', () => {
  it('records writes, deduplicated writes and reads with the once-key semantics the harness reads', () => {
    const log = effectLog<{ n: number }>();
    log.write('charge', 'k1', { n: 1 });
    expect(log.writeOnce('reserve', 'k2', { n: 2 })).toEqual({ applied: true, detail: { n: 2 } });
    // The service recognises the key: nothing applied, the first result comes back.
    expect(log.writeOnce('reserve', 'k2', { n: 3 })).toEqual({ applied: false, detail: { n: 2 } });
    log.read('stock', 'k3');
    log.read('stock', 'k3');
    expect(repeatedEffects(log.all())).toEqual([]);
    log.write('charge', 'k1', { n: 1 });
    expect(repeatedEffects(log.all())).toEqual([{ key: 'charge:k1', count: 2 }]);
    expect(log.find('k2')?.detail).toEqual({ n: 2 });
    expect(log.find('k3')).toBeUndefined(); // reads are not writes that landed
    expect(log.all()).toHaveLength(6);
  });

  it('keeps copies: a tool mutating its result afterwards does not rewrite the ledger', () => {
    const log = effectLog<{ n: number }>();
    const detail = { n: 1 };
    log.write('op', 'k', detail);
    detail.n = 99;
    const first = log.all()[0];
    if (first?.detail) first.detail.n = 42;
    expect(log.find('k')?.detail).toEqual({ n: 1 });
  });

  it('a recorded effect without a key is a clear error naming the fix', () => {
    expect(() => repeatedEffects([{ id: 'x' }])).toThrow(SideEffectShapeError);
    expect(() => repeatedEffects([{ id: 'x' }])).toThrow(/has no string `key`.*give the scenario an onceKey\(effect\)/);
  });
});
