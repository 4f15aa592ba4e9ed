import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { ManualClock } from '../lib/adapters/memory/manual-clock.js';
import { startRun } from '../lib/engine/start-run.js';
import { runStep } from '../lib/engine/step-runner.js';
import { otlpTracing, type OtlpTracing } from '../lib/engine/tracing/otlp-setup.js';
import { memoryStorage, spawnWorker, type World } from '../lib/testing/world.js';
import { benchModels, benchRegistry } from './bench-agent.js';
import { createLocalAwsClients } from '../lib/adapters/aws/aws-clients.js';
import { startEmulators } from '../dev/local/emulators.js';
import { createQueues, createResources, resourceNames } from '../dev/local/resources.js';
import { emptyCounters, instrument } from './instrument.js';
import { stepShape, workerShape, type BenchEnv, type ModeResult } from './modes.js';

/**
 * `npm run bench -- --tracing [--turns 200]`: the CPU a turn costs with tracing on against off,
 * measured with process.cpuUsage() (user + system) around whole runs of the bench agent (one model
 * call and one tool call per turn) on the memory ports: the engine's own work, so the ratio is the
 * worst case (on AWS every turn also pays the SDK clients' work, which tracing does not add to).
 * With tracing on, the real SDK (otlpTracing: batch processor, OTLP/HTTP protobuf exporter) sends
 * every step's spans to a collector stand-in in another process, which only counts what it gets;
 * each step waits for its spans to be sent, as in production. Two shapes: the worker's (turns back
 * to back in one invocation) and one turn per step (every turn pays a step's spans). A third arm
 * adds the GenAI metrics (OTEL_METRICS_EXPORTER=otlp), sent after every step as the Lambda worker
 * sends them after every invocation. The arms rotate round by round, so a machine's changing load
 * falls on each.
 */
export async function runTracingBench(turns: number, rounds = 7, dynamo: 'auto' | 'dynalite' | 'dynamodb-local' = 'dynamodb-local'): Promise<string> {
  const sink = await startSink();
  const sdk = await otlpTracing({ endpoint: sink.url, protocol: 'http/protobuf', env: {} });
  // The same spans plus the GenAI metrics, sent after every step as the Lambda worker sends them after every invocation.
  const withMetrics = await otlpTracing({ endpoint: sink.url, protocol: 'http/protobuf', env: {}, metrics: true });
  let recorded = 0;
  const tracer: OtlpTracing = { ...sdk, record: (spans) => ((recorded += spans.length), sdk.record(spans)) };
  try {
    const lines = [`Tracing CPU per turn (${turns} turns a run, ${rounds} rounds each, median; collector stand-in in another process)`, ''];
    lines.push(
      '| shape | off: CPU µs/turn | spans: CPU µs/turn | spans / off | spans + metrics: CPU µs/turn | + metrics / spans | spans a turn |',
      '|---|---:|---:|---:|---:|---:|---:|',
    );
    for (const shape of [{ name: "worker's shape (turns back to back)", maxTurns: undefined }, { name: 'one turn per step', maxTurns: 1 }] as const) {
      // Warm-up, every arm.
      for (const arm of [undefined, tracer, withMetrics]) await measure(turns, shape.maxTurns, arm);
      const off: number[] = [];
      const on: number[] = [];
      const metered: number[] = [];
      const spansBefore = recorded;
      for (let i = 0; i < rounds; i++) {
        // The arms rotate, so a burst of load falls on each as often.
        const arms = [() => off, () => on, () => metered];
        const order = [0, 1, 2].map((k) => (k + i) % 3);
        for (const k of order) arms[k]!().push(await measure(turns, shape.maxTurns, k === 0 ? undefined : k === 1 ? tracer : withMetrics));
      }
      await tracer.flush();
      const spansPerTurn = (recorded - spansBefore) / (rounds * turns);
      const [a, b, c] = [median(off) / turns, median(on) / turns, median(metered) / turns];
      lines.push(`| ${shape.name} | ${a.toFixed(0)} | ${b.toFixed(0)} | ${(b / a).toFixed(3)} | ${c.toFixed(0)} | ${(c / b).toFixed(3)} | ${spansPerTurn.toFixed(1)} |`);
    }
    await new Promise((r) => setTimeout(r, 200));
    lines.push('', `${recorded} spans recorded (spans arm); the collector stand-in got ${sink.requests()} OTLP requests, ${(sink.bytes() / 1024).toFixed(0)} KiB.`);
    lines.push('', ...(await onEmulators(turns, rounds, tracer, dynamo)));
    return lines.join('\n');
  } finally {
    await tracer.shutdown();
    await withMetrics.shutdown();
    sink.stop();
  }
}

/** CPU microseconds of one whole run (start, every step, the last flush). */
async function measure(turns: number, maxTurns: number | undefined, tracer: OtlpTracing | undefined): Promise<number> {
  const storage = memoryStorage();
  const world: World = { storage, clock: new ManualClock(), registry: benchRegistry(turns), models: benchModels(turns) };
  const worker = spawnWorker(world, undefined, {}, tracer ? { tracer } : {});
  const run = { tenant: 'bench', runId: `tracing-${maxTurns ?? 'all'}` };
  const before = process.cpuUsage();
  await startRun(worker.deps, { ...run, agent: 'bench', input: 'go' });
  for (let i = 0; i < turns * 4; i++) {
    const message = storage.queue.take();
    if (!message) break;
    await runStep(worker.deps, message.tick, { owner: worker.name, deadlineAt: world.clock.now() + 300_000, ...(maxTurns ? { maxTurns } : {}) });
    // The worker sends its metrics when each invocation ends (worker-handler.ts).
    if (tracer?.metrics) await tracer.flushMetrics();
  }
  await tracer?.flush();
  const used = process.cpuUsage(before);
  const head = await storage.heads.getHead(run);
  if (head?.status !== 'completed') throw new Error(`bench run ended ${head?.status}`);
  return used.user + used.system;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** An OTLP/HTTP endpoint in a child process that reads, answers 200 and counts requests and bytes. */
async function startSink(): Promise<{ url: string; bytes(): number; requests(): number; stop(): void }> {
  const script = `
    const http = require('node:http');
    let requests = 0, bytes = 0;
    const server = http.createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        requests++;
        bytes += Buffer.concat(chunks).length;
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        process.stdout.write(JSON.stringify({ requests, bytes }) + '\\n');
      });
    });
    server.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ port: server.address().port }) + '\\n'));
  `;
  const child: ChildProcess = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  let counts = { requests: 0, bytes: 0 };
  const port = await new Promise<number>((resolve) => {
    lines.on('line', (line) => {
      const msg = JSON.parse(line) as { port?: number; requests?: number; bytes?: number };
      if (msg.port) resolve(msg.port);
      else counts = msg as typeof counts;
    });
  });
  return { url: `http://127.0.0.1:${port}`, bytes: () => counts.bytes, requests: () => counts.requests, stop: () => child.kill() };
}

/**
 * The same comparison with the real adapters and AWS SDK clients on the local emulators (the
 * bench's own modes, modes.ts): what a turn costs on Lambda, where tracing's share is smaller.
 * CPU is this process's (engine, SDK clients, fauxqs for SQS; DynamoDB Local runs in its JVM).
 */
async function onEmulators(turns: number, rounds: number, tracer: OtlpTracing, dynamo: 'auto' | 'dynalite' | 'dynamodb-local'): Promise<string[]> {
  const emulators = await startEmulators({ dynamo });
  const clients = createLocalAwsClients(emulators.endpoints);
  const counters = emptyCounters();
  instrument(clients, counters);
  try {
    const resources = await createResources(emulators.endpoints, resourceNames(`bench-tracing-${Date.now()}`));
    const floorQueue = await createQueues(clients.sqs, resourceNames(`bench-tracing-floor-${Date.now()}`));
    const base: BenchEnv = {
      clients,
      counters,
      tableName: resources.tableName,
      bucket: resources.bucket,
      queueUrl: resources.queueUrl,
      floorQueueUrl: floorQueue.queueUrl,
      snapshotEvery: 50,
    };
    const traced: BenchEnv = { ...base, tracer };
    const perTurn = (r: ModeResult) => (r.cpuMs * 1000) / r.turns;
    const lines = [
      `On the emulators (${emulators.dynamo}, real AWS SDK clients; ${turns} turns a run, ${rounds} rounds each, median)`,
      '',
      '| shape | off: CPU µs/turn | on: CPU µs/turn | on / off |',
      '|---|---:|---:|---:|',
    ];
    let n = 0;
    const shapes = [
      { name: "worker's shape (turns back to back)", run: (env: BenchEnv) => workerShape(env, 'w', 1, turns, `tw${n++}`) },
      { name: 'one turn per step, warm', run: (env: BenchEnv) => stepShape(env, 's', 1, turns, false, `ts${n++}`) },
    ];
    for (const shape of shapes) {
      await shape.run(base); // warm-up, both arms
      await shape.run(traced);
      const off: number[] = [];
      const on: number[] = [];
      for (let i = 0; i < rounds; i++) {
        // Which arm goes first alternates too: a burst of load then falls on each as often.
        const first = i % 2 === 0;
        if (first) off.push(perTurn(await shape.run(base)));
        on.push(perTurn(await shape.run(traced)));
        await tracer.flush();
        if (!first) off.push(perTurn(await shape.run(base)));
      }
      const [a, b] = [median(off), median(on)];
      lines.push(`| ${shape.name} | ${a.toFixed(0)} | ${b.toFixed(0)} | ${(b / a).toFixed(3)} |`);
    }
    return lines;
  } finally {
    clients.destroy();
    await emulators.stop();
  }
}
