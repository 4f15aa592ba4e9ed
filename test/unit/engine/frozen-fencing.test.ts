// A worker frozen in the middle of a tool call, past its lease, while another worker takes the run
// over and acts; then it wakes up and carries on. On memory storage with a manual clock, through
// lib/testing's public API, with the demo's real tools and fake services: for every policy, no
// effect lands twice, the frozen worker writes nothing after the takeover, and what stopped it is
// the layer this test names (its own lease check, the service's fencing token, or the deadline).
import { describe, expect, it } from 'vitest';
import { AppendConflictError, StaticModelResolver } from '../../../lib/index.js';
import { AgentRegistry, runStep, startRun } from '../../../lib/engine/index.js';
import { ManualClock, driveRun, memoryStorage, runCrashHarness, spawnWorker, type WorkerProcess } from '../../../lib/testing/index.js';
import { SUPPORT_MODEL_ID, supportAgent, supportModel } from '../../../examples/support-agent/agent.js';
import { MemoryLedger, duplicateEffects, type SideEffect } from '../../../examples/support-agent/ledger.js';
import { SupportServices } from '../../../examples/support-agent/services.js';
import { ledgerResolver, supportScenario, type SupportWorld } from '../../../examples/support-agent/support-world.js';

const SERVICE_OF = { search_orders: 'orders', create_ticket: 'tickets', send_email: 'email', issue_refund: 'payments' } as const;
type Tool = keyof typeof SERVICE_OF;

interface FreezePlan {
  tool: Tool;
  /** 'work': in the tool's own work, before its lease check; 'transit': its request is in flight. */
  phase: 'work' | 'transit';
  /** 'end': after the new worker finished the run; 'before-rerun': just before the new worker's own request. */
  wake: 'end' | 'before-rerun';
}

const run = { tenant: 'acme', runId: 'frozen-1' };
const request = { ...run, agent: 'support', input: 'Customer c_77 reports a damaged order. Sort it out.' };

/** The support world, with a freeze point inside one tool call of the first worker. */
function frozenWorld(plan: FreezePlan) {
  const clock = new ManualClock();
  const ledger = new MemoryLedger();
  let calls = 0;
  let first: WorkerProcess | undefined;
  let thaw: (() => void) | undefined;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let reached!: () => void;
  const reachedFreeze = new Promise<void>((r) => (reached = r));
  const service = SERVICE_OF[plan.tool];
  const wakeFirst = async () => {
    thaw?.();
    release();
    // Let the first worker's late request reach the service before the new worker's own.
    for (let i = 0; i < 1000 && !ledger.all().some((e) => e.service === service && e.token === 1); i++) await new Promise((r) => setImmediate(r));
  };
  const at = async (phase: FreezePlan['phase'], name: string) => {
    if (phase !== plan.phase || name !== (phase === 'work' ? plan.tool : service)) return;
    calls++;
    if (calls === 1) {
      // The whole process freezes: its port calls (heartbeat included) and this call stop.
      thaw = first?.freeze();
      reached();
      await released;
    } else if (calls === 2 && plan.wake === 'before-rerun') {
      await wakeFirst();
    }
  };
  const services = new SupportServices(ledger, { now: () => clock.now(), transit: (s) => at('transit', s) });
  const world: SupportWorld = {
    storage: memoryStorage(),
    clock,
    registry: new AgentRegistry().register(supportAgent(services, { work: (tool) => at('work', tool) })),
    models: new StaticModelResolver({ [SUPPORT_MODEL_ID]: supportModel() }),
    ledger,
    services,
  };
  return {
    world,
    reachedFreeze,
    setFirst: (w: WorkerProcess) => (first = w),
    wake: () => (calls >= 2 && plan.wake === 'before-rerun' ? Promise.resolve() : wakeFirst()),
  };
}

async function frozenRun(plan: FreezePlan) {
  const f = frozenWorld(plan);
  const { world } = f;
  const first = f.setFirst(spawnWorker(world));
  await startRun(first.deps, request);
  const resolver = ledgerResolver(world);
  // The first worker's one invocation: it runs the run until it freezes inside the planned call.
  const tick = world.storage.queue.take()?.tick ?? run;
  const firstDrive = runStep(first.deps, tick, { owner: first.name, deadlineAt: world.clock.now() + 300_000 }).catch((e: unknown) => e);
  await Promise.race([f.reachedFreeze, firstDrive]);
  // Its lease lapses; a second worker takes the run over and drives it to its end.
  const head = await world.storage.heads.getHead(run);
  await world.clock.advance(Math.max(0, (head?.lease?.until ?? 0) - world.clock.now()) + 1);
  const second = spawnWorker(world);
  await world.storage.queue.enqueue(run, { dedupeId: `${run.runId}:takeover` });
  const result = await driveRun(world, run, { worker: () => second, resolver });
  await f.wake();
  // It carries on where it froze, with its stale state, and its invocation ends.
  const late = await firstDrive;
  const events = (await world.storage.log.read(run, { afterSeq: 0 })).events as { seq: number; type: string; by: { epoch: number } }[];
  return { world, result, late, events, effects: world.ledger.all() };
}

/** The first worker holds epoch 1: nothing it wrote comes after the takeover, and a late append at its next seq is refused. */
async function expectFirstWorkerFenced(world: SupportWorld, events: { seq: number; by: { epoch: number } }[]) {
  const mine = events.filter((e) => e.by.epoch === 1).map((e) => e.seq);
  const takeover = events.find((e) => e.by.epoch > 1)?.seq ?? Infinity;
  expect(Math.max(...mine)).toBeLessThan(takeover);
  const late = world.storage.log.append(run, { v: 1, seq: Math.max(...mine) + 1, at: 0, by: { epoch: 1, nonce: 'late' }, type: 'cancel_requested', requestedBy: 'late', inboxId: 'late' });
  await expect(late).rejects.toBeInstanceOf(AppendConflictError);
}

function writesOf(effects: SideEffect[], service: SideEffect['service']) {
  return effects.filter((e) => e.service === service && !e.readOnly);
}

async function expectHeld(plan: FreezePlan) {
  const { world, result, late, events, effects } = await frozenRun(plan);
  expect(late).not.toBeInstanceOf(Error);
  expect(late).toMatchObject({ outcome: expect.stringMatching(/^(lease_lost|fenced)$/) });
  expect(result.head.status).toBe('completed');
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  expect(events.at(-1)?.type).toBe('run_completed');
  expect(duplicateEffects(effects)).toEqual([]);
  for (const service of ['tickets', 'email', 'payments'] as const) expect(writesOf(effects, service).filter((e) => e.applied)).toHaveLength(1);
  await expectFirstWorkerFenced(world, events);
  return { effects, service: SERVICE_OF[plan.tool] };
}

describe('a worker frozen inside a tool call past its lease, woken after another worker acted', () => {
  it('verify (send_email), frozen before its lease check: on waking it sends nothing', async () => {
    const { effects } = await expectHeld({ tool: 'send_email', phase: 'work', wake: 'end' });
    expect(effects.filter((e) => e.service === 'email' && e.token === 1)).toEqual([]);
    // The new worker looked first (raising the fence), saw "not landed", and sent it once.
    expect(effects.filter((e) => e.service === 'email').map((e) => e.op)).toEqual(['fence', 'send']);
  });

  it('verify (send_email), its request in flight: the service refuses the lower fencing token', async () => {
    const { effects } = await expectHeld({ tool: 'send_email', phase: 'transit', wake: 'end' });
    expect(writesOf(effects, 'email').filter((e) => e.token === 1)).toMatchObject([{ applied: false, detail: { refused: 'stale_fencing_token' } }]);
  });

  it('verify (send_email), its request arriving between the new worker\'s look and its send: refused by the fence the look raised', async () => {
    const { effects } = await expectHeld({ tool: 'send_email', phase: 'transit', wake: 'before-rerun' });
    const email = effects.filter((e) => e.service === 'email');
    expect(email.map((e) => [e.op, e.token, e.applied])).toEqual([
      ['fence', 2, false],
      ['send', 1, false],
      ['send', 2, true],
    ]);
  });

  it('escalate (issue_refund), frozen before its lease check: on waking it refunds nothing', async () => {
    const { effects } = await expectHeld({ tool: 'issue_refund', phase: 'work', wake: 'end' });
    expect(effects.filter((e) => e.service === 'payments' && e.token === 1)).toEqual([]);
  });

  it('escalate (issue_refund), its request in flight, woken after the approved rerun: refused by the fencing token', async () => {
    const { effects } = await expectHeld({ tool: 'issue_refund', phase: 'transit', wake: 'end' });
    expect(writesOf(effects, 'payments').filter((e) => e.token === 1)).toMatchObject([{ applied: false, detail: { refused: 'stale_fencing_token' } }]);
  });

  it('escalate (issue_refund), its request arriving after the person approved a rerun but before the rerun: refused as past its deadline', async () => {
    // No higher token has reached payments yet: only the request deadline tells the service.
    const { effects } = await expectHeld({ tool: 'issue_refund', phase: 'transit', wake: 'before-rerun' });
    const refunds = writesOf(effects, 'payments');
    expect(refunds.map((e) => [e.token, e.applied, e.detail.refused])).toEqual([
      [1, false, 'request_expired'],
      [expect.any(Number), true, undefined],
    ]);
  });

  it('idempotency_key (create_ticket), its request in flight: the ticket service dedupes it', async () => {
    const { effects } = await expectHeld({ tool: 'create_ticket', phase: 'transit', wake: 'end' });
    expect(writesOf(effects, 'tickets').map((e) => e.applied)).toEqual([true, false]);
  });

  it('rerun (search_orders), frozen mid-call: the read repeats, harmlessly', async () => {
    const { effects } = await expectHeld({ tool: 'search_orders', phase: 'work', wake: 'end' });
    expect(effects.filter((e) => e.service === 'orders').length).toBeGreaterThanOrEqual(1);
  });

  it("the crash harness's pause points around verify and tool calls, and inside every tool call, hold with these services", async () => {
    const report = await runCrashHarness(supportScenario, { doubleCrashStride: 0, pausePoints: ['before-tool', 'after-tool', 'in-tool', 'before-verify', 'after-verify'] });
    const pauses = report.points.filter((p) => p.kind === 'pause');
    expect(pauses.length).toBeGreaterThanOrEqual(8);
    // Each of the four tool calls frozen inside, woken after the takeover and before the rerun.
    expect(report.points.filter((p) => p.kind === 'late-call')).toHaveLength(8);
    expect(report.points.filter((p) => !p.held)).toEqual([]);
  }, 60_000);
});
