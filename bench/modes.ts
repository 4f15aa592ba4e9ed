import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { AwsClients } from '../lib/adapters/aws/aws-clients.js';
import { DynamoStore } from '../lib/adapters/aws/dynamo-store.js';
import { S3BlobStore } from '../lib/adapters/aws/s3-blob-store.js';
import { SqsStepQueue, SqsTickReceiver, SqsTickVisibility } from '../lib/adapters/aws/sqs-step-queue.js';
import { CryptoIds } from '../lib/adapters/system/crypto-ids.js';
import { SystemClock } from '../lib/support/system-clock.js';
import { createEngine, type EngineDeps } from '../lib/engine/engine.js';
import type { EngineTracer } from '../lib/engine/tracing/engine-tracer.js';
import { startRun } from '../lib/engine/start-run.js';
import { runStep } from '../lib/engine/step-runner.js';
import { benchModels, benchRegistry } from './bench-agent.js';
import { add, diff, emptyCounters, snapshot, type Counters } from './instrument.js';

/** What one mode measured: totals, and per turn for single-run modes (for the quarter ratios). */
export interface ModeResult {
  name: string;
  runs: number;
  turns: number;
  ms: number;
  counters: Counters;
  /** Items DynamoDB read (GetItem hits, Query ScannedCount), from the stores' own stats. */
  itemsRead: number;
  perTurn: { ms: number; itemsRead: number }[];
  /** Wall time of each turn of every run (for p95). */
  turnMs: number[];
  /**
   * CPU time of this process (user + system) over the mode: the bench, the SDK clients, the
   * engine and fauxqs (SQS, S3) run here; DynamoDB Local runs in its own JVM and is not in it.
   * Far steadier than wall time on a shared machine.
   */
  cpuMs: number;
  /**
   * The mode's timed windows: one for a mode run in one go, one per round for a mode run in rounds
   * between runs of its floor (stepShape). `ms` and `cpuMs` above are their sums.
   */
  rounds: RoundTiming[];
}

export interface RoundTiming {
  turns: number;
  ms: number;
  cpuMs: number;
}

/** CPU milliseconds of this process since `from` (a process.cpuUsage() reading). */
function cpuSince(from: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1000;
}

export interface BenchEnv {
  clients: AwsClients;
  counters: Counters;
  tableName: string;
  bucket: string;
  queueUrl: string;
  /** The floor's own FIFO queue: a floor timed between rounds of a mode must not take its ticks. */
  floorQueueUrl: string;
  snapshotEvery: number;
  /** Spans of every step (`--tracing`); absent: tracing off. */
  tracer?: EngineTracer;
}

/** One Lambda container: its own store and engine (and so its own warm cache). */
export function container(env: BenchEnv, turns: number, onCall?: () => void): { store: DynamoStore; engine: EngineDeps } {
  const store = new DynamoStore({ doc: env.clients.doc, tableName: env.tableName });
  const queue = new SqsStepQueue({ sqs: env.clients.sqs, queueUrl: env.queueUrl });
  const blobs = new S3BlobStore({ s3: env.clients.s3, bucket: env.bucket });
  const engine = createEngine(
    {
      log: store,
      heads: store,
      inbox: store,
      blobs,
      queue,
      models: benchModels(turns, onCall),
      registry: benchRegistry(turns),
      clock: new SystemClock(),
      ids: new CryptoIds(),
      ...(env.tracer ? { tracer: env.tracer } : {}),
    },
    { snapshotEvery: env.snapshotEvery },
  );
  return { store, engine };
}

// ---- the floor -------------------------------------------------------------------------------

/** An item of an event's size and shape (the median event of a bench turn is about this big). */
function eventLike(runId: string, seq: number): Record<string, unknown> {
  return {
    pk: `RUN#bench#${runId}`,
    sk: `EVT#${String(seq).padStart(10, '0')}`,
    data: JSON.stringify({ v: 1, seq, type: 'tool_result', at: Date.now(), by: { epoch: 1, nonce: 'n'.repeat(16) }, callId: `${seq}-0`, ok: true, output: { kind: 'inline', value: seq } }),
    expiresAtSec: Math.floor(Date.now() / 1000) + 86_400,
  };
}

/** The floor: 3 conditional PutItems per turn (decision, started, result), optionally + one FIFO hop. */
export async function floor(env: BenchEnv, name: string, runs: number, turnsPerRun: number, hop: boolean, tag: string): Promise<ModeResult> {
  const before = snapshot(env.counters);
  const receiver = new SqsTickReceiver({ sqs: env.clients.sqs, queueUrl: env.floorQueueUrl });
  const perTurn: ModeResult['perTurn'] = [];
  const turnMs: number[] = [];
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: runs }, async (_, r) => {
      const runId = `floor-${tag}-${r}`;
      for (let turn = 0; turn < turnsPerRun; turn++) {
        const t = performance.now();
        for (let k = 1; k <= 3; k++) {
          await env.clients.doc.send(
            new PutCommand({ TableName: env.tableName, Item: eventLike(runId, turn * 3 + k), ConditionExpression: 'attribute_not_exists(pk)' }),
          );
        }
        if (hop) {
          await env.clients.sqs.send(
            new SendMessageCommand({ QueueUrl: env.floorQueueUrl, MessageBody: JSON.stringify({ tenant: 'bench', runId }), MessageGroupId: runId, MessageDeduplicationId: `${runId}:${turn}` }),
          );
          // fauxqs gives one message per group per receive; a receive may meet another run's hop.
          for (;;) {
            const [msg] = await receiver.receive({ waitSeconds: 1 });
            if (!msg) continue;
            await receiver.delete(msg.receiptHandle);
            break;
          }
        }
        const ms = performance.now() - t;
        turnMs.push(ms);
        if (runs === 1) perTurn.push({ ms, itemsRead: 0 });
      }
    }),
  );
  const ms = performance.now() - t0;
  const cpuMs = cpuSince(cpu0);
  const turns = runs * turnsPerRun;
  return { name, runs, turns, ms, cpuMs, rounds: [{ turns, ms, cpuMs }], counters: diff(env.counters, before), itemsRead: 0, perTurn, turnMs };
}

// ---- the worker shape: turns back to back in one invocation ----------------------------------

/**
 * Turns back to back in one invocation per run and round: in `rounds` timed windows, each run's
 * invocation does its share of the turns (StepOptions.maxTurns) and hands over, and
 * `between(round)` runs while the next ticks wait (the bench times the floor there).
 */
export async function workerShape(
  env: BenchEnv,
  name: string,
  runs: number,
  turnsPerRun: number,
  tag: string,
  rounds = 1,
  between?: (round: number) => Promise<void>,
): Promise<ModeResult> {
  const receiver = new SqsTickReceiver({ sqs: env.clients.sqs, queueUrl: env.queueUrl });
  const perTurn: ModeResult['perTurn'] = [];
  const turnMs: number[] = [];
  const timed: RoundTiming[] = [];
  const counted = emptyCounters();
  let itemsRead = 0;
  const starters = Array.from({ length: runs }, () => container(env, turnsPerRun));
  for (let r = 0; r < runs; r++) await startRun(starters[r]!.engine, { tenant: 'bench', runId: `worker-${tag}-${r}`, agent: 'bench', input: 'go' });
  // The creation ticks are not ours to count: the loop below receives them as the poller would.
  let done = 0;
  for (let round = 0; round < rounds; round++) {
    const share = Math.round((turnsPerRun * (round + 1)) / rounds) - Math.round((turnsPerRun * round) / rounds);
    const last = round === rounds - 1;
    const roundStart = snapshot(env.counters);
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const from = done;
    await Promise.all(
      Array.from({ length: runs }, async () => {
        const [msg] = await receiveOne(receiver);
        let mark = performance.now();
        let lastItems = 0;
        let boundaries = 0;
        const c = container(env, turnsPerRun, () => {
          // A turn boundary: the model is called at the start of every turn.
          const now = performance.now();
          if (boundaries++ > 0) {
            const ms = now - mark;
            turnMs.push(ms);
            if (runs === 1) perTurn.push({ ms, itemsRead: c.store.stats.itemsRead - lastItems });
          }
          mark = now;
          lastItems = c.store.stats.itemsRead;
        });
        await new SqsTickVisibility({ sqs: env.clients.sqs, queueUrl: env.queueUrl }).setVisibility(msg.receiptHandle, 70);
        const result = await runStep(c.engine, msg.tick, { owner: `worker-${tag}`, deadlineAt: Date.now() + 3_600_000, minTurnMs: 1, maxTurns: share });
        await receiver.delete(msg.receiptHandle);
        const expected = last ? 'ended' : 'continued';
        if (result.outcome !== expected) throw new Error(`worker shape: an invocation ended as ${result.outcome} after ${result.turns} turns`);
        // The invocation's last turn ends here (no model call marks its end).
        const ms = performance.now() - mark;
        turnMs.push(ms);
        if (runs === 1) perTurn.push({ ms, itemsRead: c.store.stats.itemsRead - lastItems });
        itemsRead += c.store.stats.itemsRead;
        done += result.turns;
      }),
    );
    timed.push({ turns: done - from, ms: performance.now() - t0, cpuMs: cpuSince(cpu0) });
    add(counted, diff(env.counters, roundStart));
    await between?.(round);
  }
  const sum = (k: 'ms' | 'cpuMs') => timed.reduce((s, r) => s + r[k], 0);
  return { name, runs, turns: runs * turnsPerRun, ms: sum('ms'), cpuMs: sum('cpuMs'), rounds: timed, counters: counted, itemsRead, perTurn, turnMs };
}

export async function receiveOne(receiver: SqsTickReceiver) {
  for (;;) {
    const got = await receiver.receive({ waitSeconds: 1 });
    const msg = got[0];
    if (msg?.tick) return [{ ...msg, tick: msg.tick }] as const;
  }
}

// ---- one turn per step: warm containers or a cold one per step -------------------------------

/**
 * One turn per step, in `rounds` timed windows: after each, `between(round)` runs (the bench times
 * the floor there) while the runs' next ticks wait in the queue. A window closes when its share of
 * the turns is done; a step another poller is in at that moment finishes outside every window
 * (its turn is not counted in the next one either).
 */
export async function stepShape(
  env: BenchEnv,
  name: string,
  runs: number,
  turnsPerRun: number,
  cold: boolean,
  tag: string,
  rounds = 1,
  between?: (round: number) => Promise<void>,
): Promise<ModeResult> {
  const receiver = new SqsTickReceiver({ sqs: env.clients.sqs, queueUrl: env.queueUrl });
  const visibility = new SqsTickVisibility({ sqs: env.clients.sqs, queueUrl: env.queueUrl });
  const starter = container(env, turnsPerRun);
  for (let r = 0; r < runs; r++) await startRun(starter.engine, { tenant: 'bench', runId: `step-${tag}-${r}`, agent: 'bench', input: 'go' });
  const before = snapshot(env.counters);
  const perTurn: ModeResult['perTurn'] = [];
  const turnMs: number[] = [];
  const timed: RoundTiming[] = [];
  const counted = emptyCounters();
  const total = runs * turnsPerRun;
  let itemsRead = 0;
  let ended = 0;
  let done = 0;
  // One poller per run, as many Lambda containers as runs; a container may meet any run's tick.
  const containers = Array.from({ length: runs }, () => container(env, turnsPerRun));
  for (let round = 0; round < rounds; round++) {
    const quota = Math.round((total * (round + 1)) / rounds);
    const roundStart = round === 0 ? before : snapshot(env.counters);
    const window = { t0: performance.now(), cpu0: process.cpuUsage(), from: done, closed: undefined as RoundTiming | undefined };
    const close = () => {
      window.closed ??= { turns: done - window.from, ms: performance.now() - window.t0, cpuMs: cpuSince(window.cpu0) };
    };
    await Promise.all(
      containers.map(async (_, d) => {
        while (ended < runs && done < quota) {
          const [msg] = await receiver.receive({ waitSeconds: 1 });
          if (!msg?.tick) continue;
          if (cold) containers[d] = container(env, turnsPerRun);
          const c = containers[d]!;
          const items0 = c.store.stats.itemsRead;
          const t = performance.now();
          // As the worker handler does: the visibility change goes out beside the claim.
          const shortened = visibility.setVisibility(msg.receiptHandle, 70);
          const result = await runStep(c.engine, msg.tick, { owner: `step-${tag}-${d}`, deadlineAt: Date.now() + 300_000, minTurnMs: 300_001 });
          await shortened;
          await receiver.delete(msg.receiptHandle);
          const ms = performance.now() - t;
          const items = c.store.stats.itemsRead - items0;
          itemsRead += items;
          if (result.turns > 0) {
            turnMs.push(ms);
            if (runs === 1) perTurn.push({ ms, itemsRead: items });
          }
          if (result.outcome === 'ended') ended++;
          else if (result.outcome !== 'continued') throw new Error(`${name}: step ended as ${result.outcome}`);
          if (window.closed) continue; // finished after its window closed: in no window
          done += result.turns;
          if (done >= quota || ended >= runs) close();
        }
      }),
    );
    close();
    timed.push(window.closed!);
    // The floor timed between rounds is not this mode's: count the mode's requests round by round.
    add(counted, diff(env.counters, roundStart));
    await between?.(round);
  }
  const sum = (k: 'ms' | 'cpuMs') => timed.reduce((s, r) => s + r[k], 0);
  // Counts are per turn of the whole mode; times per turn of the windows (figures() in report.ts).
  return { name, runs, turns: total, ms: sum('ms'), cpuMs: sum('cpuMs'), rounds: timed, counters: counted, itemsRead, perTurn, turnMs };
}

/** Several runs of one mode (a floor timed in rounds) as one result, for the tables. */
export function merged(name: string, parts: ModeResult[]): ModeResult {
  const counters = emptyCounters();
  for (const p of parts) add(counters, p.counters);
  const sum = (k: 'turns' | 'ms' | 'cpuMs' | 'itemsRead') => parts.reduce((s, p) => s + p[k], 0);
  return {
    name,
    runs: parts[0]?.runs ?? 0,
    turns: sum('turns'),
    ms: sum('ms'),
    cpuMs: sum('cpuMs'),
    rounds: parts.flatMap((p) => p.rounds),
    counters,
    itemsRead: sum('itemsRead'),
    perTurn: parts.flatMap((p) => p.perTurn),
    turnMs: parts.flatMap((p) => p.turnMs),
  };
}

export { emptyCounters };
