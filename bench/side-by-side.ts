import { createQueues, resourceNames } from '../dev/local/resources.js';
import { SqsTickReceiver, SqsTickVisibility } from '../lib/adapters/aws/sqs-step-queue.js';
import { startRun } from '../lib/engine/start-run.js';
import { runStep } from '../lib/engine/step-runner.js';
import { container, receiveOne, type BenchEnv } from './modes.js';
import { countRatio } from './report.js';

/**
 * Does a turn cost more late in a long run than early in it? Timing a run's first quarter and its
 * last one minutes apart cannot say within 10% on a shared machine: its speed drifts by ±25% over
 * minutes (the floor's own last/first quarter moved between 0.91 and 1.19 in back-to-back runs
 * here). So the quarters are also run side by side: two runs of the same mode, `late` taken to
 * three quarters of its turns and `early` through its first turn (untimed), then `early`'s first
 * quarter and `late`'s last one in alternating slices (early, late, late, early, ...), each slice
 * timed on its own. Whatever the machine does, it does to both quarters.
 */
export type Shape = 'worker' | 'warm' | 'cold';

export interface QuarterTotals {
  turns: number;
  ms: number;
  cpuMs: number;
  itemsRead: number;
}

export interface SideBySide {
  shape: Shape;
  /** Turns of each run (late ends there; early stops after its first quarter). */
  turns: number;
  /** Slices each quarter ran in (over all its pairs of runs). */
  slices: number;
  early: QuarterTotals;
  late: QuarterTotals;
}

/** Late quarter over early quarter, per turn: time, this process's CPU, items read. */
export function sideBySideRatios(s: SideBySide): { time: number; cpu: number; itemsRead: number } {
  const per = (q: QuarterTotals, k: 'ms' | 'cpuMs' | 'itemsRead') => q[k] / q.turns;
  return {
    time: per(s.late, 'ms') / per(s.early, 'ms'),
    cpu: per(s.late, 'cpuMs') / per(s.early, 'cpuMs'),
    itemsRead: countRatio(per(s.late, 'itemsRead'), per(s.early, 'itemsRead')),
  };
}

/** Turns per slice: the worker hands over after this many turns; a step is one turn. */
export const SLICE_TURNS: Record<Shape, number> = { worker: 25, warm: 5, cold: 5 };

/**
 * Pairs of runs per shape, their slices summed. A quarter of 1000 turns is only 10 of the
 * worker's 25-turn slices, and in 10 a burst of the machine's noise moved the ratio by up to
 * ±5% between runs of the same code (1.02 to 1.13); shorter slices would add an invocation's
 * claim and handover to every five turns and hide growth behind it. So the worker runs three
 * pairs (30 slices each), the steps one (50 each).
 */
export const PAIRS: Record<Shape, number> = { worker: 3, warm: 1, cold: 1 };

export async function sideBySide(env: BenchEnv, shape: Shape, turns: number, tag: string): Promise<SideBySide> {
  const quarter = Math.floor(turns / 4);
  const totals = { early: zero(), late: zero() };
  const sliceTurns = SLICE_TURNS[shape];
  let slices = 0;
  for (let pair = 0; pair < PAIRS[shape]; pair++) {
    const [early, late] = await Promise.all([pairedRun(env, shape, turns, `${tag}-${pair}-early`), pairedRun(env, shape, turns, `${tag}-${pair}-late`)]);
    await late.advance(turns - quarter);
    await early.advance(1);
    for (let done = 0; done < quarter - 1; done += sliceTurns, slices++) {
      const k = Math.min(sliceTurns, quarter - 1 - done);
      // ABBA: neither quarter always goes first after the other.
      const order = slices % 2 === 0 ? (['early', 'late'] as const) : (['late', 'early'] as const);
      for (const which of order) add(totals[which], await (which === 'early' ? early : late).advance(k));
    }
  }
  return { shape, turns, slices, ...totals };
}

const zero = (): QuarterTotals => ({ turns: 0, ms: 0, cpuMs: 0, itemsRead: 0 });
function add(into: QuarterTotals, part: QuarterTotals): void {
  into.turns += part.turns;
  into.ms += part.ms;
  into.cpuMs += part.cpuMs;
  into.itemsRead += part.itemsRead;
}

/**
 * One run of the bench agent on a queue of its own (so the two runs' ticks never meet), with a
 * container that stays warm across its slices (a new one per step for `cold`). `advance(k)` runs
 * k more turns: one invocation that hands over after k turns (worker), or k one-turn steps; it
 * times each invocation or step from its receive to its delete, as the modes do.
 */
async function pairedRun(env: BenchEnv, shape: Shape, turns: number, tag: string) {
  const queue = await createQueues(env.clients.sqs, resourceNames(`bench-pair-${tag}-${Date.now()}`));
  const own: BenchEnv = { ...env, queueUrl: queue.queueUrl };
  const receiver = new SqsTickReceiver({ sqs: env.clients.sqs, queueUrl: queue.queueUrl });
  const visibility = new SqsTickVisibility({ sqs: env.clients.sqs, queueUrl: queue.queueUrl });
  let warm = container(own, turns);
  const runId = `pair-${tag}`;
  await startRun(warm.engine, { tenant: 'bench', runId, agent: 'bench', input: 'go' });
  let turnsDone = 0;
  const invoke = async (maxTurns: number): Promise<QuarterTotals> => {
    const [msg] = await receiveOne(receiver);
    if (shape === 'cold') warm = container(own, turns);
    const c = warm;
    const items0 = c.store.stats.itemsRead;
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const shortened = visibility.setVisibility(msg.receiptHandle, 70);
    const result = await runStep(c.engine, msg.tick, { owner: runId, deadlineAt: Date.now() + 3_600_000, minTurnMs: shape === 'worker' ? 1 : 3_600_001, maxTurns });
    await shortened;
    await receiver.delete(msg.receiptHandle);
    const cpu = process.cpuUsage(cpu0);
    const ms = performance.now() - t0;
    turnsDone += result.turns;
    const expected = turnsDone >= turns ? 'ended' : 'continued';
    if (result.outcome !== expected || result.turns !== maxTurns) {
      throw new Error(`side by side (${shape}): a step ended as ${result.outcome} after ${result.turns} of ${maxTurns} turns`);
    }
    return { turns: result.turns, ms, cpuMs: (cpu.user + cpu.system) / 1000, itemsRead: c.store.stats.itemsRead - items0 };
  };
  return {
    async advance(k: number): Promise<QuarterTotals> {
      const sum = zero();
      if (shape === 'worker') add(sum, await invoke(k));
      else for (let i = 0; i < k; i++) add(sum, await invoke(1));
      return sum;
    },
  };
}
