import type { WorkflowDefinition } from '../authoring/workflow-types.js';
import { defineAgents } from '../authoring/define-agents.js';
import type { JsonValue } from '../core/json.js';
import { foldLog } from '../core/fold.js';
import { plural } from '../core/plural.js';
import { startRun } from '../engine/start-run.js';
import { driveRun, type Outside, type Resolver } from './driver.js';
import { agentsWorld, spawnWorker, type World } from './world.js';
import { replayWorkflowState, type WorkflowReplayResult } from './workflow-replay.js';

export interface DeterminismOptions<W extends World = World> {
  /** The workflow under test (registered in `world`, or in a world built for it alone). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  workflow: WorkflowDefinition<any, any>;
  input: unknown;
  /** The world to run it in (agentsWorld(defineAgents({ workflows, agents }))). Default: one with the workflow alone. */
  world?: W;
  /** Answers parks (a step's verify, a rerun approval). */
  resolver?: (world: W) => Resolver;
  /** Sends signals and approval decisions the workflow waits for. */
  outside?: (world: W) => Outside;
  /** Every side effect the world's services performed so far (effectLog().all()): none may happen during replay. */
  sideEffects?: (world: W) => readonly unknown[];
  tenant?: string;
  runId?: string;
}

/** Where a replay of the workflow over a prefix of its own log went another way than the live run. */
export interface DeterminismDivergence {
  /** How many of the log's events the replay was given. */
  events: number;
  /** The globals the replay ran under (the live run saw the real ones). */
  perturbation: 'low' | 'high';
  message: string;
  result: WorkflowReplayResult;
}

export interface DeterminismReport {
  ok: boolean;
  /** The live run's status. */
  status: string;
  /** Prefixes of the log replayed (each twice: Math.random/Date.now low, then high). */
  prefixes: number;
  replays: number;
  divergences: DeterminismDivergence[];
  /** Side effects the world recorded while the replays ran (must be 0). */
  sideEffectsDuringReplay: number;
}

/**
 * A workflow's determinism, checked in a test: run it once live (driven to its end, as
 * driveRun does), then replay it over every prefix of its own log, as a worker resuming it after
 * a crash at that point would, executing nothing. Each prefix is replayed twice with Math.random,
 * Date.now and `new Date()` forced low (0, a year back) and high (~1, years ahead), so code that
 * branches on them outside a step asks for other operations than its log holds, or returns
 * another output, and is caught whichever way the live run went. ok: no divergence and no side
 * effect during replay. Note: the globals are swapped while a replay runs; do not run other
 * timing-sensitive work of the same process concurrently.
 */
export async function checkWorkflowDeterminism<W extends World = World>(options: DeterminismOptions<W>): Promise<DeterminismReport> {
  const world = options.world ?? (agentsWorld(defineAgents({ agents: [], workflows: [options.workflow] })) as W);
  const run = { tenant: options.tenant ?? 't-determinism', runId: options.runId ?? 'wf-determinism' };
  const worker = spawnWorker(world);
  await startRun(worker.deps, { ...run, workflow: options.workflow.name, input: options.input as JsonValue });
  const driven = await driveRun(world, run, {
    worker: () => worker,
    ...(options.resolver ? { resolver: options.resolver(world) } : {}),
    ...(options.outside ? { outside: options.outside(world) } : {}),
  });
  const { events } = await world.storage.log.read(run, { afterSeq: 0 });
  const effectsBefore = options.sideEffects?.(world).length ?? 0;
  const blobs = await blobTexts(world, events);
  const divergences: DeterminismDivergence[] = [];
  let replays = 0;
  const full = foldLog(events);
  for (let n = 1; n <= events.length; n++) {
    const state = foldLog(events.slice(0, n));
    for (const perturbation of ['low', 'high'] as const) {
      replays++;
      const result = await perturbed(perturbation, () => replayWorkflowState(options.workflow, state, { blobs }));
      const message = divergenceOf(result, n === events.length ? full : undefined);
      if (message) divergences.push({ events: n, perturbation, message, result });
    }
  }
  const sideEffectsDuringReplay = (options.sideEffects?.(world).length ?? 0) - effectsBefore;
  return {
    ok: divergences.length === 0 && sideEffectsDuringReplay === 0,
    status: driven.head.status,
    prefixes: events.length,
    replays,
    divergences,
    sideEffectsDuringReplay,
  };
}

function divergenceOf(result: WorkflowReplayResult, complete: ReturnType<typeof foldLog> | undefined): string | undefined {
  if (result.verdict === 'diverged') return result.message;
  // Over the whole log of a completed run, the replay must return what the run recorded.
  const recorded = complete?.outcome?.type === 'completed' ? complete.outcome.output : undefined;
  if (recorded?.kind === 'inline' && result.ends === 'completed') {
    const replayed = JSON.stringify(result.output ?? null);
    if (replayed !== JSON.stringify(recorded.value)) return `the replay returned ${replayed}, the run recorded ${JSON.stringify(recorded.value)}`;
  }
  if (complete?.outcome && result.ends !== 'completed' && result.ends !== 'threw') return `the run ended, its replay ${result.ends.replace('_', ' ')}s`;
  return undefined;
}

/** The texts of the blobs the log references, read from the world's blob store. */
async function blobTexts(world: World, events: readonly unknown[]): Promise<Map<string, string>> {
  const keys = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value !== null && typeof value === 'object') {
      const record = value as Record<string, unknown>;
      if (record.kind === 'blob' && typeof record.key === 'string') keys.add(record.key);
      else Object.values(record).forEach(walk);
    }
  };
  walk(events);
  const texts = new Map<string, string>();
  for (const key of keys) {
    const bytes = await world.storage.blobs.get(key);
    if (bytes) texts.set(key, new TextDecoder().decode(bytes));
  }
  return texts;
}

const YEAR_MS = 365 * 86_400_000;

/** Run `fn` with Math.random, Date.now and `new Date()` forced away from the real values. */
async function perturbed<T>(mode: 'low' | 'high', fn: () => Promise<T>): Promise<T> {
  const realRandom = Math.random;
  const RealDate = Date;
  const shift = mode === 'low' ? -(YEAR_MS + 7) : 3 * YEAR_MS + 13;
  class ShiftedDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(RealDate.now() + shift);
      else super(...(args as [string]));
    }
    static override now(): number {
      return RealDate.now() + shift;
    }
  }
  Math.random = mode === 'low' ? () => 0 : () => 0.999999;
  globalThis.Date = ShiftedDate as DateConstructor;
  try {
    return await fn();
  } finally {
    Math.random = realRandom;
    globalThis.Date = RealDate;
  }
}

/** The report as text (for a test's failure message). */
export function formatDeterminismReport(report: DeterminismReport): string {
  const lines = [
    `${plural(report.replays, 'replay')} over ${plural(report.prefixes, 'prefix', 'prefixes')} of the log (run ${report.status}): ` +
      `${plural(report.divergences.length, 'divergence')}, ${plural(report.sideEffectsDuringReplay, 'side effect')} during replay`,
  ];
  for (const d of report.divergences.slice(0, 10)) lines.push(`  after ${plural(d.events, 'event')}, ${d.perturbation}: ${d.message}`);
  return lines.join('\n');
}
