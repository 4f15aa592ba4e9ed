import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { z } from 'zod';
import { DynamoStore } from '../lib/adapters/aws/dynamo-store.js';
import { S3BlobStore } from '../lib/adapters/aws/s3-blob-store.js';
import { SqsStepQueue, SqsTickReceiver } from '../lib/adapters/aws/sqs-step-queue.js';
import { CryptoIds } from '../lib/adapters/system/crypto-ids.js';
import { AgentRegistry } from '../lib/authoring/registry.js';
import { defineWorkflow } from '../lib/authoring/define-workflow.js';
import type { Policy } from '../lib/core/events.js';
import { createEngine, type EngineDeps } from '../lib/engine/engine.js';
import { startRun } from '../lib/engine/start-run.js';
import { runStep } from '../lib/engine/step-runner.js';
import { StaticModelResolver } from '../lib/models/scripted-model.js';
import type { Clock } from '../lib/ports/clock.js';
import { diff, snapshot, type Counters } from './instrument.js';
import type { BenchEnv } from './modes.js';
import { median, PRICES } from './report.js';

/**
 * `npm run bench -- --workflow`: what a workflow step costs on the local stack (the real
 * adapters and SDK clients, counted by the bench's middleware): DynamoDB writes per step by
 * policy, items read per step from the first to the last decile of a long sequential workflow,
 * steps per second and the overhead between two steps early and late, a `ctx.map` of child
 * workflows, and dollars per million steps at list prices.
 */

/**
 * The bench's clock: real time plus an offset that only grows. The sequential workflow's step
 * moves it past the invocation's deadline after `slice` live steps, so every invocation runs
 * exactly that many (a Lambda invocation runs until its time is short: here, deterministically).
 */
export class JumpClock implements Clock {
  offset = 0;
  now(): number {
    return Date.now() + this.offset;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason as Error);
      const t = setTimeout(resolve, ms);
      signal?.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason as Error)), { once: true });
    });
  }
}

/** A step's timeout: short, so that a jump of JUMP_MS leaves too little of the invocation for the next. */
const STEP_TIMEOUT_S = 1;
/** The invocation's length, from its claim: the step's timeout, the margin (5 s) and 10 s. */
const INVOCATION_MS = 16_000;
/** Below the lease (60 s) minus its margin: the lease stays fresh, the invocation's time is up. */
const JUMP_MS = 15_000;

const POLICIES = ['rerun', 'idempotency_key', 'verify', 'escalate'] as const;

interface Probe {
  /** performance.now() of each live step's function call, by step index. */
  liveAt: number[];
  /** Live steps in the current invocation; the clock jumps when it reaches the slice. */
  inInvocation: number;
  slice: number;
  clock: JumpClock;
  /** process.cpuUsage() at the invocation's first live step. */
  firstCpu?: NodeJS.CpuUsage;
}

function workflows(probe: Probe, maxSteps: number) {
  const seq = defineWorkflow({
    name: 'wf-seq',
    version: '1',
    input: z.object({ steps: z.number(), policy: z.enum(POLICIES) }),
    budgets: { maxSteps },
    async run(ctx, input) {
      let sum = 0;
      for (let i = 0; i < input.steps; i++) {
        const policy: Policy = input.policy;
        sum += await ctx.step(
          `s${i}`,
          async () => {
            probe.liveAt[i] = performance.now();
            if (probe.inInvocation === 0) probe.firstCpu = process.cpuUsage();
            if (++probe.inInvocation >= probe.slice) probe.clock.offset += JUMP_MS;
            return i;
          },
          {
            policy,
            timeoutSeconds: STEP_TIMEOUT_S,
            ...(policy === 'verify' ? { verify: async () => ({ status: 'not_landed' as const }) } : {}),
          },
        );
      }
      return sum;
    },
  });
  const child = defineWorkflow({
    name: 'wf-child',
    version: '1',
    input: z.object({ i: z.number() }),
    budgets: { maxSteps: 10, maxCostUsd: 0.01, maxInputTokens: 1000, maxOutputTokens: 1000 },
    async run(ctx, input) {
      return ctx.step('double', async () => input.i * 2, { policy: 'rerun', timeoutSeconds: STEP_TIMEOUT_S });
    },
  });
  const fan = defineWorkflow({
    name: 'wf-map',
    version: '1',
    input: z.object({ fanout: z.number() }),
    budgets: { maxSteps: maxSteps },
    async run(ctx, input) {
      const items = Array.from({ length: input.fanout }, (_, i) => i);
      const out = await ctx.map(
        items,
        (i) => ctx.workflow(child, { i }, { budgets: { maxSteps: 10, maxCostUsd: 0.01, maxInputTokens: 1000, maxOutputTokens: 1000 } }),
        {
          concurrency: input.fanout,
        },
      );
      return (out as number[]).reduce((a, b) => a + b, 0);
    },
  });
  return new AgentRegistry().registerWorkflow(seq).registerWorkflow(child).registerWorkflow(fan);
}

interface Container {
  store: DynamoStore;
  engine: EngineDeps;
}

function container(env: BenchEnv, probe: Probe, maxSteps: number): Container {
  const store = new DynamoStore({ doc: env.clients.doc, tableName: env.tableName });
  const engine = createEngine(
    {
      log: store,
      heads: store,
      inbox: store,
      blobs: new S3BlobStore({ s3: env.clients.s3, bucket: env.bucket }),
      queue: new SqsStepQueue({ sqs: env.clients.sqs, queueUrl: env.queueUrl }),
      models: new StaticModelResolver({}),
      registry: workflows(probe, maxSteps),
      clock: probe.clock,
      ids: new CryptoIds(),
    },
    { snapshotEvery: env.snapshotEvery },
  );
  return { store, engine };
}

async function nextTick(receiver: SqsTickReceiver) {
  for (;;) {
    const [msg] = await receiver.receive({ waitSeconds: 1 });
    if (msg?.tick) return { ...msg, tick: msg.tick };
  }
}

/** Bytes of every S3 object read through these clients (the snapshots a cold invocation loads). */
const s3Read = new WeakMap<object, { bytes: number }>();
function s3BytesRead(env: BenchEnv): { bytes: number } {
  let got = s3Read.get(env.clients.s3);
  if (!got) {
    const counter = { bytes: 0 };
    got = counter;
    s3Read.set(env.clients.s3, counter);
    type Mw = (next: (a: unknown) => Promise<{ output: { ContentLength?: number } }>) => (a: unknown) => Promise<{ output: { ContentLength?: number } }>;
    (env.clients.s3 as unknown as { middlewareStack: { add(mw: Mw, o: { step: 'initialize'; name: string }): void } }).middlewareStack.add(
      (next) => async (args) => {
        const result = await next(args);
        counter.bytes += result.output.ContentLength ?? 0;
        return result;
      },
      { step: 'initialize', name: 'workflowBenchS3Bytes' },
    );
  }
  return got;
}

/** One invocation of a sequential run: what it did and what it cost. */
export interface Invocation {
  /** Index of its first live step. */
  from: number;
  steps: number;
  itemsRead: number;
  /** Bytes it read from S3 (the snapshot). */
  s3Bytes: number;
  ms: number;
  cpuMs: number;
  /** Claim to its first live step: the snapshot, the tail, and the code replayed over them. */
  replayMs: number;
  /** This process's CPU over the same stretch. */
  replayCpuMs: number;
}

export interface SequentialResult {
  policy: Policy;
  steps: number;
  slice: number;
  invocations: Invocation[];
  counters: Counters;
  ms: number;
  cpuMs: number;
  /** performance.now() of each step's function. */
  liveAt: number[];
  outcome: string;
}

/**
 * One run of `steps` sequential steps of `policy`, `slice` live steps per invocation, each
 * invocation in a new container (a cold one: it reads the snapshot and the log's tail), ticks
 * received from the queue as the poller would.
 */
export async function sequential(env: BenchEnv, opts: { steps: number; slice: number; policy: Policy; tag: string }): Promise<SequentialResult> {
  const clock = new JumpClock();
  const probe: Probe = { liveAt: [], inInvocation: 0, slice: opts.slice, clock };
  const maxSteps = Math.max(opts.steps + 10, 10_000);
  const receiver = new SqsTickReceiver({ sqs: env.clients.sqs, queueUrl: env.queueUrl });
  const runId = `wf-${opts.tag}`;
  await startRun(container(env, probe, maxSteps).engine, {
    tenant: 'bench',
    runId,
    workflow: 'wf-seq',
    input: { steps: opts.steps, policy: opts.policy } as never,
  });
  const before = snapshot(env.counters);
  const invocations: Invocation[] = [];
  const s3 = s3BytesRead(env);
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  let outcome = '';
  for (let done = 0; ;) {
    const msg = await nextTick(receiver);
    const c = container(env, probe, maxSteps);
    probe.inInvocation = 0;
    probe.firstCpu = undefined;
    const bytes0 = s3.bytes;
    const t = performance.now();
    const cpu = process.cpuUsage();
    const result = await runStep(c.engine, msg.tick, { owner: 'wf-bench', deadlineAt: clock.now() + INVOCATION_MS, minTurnMs: 1 });
    await receiver.delete(msg.receiptHandle);
    const used = process.cpuUsage(cpu);
    const first = probe.liveAt[done];
    const f = probe.inInvocation > 0 ? (probe.firstCpu as NodeJS.CpuUsage | undefined) : undefined;
    const replayCpuMs = f ? (f.user - cpu.user + f.system - cpu.system) / 1000 : 0;
    invocations.push({
      from: done,
      steps: probe.inInvocation,
      itemsRead: c.store.stats.itemsRead,
      s3Bytes: s3.bytes - bytes0,
      ms: performance.now() - t,
      cpuMs: (used.user + used.system) / 1000,
      replayMs: first !== undefined && probe.inInvocation > 0 ? first - t : 0,
      replayCpuMs,
    });
    done += probe.inInvocation;
    outcome = result.outcome;
    if (result.outcome === 'ended') break;
    if (result.outcome !== 'continued') throw new Error(`workflow bench: an invocation ended as ${result.outcome}`);
    if (invocations.length > opts.steps + 10) throw new Error('workflow bench: the run does not progress');
  }
  const used = process.cpuUsage(cpu0);
  return {
    policy: opts.policy,
    steps: opts.steps,
    slice: opts.slice,
    invocations,
    counters: diff(env.counters, before),
    ms: performance.now() - t0,
    cpuMs: (used.user + used.system) / 1000,
    liveAt: probe.liveAt,
    outcome,
  };
}

/**
 * DynamoDB writes per step of a policy: a run of 2 x `steps` steps less a run of `steps`, each in
 * one invocation, so that what a run writes once (its start, its end, a snapshot's head) cancels.
 */
export async function writesPerStep(env: BenchEnv, policy: Policy, steps: number, tag: string): Promise<number> {
  const big = await sequential(env, { steps: 2 * steps, slice: 2 * steps + 1, policy, tag: `${tag}-${policy}-2n` });
  const small = await sequential(env, { steps, slice: steps + 1, policy, tag: `${tag}-${policy}-n` });
  return (big.counters.dynamo.writes - small.counters.dynamo.writes) / steps;
}

/** Items read per step in each tenth of the run's steps (an invocation's reads spread over its steps). */
export function decileReads(r: SequentialResult): number[] {
  const perStep = new Array<number>(r.steps).fill(0);
  for (const inv of r.invocations) for (let i = inv.from; i < inv.from + inv.steps; i++) perStep[i] = inv.itemsRead / inv.steps;
  const tenth = Math.ceil(r.steps / 10);
  return Array.from({ length: 10 }, (_, d) => {
    const part = perStep.slice(d * tenth, (d + 1) * tenth);
    return part.reduce((a, b) => a + b, 0) / Math.max(1, part.length);
  });
}

/** Median gap between two consecutive live steps of one invocation, over `window` gaps from step `at`. */
export function gapAt(r: SequentialResult, at: number, window = 20): number {
  const starts = new Set(r.invocations.map((i) => i.from));
  const gaps: number[] = [];
  for (let i = Math.max(1, at); i < r.steps && gaps.length < window; i++) if (!starts.has(i)) gaps.push(r.liveAt[i]! - r.liveAt[i - 1]!);
  return median(gaps);
}

export interface FanoutResult {
  fanout: number;
  completed: boolean;
  ticks: number;
  steps: number;
  maxQueueDepth: number;
  ms: number;
  counters: Counters;
}

/** A `ctx.map` of `fanout` child workflows (one step each), `pollers` containers taking ticks from the queue. */
export async function fanout(env: BenchEnv, opts: { fanout: number; pollers: number; tag: string }): Promise<FanoutResult> {
  const clock = new JumpClock();
  const probe: Probe = { liveAt: [], inInvocation: 0, slice: Number.POSITIVE_INFINITY, clock };
  const maxSteps = Math.max(opts.fanout + 10, 10_000);
  const runId = `wf-map-${opts.tag}`;
  const starter = container(env, probe, maxSteps);
  await startRun(starter.engine, { tenant: 'bench', runId, workflow: 'wf-map', input: { fanout: opts.fanout } as never });
  const before = snapshot(env.counters);
  const receiver = new SqsTickReceiver({ sqs: env.clients.sqs, queueUrl: env.queueUrl });
  let maxQueueDepth = 0;
  let ticks = 0;
  let finished = false;
  const t0 = performance.now();
  const depth = async () => {
    const out = await env.clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: env.queueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
    );
    const a = out.Attributes ?? {};
    return Number(a.ApproximateNumberOfMessages ?? 0) + Number(a.ApproximateNumberOfMessagesNotVisible ?? 0);
  };
  const watcher = (async () => {
    while (!finished) {
      maxQueueDepth = Math.max(maxQueueDepth, await depth());
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const deadline = Date.now() + 600_000;
  await Promise.all(
    Array.from({ length: opts.pollers }, async () => {
      const c = container(env, probe, maxSteps);
      while (!finished && Date.now() < deadline) {
        const [msg] = await receiver.receive({ waitSeconds: 1 });
        if (!msg?.tick) continue;
        ticks++;
        await runStep(c.engine, msg.tick, { owner: 'wf-map', deadlineAt: clock.now() + 60_000, minTurnMs: 1 });
        await receiver.delete(msg.receiptHandle);
        const head = await c.store.getHead({ tenant: 'bench', runId });
        if (head && ['completed', 'failed', 'cancelled'].includes(head.status)) finished = true;
      }
    }),
  );
  finished = true;
  await watcher;
  const head = await starter.store.getHead({ tenant: 'bench', runId });
  return {
    fanout: opts.fanout,
    completed: head?.status === 'completed',
    ticks,
    // The parent's operations and each child's one step.
    steps: opts.fanout * 2,
    maxQueueDepth,
    ms: performance.now() - t0,
    counters: diff(env.counters, before),
  };
}

/** Dollars per million steps at list prices, from a run's counts (Lambda requests and 128 MB of duration included). */
export function dollarsPerMillion(counters: Counters, steps: number, invocations: number, ms: number): { aws: number; lambda: number; total: number } {
  const per = (n: number) => (n / steps) * 1e6;
  const aws =
    (per(counters.dynamo.wru) * PRICES.dynamoWruPerM +
      per(counters.dynamo.rru) * PRICES.dynamoRruPerM +
      per(counters.sqs.requests) * PRICES.sqsFifoPerM +
      per(counters.s3.puts) * PRICES.s3PutPerM +
      per(counters.s3.gets) * PRICES.s3GetPerM) /
    1e6;
  // Lambda: $0.20 per million requests, $0.0000133334 per GB-second (ARM64), at 1 GB.
  const lambda = (per(invocations) * 0.2) / 1e6 + per(ms / 1000) * 0.0000133334;
  return { aws, lambda, total: aws + lambda };
}
