import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ToolOutcomeUnknownError } from '../../../lib/core/errors.js';
import { requestResolution } from '../../../lib/engine/requests.js';
import { runStep } from '../../../lib/engine/step-runner.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { type ToolDefinition } from '../../../lib/authoring/types.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { spawnWorker } from '../../../lib/testing/world.js';
import { MAX_CRASHED_TOOL_ATTEMPTS } from '../../../lib/core/limits.js';
import { haltAt, logOf } from './helpers.js';

type Policy = 'rerun' | 'idempotency_key' | 'verify' | 'escalate';

/** A tool whose first execution "lands" and then its worker dies before recording the result. */
function effectTool(policy: Policy, effects: string[], opts: { dedupe?: boolean; unknownFirst?: boolean; timeoutMs?: number } = {}): ToolDefinition<{ n: number }> {
  let calls = 0;
  return defineTool({
    name: 'act',
    version: '1',
    description: 'does something',
    input: z.object({ n: z.number() }),
    policy,
    timeoutMs: opts.timeoutMs ?? 5_000,
    async execute({ n }, ctx) {
      calls++;
      if (!(opts.dedupe && effects.includes(ctx.idempotencyKey))) effects.push(ctx.idempotencyKey);
      if (opts.unknownFirst && calls === 1) throw new ToolOutcomeUnknownError('network timeout after send');
      return { done: n, attempt: ctx.attempt, key: ctx.idempotencyKey, fencingToken: ctx.fencingToken };
    },
    ...(policy === 'verify'
      ? { verify: async (_a: { n: number }, ctx: { idempotencyKey: string }) => (effects.includes(ctx.idempotencyKey) ? { status: 'landed' as const, output: { verified: true } } : { status: 'not_landed' as const }) }
      : {}),
  });
}

const script = [{ calls: [{ name: 'act', args: { n: 1 } }] }, { text: 'finished' }];

async function crashAfterTool(policy: Policy, opts: { dedupe?: boolean; unknownFirst?: boolean; timeoutMs?: number } = {}) {
  const effects: string[] = [];
  const t = scriptedWorld({ tools: [effectTool(policy, effects, opts)], script, graceMs: 1_000 });
  await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
  const dying = spawnWorker(t.world, haltAt('after-tool'));
  const first = t.storage.queue.take()!;
  await expect(runStep(dying.deps, first.tick, { owner: 'w1', deadlineAt: t.world.clock.now() + 300_000 })).rejects.toThrow('worker halted');
  dying.kill();
  return { t, effects };
}

describe('side-effect policies for a started call with no result', () => {
  it('applies no policy before notAfter + grace: the run waits and sets wakeAt', async () => {
    // The call may run for 200 s, longer than the 60 s lease: a new holder must wait it out.
    const { t } = await crashAfterTool('rerun', { timeoutMs: 200_000 });
    const head0 = await t.storage.heads.getHead(t.run);
    await t.world.clock.advance((head0?.lease?.until ?? 0) - t.world.clock.now() + 1);
    const w2 = spawnWorker(t.world);
    const r = await runStep(w2.deps, t.run, { owner: 'w2', deadlineAt: t.world.clock.now() + 300_000 });
    expect(r.outcome).toBe('waiting');
    const head = await t.storage.heads.getHead(t.run);
    const { state } = await logOf(t.world, t.run);
    const call = state.calls['3-0']!;
    expect(head?.status).toBe('waiting');
    expect(head?.wakeAt).toBe(call.notAfter! + 1_000);
    expect(call.attempt).toBe(1);
  });

  it('rerun: runs a read-only call again after the deadline', async () => {
    const { t, effects } = await crashAfterTool('rerun');
    const w = spawnWorker(t.world);
    const done = await driveRun(t.world, t.run, { worker: () => w });
    expect(done.head.status).toBe('completed');
    expect(effects).toHaveLength(2);
    const { state } = await logOf(t.world, t.run);
    expect(state.calls['3-0']!.attempt).toBe(2);
  });

  it('idempotency_key: reruns with the same key, and the service dedupes', async () => {
    const { t, effects } = await crashAfterTool('idempotency_key', { dedupe: true });
    const w = spawnWorker(t.world);
    await driveRun(t.world, t.run, { worker: () => w });
    expect(effects).toEqual(['t:r:3-0']);
    const { events } = await logOf(t.world, t.run);
    const result = events.find((e) => e.type === 'tool_result') as unknown as { output: { value: { key: string; attempt: number } } };
    expect(result.output.value).toMatchObject({ key: 't:r:3-0', attempt: 2 });
  });

  it('verify: a call that landed is recorded from verify() without running again', async () => {
    const { t, effects } = await crashAfterTool('verify');
    const w = spawnWorker(t.world);
    await driveRun(t.world, t.run, { worker: () => w });
    expect(effects).toHaveLength(1);
    const { types, state } = await logOf(t.world, t.run);
    expect(types).toContain('tool_verified');
    expect(state.calls['3-0']!.result).toMatchObject({ ok: true, source: 'verify' });
  });

  it('verify: a call that did not land runs again', async () => {
    const effects: string[] = [];
    const t = scriptedWorld({ tools: [effectTool('verify', effects)], script });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    const dying = spawnWorker(t.world, haltAt('before-tool')); // dies after tool_started, before acting
    await expect(runStep(dying.deps, t.storage.queue.take()!.tick, { owner: 'w1', deadlineAt: t.world.clock.now() + 300_000 })).rejects.toThrow();
    dying.kill();
    const w = spawnWorker(t.world);
    await driveRun(t.world, t.run, { worker: () => w });
    expect(effects).toHaveLength(1);
    const { state, events } = await logOf(t.world, t.run);
    expect(events.find((e) => e.type === 'tool_verified')).toMatchObject({ status: 'not_landed' });
    expect(state.calls['3-0']).toMatchObject({ attempt: 2, result: { ok: true, source: 'tool' } });
  });

  it('escalate: parks for a person; "succeeded" records the result and the run goes on', async () => {
    const { t, effects } = await crashAfterTool('escalate');
    const w = spawnWorker(t.world);
    const parked = await driveRun(t.world, t.run, { worker: () => w });
    expect(parked.head.status).toBe('parked');
    expect(parked.head.attention).toMatchObject([{ reason: 'unknown_outcome', callId: '3-0' }]);
    await requestResolution(w.deps, t.run, { callId: '3-0', outcome: 'succeeded', result: { refunded: true } }, 'alice');
    // The first resolution wins; a second one is refused by the head check or ignored by ingest.
    const second = requestResolution(w.deps, t.run, { callId: '3-0', outcome: 'failed' }, 'bob');
    await second.catch(() => undefined);
    const done = await driveRun(t.world, t.run, { worker: () => w });
    expect(done.head.status).toBe('completed');
    expect(effects).toHaveLength(1);
    const { state, events } = await logOf(t.world, t.run);
    expect(state.calls['3-0']!.result).toMatchObject({ ok: true, source: 'human', output: { value: { refunded: true } } });
    expect(events.filter((e) => e.type === 'attention_resolved')).toHaveLength(1);
  });

  it('escalate: rerun is refused before the call deadline and allowed after', async () => {
    const { t } = await crashAfterTool('escalate', { unknownFirst: false });
    const w = spawnWorker(t.world);
    await driveRun(t.world, t.run, { worker: () => w });
    // The sweeper waited past notAfter + grace before escalating, so rerun is now allowed.
    await expect(requestResolution(w.deps, t.run, { callId: '3-0', outcome: 'rerun' }, 'alice')).resolves.toBeDefined();
    await expect(requestResolution(w.deps, t.run, { callId: '9-9', outcome: 'rerun' }, 'alice')).rejects.toMatchObject({ code: 'request_conflict' });
  });

  it('a tool that says its outcome is unknown is treated like a crash, never as a failure', async () => {
    const effects: string[] = [];
    const t = scriptedWorld({ tools: [effectTool('escalate', effects, { unknownFirst: true })], script });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    const parked = await driveRun(t.world, t.run, { worker: () => t.worker });
    expect(parked.head.status).toBe('parked');
    const { types } = await logOf(t.world, t.run);
    expect(types).not.toContain('tool_result');
  });

  it('hands tools the idempotency key tenant:runId:callId and the lease epoch as fencing token', async () => {
    const effects: string[] = [];
    const t = scriptedWorld({ tools: [effectTool('rerun', effects)], script });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    await driveRun(t.world, t.run, { worker: () => t.worker });
    const { events } = await logOf(t.world, t.run);
    const result = events.find((e) => e.type === 'tool_result') as unknown as { output: { value: Record<string, unknown> } };
    expect(result.output.value).toMatchObject({ key: 't:r:3-0', fencingToken: 1 });
  });
});

describe('bounded retries of a started call', () => {
  // A read-only call's starts that die with their worker count against the higher crash limit
  // and then park for a person: never an error result, which the model would answer (a kill storm
  // would change the run's answer). A keyed write escalates after 3.
  it('a read-only call that never finishes parks after its crash attempts, with no error result; a keyed write escalates', async () => {
    for (const [policy, deaths] of [
      ['rerun', MAX_CRASHED_TOOL_ATTEMPTS],
      ['idempotency_key', 3],
    ] as const) {
      const effects: string[] = [];
      const t = scriptedWorld({ tools: [effectTool(policy, effects)], script, graceMs: 1_000 });
      await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
      let tick = t.storage.queue.take()!.tick;
      // Workers in a row die mid-call, each after writing tool_started.
      for (let i = 0; i < deaths; i++) {
        const dying = spawnWorker(t.world, haltAt('before-tool'));
        await runStep(dying.deps, tick, { owner: `w${i}`, deadlineAt: t.world.clock.now() + 300_000 }).catch(() => undefined);
        dying.kill();
        await t.world.clock.advance(61_000);
        tick = t.run;
      }
      const w = spawnWorker(t.world);
      await t.storage.queue.enqueue(t.run, { dedupeId: 'again' });
      const done = await driveRun(t.world, t.run, { worker: () => w });
      expect(done.head.status).toBe('parked');
      const { state, types } = await logOf(t.world, t.run);
      expect(state.calls['3-0']!.attempt).toBe(deaths);
      expect(types).not.toContain('tool_result');
      expect(done.head.attention).toMatchObject([{ reason: 'tool_attempts_exhausted', callId: '3-0' }]);
      expect(effects).toEqual([]);
    }
  });

  it('a person who reruns a crash-exhausted read gives it a fresh crash budget; the run ends with the real result', async () => {
    const effects: string[] = [];
    const t = scriptedWorld({ tools: [effectTool('rerun', effects)], script, graceMs: 1_000 });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    let tick = t.storage.queue.take()!.tick;
    const die = async (i: number) => {
      const dying = spawnWorker(t.world, haltAt('before-tool'));
      await runStep(dying.deps, tick, { owner: `w${i}`, deadlineAt: t.world.clock.now() + 300_000 }).catch(() => undefined);
      dying.kill();
      await t.world.clock.advance(61_000);
      tick = t.run;
    };
    for (let i = 0; i < MAX_CRASHED_TOOL_ATTEMPTS; i++) await die(i);
    const w = spawnWorker(t.world);
    await t.storage.queue.enqueue(t.run, { dedupeId: 'park' });
    expect((await driveRun(t.world, t.run, { worker: () => w })).head.status).toBe('parked');
    await requestResolution(w.deps, t.run, { callId: '3-0', outcome: 'rerun' }, 'ops');
    // The rerun dies too, and again: fewer than a fresh budget, so it is rerun, not parked again.
    for (let i = 0; i < MAX_CRASHED_TOOL_ATTEMPTS - 1; i++) await die(100 + i);
    await t.storage.queue.enqueue(t.run, { dedupeId: 'after-rerun' });
    const done = await driveRun(t.world, t.run, { worker: () => w });
    expect(done.head.status).toBe('completed');
    const { state } = await logOf(t.world, t.run);
    expect(state.calls['3-0']!.attempt).toBe(2 * MAX_CRASHED_TOOL_ATTEMPTS);
    expect(state.calls['3-0']!.result).toMatchObject({ ok: true });
  });

  it('a read-only call killed three times with its worker still runs and returns its real result', async () => {
    const effects: string[] = [];
    const t = scriptedWorld({ tools: [effectTool('rerun', effects)], script, graceMs: 1_000 });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    let tick = t.storage.queue.take()!.tick;
    for (let i = 0; i < 3; i++) {
      const dying = spawnWorker(t.world, haltAt('before-tool'));
      await runStep(dying.deps, tick, { owner: `w${i}`, deadlineAt: t.world.clock.now() + 300_000 }).catch(() => undefined);
      dying.kill();
      await t.world.clock.advance(61_000);
      tick = t.run;
    }
    const w = spawnWorker(t.world);
    await t.storage.queue.enqueue(t.run, { dedupeId: 'again' });
    const done = await driveRun(t.world, t.run, { worker: () => w });
    expect(done.head.status).toBe('completed');
    const { state } = await logOf(t.world, t.run);
    expect(state.calls['3-0']!.attempt).toBe(4);
    expect(state.calls['3-0']!.result).toMatchObject({ ok: true });
  });
});
