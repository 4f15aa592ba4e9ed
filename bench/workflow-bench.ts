import { createLocalAwsClients } from '../lib/adapters/aws/aws-clients.js';
import { startEmulators } from '../dev/local/emulators.js';
import { createResources, resourceNames } from '../dev/local/resources.js';
import { plural } from '../lib/core/plural.js';
import { emptyCounters, instrument } from './instrument.js';
import type { BenchEnv } from './modes.js';
import { decileReads, dollarsPerMillion, fanout, gapAt, sequential, writesPerStep } from './workflow.js';

export interface WorkflowBenchOptions {
  steps: number;
  fanout: number;
  /** Live steps per invocation of the sequential run. */
  slice: number;
  pollers: number;
  dynamo: 'auto' | 'dynalite' | 'dynamodb-local';
  snapshotEvery: number;
}

export interface WorkflowBenchReport {
  writesPerStep: Record<string, number>;
  deciles: number[];
  decileRatio: number;
  stepsPerSecond: number;
  gapEarlyMs: number;
  gapLateMs: number;
  replayEarlyMs: number;
  replayLateMs: number;
  replayCpuPerOpUs: number;
  perStepEarlyMs: number;
  /** The snapshot a cold invocation loads, first → last tenth of the invocations (bytes). */
  snapshotEarlyBytes: number;
  snapshotLateBytes: number;
  perStepLateMs: number;
  invocations: number;
  completed: boolean;
  fan: { fanout: number; completed: boolean; ticks: number; steps: number; maxQueueDepth: number; ms: number };
  dollars: { aws: number; lambda: number; total: number };
  text: string;
}

const ratio = (a: number, b: number) => (b === 0 ? (a === 0 ? 1 : Infinity) : a / b);

/** The measurements on an environment that exists (the tests call this at small sizes). */
export async function measureWorkflows(
  env: BenchEnv,
  o: Omit<WorkflowBenchOptions, 'dynamo' | 'snapshotEvery'>,
  log: (s: string) => void = () => undefined,
): Promise<WorkflowBenchReport> {
  const tag = `${Date.now()}`;
  // The engine's code paths and the emulators, warmed up as in a container that ran steps before: untimed.
  log('warming up...');
  await sequential(env, { steps: 300, slice: 50, policy: 'rerun', tag: `${tag}-warm` });
  const writes: Record<string, number> = {};
  for (const policy of ['rerun', 'idempotency_key', 'verify', 'escalate'] as const) {
    log(`writes per step, ${policy}...`);
    writes[policy] = await writesPerStep(env, policy, 100, tag);
  }
  log(`a sequential workflow of ${plural(o.steps, 'step')}, ${o.slice} per invocation, a cold container each...`);
  const seq = await sequential(env, { steps: o.steps, slice: o.slice, policy: 'rerun', tag: `${tag}-seq` });
  const deciles = decileReads(seq);
  const inv = seq.invocations.filter((i) => i.steps > 0);
  const k = Math.max(1, Math.floor(inv.length / 10));
  const early = inv.slice(0, k);
  const late = inv.slice(-k);
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const perStep = (xs: typeof inv) =>
    xs.reduce((a, b) => a + b.ms, 0) /
    Math.max(
      1,
      xs.reduce((a, b) => a + b.steps, 0),
    );
  const replayEarly = avg(early.map((i) => i.replayMs));
  const replayLate = avg(late.map((i) => i.replayMs));
  const opsEarly = avg(early.map((i) => i.from));
  const opsLate = avg(late.map((i) => i.from));
  // CPU of the invocation beyond its live steps, per op it replayed: late less early over the ops between.
  const cpuEarly = avg(early.map((i) => i.replayCpuMs));
  const cpuLate = avg(late.map((i) => i.replayCpuMs));
  const replayCpuPerOpUs = opsLate > opsEarly ? ((cpuLate - cpuEarly) / (opsLate - opsEarly)) * 1000 : 0;
  log(`a ctx.map of ${plural(o.fanout, 'child workflow')} on ${plural(o.pollers, 'poller')}...`);
  const fan = await fanout(env, { fanout: o.fanout, pollers: o.pollers, tag });
  const dollars = dollarsPerMillion(
    seq.counters,
    seq.steps,
    seq.invocations.length,
    seq.invocations.reduce((a, b) => a + b.ms, 0),
  );
  const report = {
    writesPerStep: writes,
    deciles,
    decileRatio: ratio(deciles[9]!, deciles[0]!),
    stepsPerSecond: seq.steps / (seq.ms / 1000),
    gapEarlyMs: gapAt(seq, 10),
    gapLateMs: gapAt(seq, seq.steps - 21),
    replayEarlyMs: replayEarly,
    replayLateMs: replayLate,
    replayCpuPerOpUs,
    perStepEarlyMs: perStep(early),
    snapshotEarlyBytes: avg(early.map((i) => i.s3Bytes)),
    snapshotLateBytes: avg(late.map((i) => i.s3Bytes)),
    perStepLateMs: perStep(late),
    invocations: seq.invocations.length,
    completed: seq.outcome === 'ended',
    fan: { fanout: fan.fanout, completed: fan.completed, ticks: fan.ticks, steps: fan.steps, maxQueueDepth: fan.maxQueueDepth, ms: fan.ms },
    dollars,
  };
  return { ...report, text: format(report, o, seq.counters.dynamo.writes / seq.steps, seq.counters.dynamo.rru / seq.steps) };
}

function format(
  r: Omit<WorkflowBenchReport, 'text'>,
  o: Omit<WorkflowBenchOptions, 'dynamo' | 'snapshotEvery'>,
  writesAll: number,
  rruPerStep: number,
): string {
  const f = (n: number, d = 2) => n.toFixed(d);
  return [
    `| figure | measured | goal |`,
    `|---|---:|---|`,
    ...Object.entries(r.writesPerStep).map(([p, w]) => `| DynamoDB writes per \`${p}\` step | ${f(w)} | ${p === 'rerun' ? 1 : 2} |`),
    `| DynamoDB writes per step, ${o.steps}-step run with claims, heads and ticks (${o.slice} steps per invocation) | ${f(writesAll, 3)} | |`,
    `| items read per step, first → last decile | ${f(r.deciles[0]!, 3)} → ${f(r.deciles[9]!, 3)} (ratio ${f(r.decileRatio)}) | ≤ 1.1 |`,
    `| read units per step | ${f(rruPerStep, 3)} | |`,
    `| sequential steps per second (cold container per invocation) | ${f(r.stepsPerSecond, 0)} | |`,
    `| overhead between two steps, at step 10 → at step ${o.steps - 20} (median of 20 gaps) | ${f(r.gapEarlyMs)} → ${f(r.gapLateMs)} ms (ratio ${f(ratio(r.gapLateMs, r.gapEarlyMs))}) | not growing |`,
    `| an invocation's claim to its first live step (snapshot, tail, replay), first → last tenth of ${plural(r.invocations, 'invocation')} | ${f(r.replayEarlyMs)} → ${f(r.replayLateMs)} ms | |`,
    `| snapshot bytes a cold invocation loads (S3), first → last tenth | ${f(r.snapshotEarlyBytes / 1024, 1)} → ${f(r.snapshotLateBytes / 1024, 1)} KB | |`,
    `| CPU per replayed op (claim to first live step, last tenth less first, per op between) | ${f(r.replayCpuPerOpUs, 1)} µs | |`,
    `| ms per step with its invocation's share of the replay, first → last tenth | ${f(r.perStepEarlyMs)} → ${f(r.perStepLateMs)} (ratio ${f(ratio(r.perStepLateMs, r.perStepEarlyMs))}) | |`,
    `| ctx.map of ${r.fan.fanout} child workflows | ${r.fan.completed ? 'completed' : 'NOT completed'} in ${f(r.fan.ms / 1000, 1)} s, max queue depth ${r.fan.maxQueueDepth}, ${f(r.fan.ticks / r.fan.steps)} ticks per step (${r.fan.ticks} ticks, ${r.fan.steps} steps) | completes |`,
    `| $ per million steps (DynamoDB, SQS, S3) + Lambda (requests, 1 GB duration) | $${f(r.dollars.aws)} + $${f(r.dollars.lambda)} = **$${f(r.dollars.total)}** | ≤ $3 (Lambda durable functions: $8 per million operations) |`,
  ].join('\n');
}

/** `npm run bench -- --workflow [--steps N] [--fanout F] [--slice S]`: on fresh emulators. */
export async function runWorkflowBench(o: WorkflowBenchOptions): Promise<WorkflowBenchReport> {
  const emulators = await startEmulators({ dynamo: o.dynamo });
  const clients = createLocalAwsClients(emulators.endpoints);
  const counters = emptyCounters();
  instrument(clients, counters);
  try {
    const resources = await createResources(emulators.endpoints, resourceNames(`wfbench-${Date.now()}`));
    const env: BenchEnv = {
      clients,
      counters,
      tableName: resources.tableName,
      bucket: resources.bucket,
      queueUrl: resources.queueUrl,
      floorQueueUrl: resources.queueUrl,
      snapshotEvery: o.snapshotEvery,
    };
    return await measureWorkflows(env, o, (s) => process.stderr.write(`${s}\n`));
  } finally {
    clients.destroy();
    await emulators.stop();
  }
}
