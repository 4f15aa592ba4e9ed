/**
 * `npm run bench`: what a turn costs, counted on the local emulators with the real adapters and
 * the real AWS SDK clients, side by side with a floor of three conditional PutItems per turn
 * (decision, started, result) and that floor plus one FIFO hop. Modes: the worker's shape (turns
 * back to back in one invocation), one turn per step in a warm container, and a cold container
 * per step; one run of N turns and R concurrent runs. Requests and capacity units are counted by
 * middleware on the SDK clients (DynamoDB Local reports consumed capacity, GSI copies included);
 * cost at list prices is computed from those counts. Times are for the ratios only.
 *
 *   npm run bench                          # 1 x 1000 turns and 8 concurrent runs, DynamoDB Local
 *   npm run bench -- --turns 200 --runs 4  # smaller
 *   npm run bench -- --write-docs          # also write the generated section of docs/cost.md (never the README)
 *   npm run bench -- --scale 100           # 100 concurrent runs on the whole local stack
 *   npm run bench -- --flood 2000          # 2,000 runs started at once, per-tenant limit, a second tenant's run
 *   npm run bench -- --context --turns 200  # input tokens per turn with each context policy, in memory
 *   npm run bench -- --stream              # streaming on the local stack: chunk writes per model call, reader delay p50/p95
 *   npm run bench -- --readers 200         # GET /runs p50/p95 on the local stack with 0 and with 200 open stream readers
 *                                          #   (--max-open-streams 1000: the poll back-off alone, no cap)
 *   npm run bench -- --stream --chat       # the same, each run read by the AI SDK's client (logbook/chat + readUIMessageStream)
 *   npm run bench -- --tracing --turns 200  # CPU per turn with OpenTelemetry tracing on vs off (memory, then emulators)
 *   npm run bench -- --workflow            # workflow steps: writes per policy, reads per decile, replay, a 1,000-way ctx.map, $/M steps
 *   npm run bench -- --workflow --steps 2000 --fanout 200 --slice 500  # smaller
 *   npm run bench -- --eval 200            # logbook eval over 200 recorded booking runs: runs/s, side effects (0), a planted prompt change
 */
import { COST_DOC, writeCostSection } from './cost-section.js';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { createLocalAwsClients } from '../lib/adapters/aws/aws-clients.js';
import { startEmulators } from '../dev/local/emulators.js';
import { createQueues, createResources, resourceNames } from '../dev/local/resources.js';
import { emptyCounters, instrument } from './instrument.js';
import { floor, merged, stepShape, workerShape, type BenchEnv, type ModeResult } from './modes.js';
import { costDoc, inRounds, type CostDocInput, type Reference } from './cost-doc.js';
import { figures, quarterRatios } from './report.js';
import { runFlood } from './flood.js';
import { runScale } from './scale.js';
import { runContextBench } from './context.js';
import { runStreamBench } from './stream.js';
import { runReadersBench } from './readers.js';
import { runTracingBench } from './tracing.js';
import { sideBySide, sideBySideRatios, type Shape, type SideBySide } from './side-by-side.js';

const { values } = parseArgs({
  options: {
    turns: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '8' },
    dynamo: { type: 'string', default: 'dynamodb-local' },
    'snapshot-every': { type: 'string', default: '50' },
    'write-docs': { type: 'boolean', default: false },
    scale: { type: 'string' },
    flood: { type: 'string' },
    'max-active': { type: 'string' },
    context: { type: 'boolean', default: false },
    stream: { type: 'boolean', default: false },
    readers: { type: 'string' },
    seconds: { type: 'string', default: '15' },
    'max-open-streams': { type: 'string' },
    chat: { type: 'boolean', default: false },
    tracing: { type: 'boolean', default: false },
    workers: { type: 'string' },
    eval: { type: 'string' },
    workflow: { type: 'boolean', default: false },
    steps: { type: 'string', default: '10000' },
    fanout: { type: 'string', default: '1000' },
    slice: { type: 'string', default: '500' },
    pollers: { type: 'string', default: '8' },
  },
});

// Node 20 is supported here; the SDK's notice about its future releases is noise in the output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
if (values.flood !== undefined) {
  const report = await runFlood({
    runs: Number(values.flood),
    turns: Number(values.turns === '1000' ? 5 : values.turns),
    workers: values.workers ? Number(values.workers) : undefined,
    maxActiveRuns: values['max-active'] ? Number(values['max-active']) : undefined,
    dynamo: values.dynamo as 'auto',
  });
  process.exit(report.completed === report.runs && report.otherCompleted ? 0 : 1);
}
if (values.workflow) {
  const { runWorkflowBench } = await import('./workflow-bench.js');
  const steps = Number(values.steps);
  const report = await runWorkflowBench({
    steps,
    fanout: Number(values.fanout),
    slice: Number(values.slice),
    pollers: Number(values.pollers),
    dynamo: values.dynamo as 'auto',
    snapshotEvery: Number(values['snapshot-every']),
  });
  console.log(`npm run bench -- --workflow --steps ${steps} --fanout ${values.fanout} --slice ${values.slice} (${cpus().length} cores, ${values.dynamo})\n`);
  console.log(report.text);
  process.exit(report.completed && report.fan.completed ? 0 : 1);
}
if (values.eval !== undefined) {
  const { runEvalBench } = await import('./eval.js');
  const { ok } = await runEvalBench({ runs: Number(values.eval) });
  process.exit(ok ? 0 : 1);
}
if (values.scale !== undefined) {
  const { ok } = await runScale({
    runs: Number(values.scale),
    workers: values.workers ? Number(values.workers) : undefined,
    turns: Number(values.turns === '1000' ? 5 : values.turns),
    dynamo: values.dynamo as 'auto',
  });
  process.exit(ok ? 0 : 1);
}

if (values.readers !== undefined) {
  const { ok } = await runReadersBench({
    readers: Number(values.readers),
    runs: values.runs === '8' ? 4 : Number(values.runs),
    seconds: Number(values.seconds),
    dynamo: values.dynamo as 'auto',
    maxOpenStreams: values['max-open-streams'] ? Number(values['max-open-streams']) : undefined,
  });
  process.exit(ok ? 0 : 1);
}
if (values.stream || values.chat) {
  const { ok } = await runStreamBench({
    reader: values.chat ? 'chat' : 'poll',
    runs: values.runs === '8' ? 4 : Number(values.runs),
    turns: values.turns === '1000' ? 3 : Number(values.turns),
    chars: 800,
    charsPerSecond: 200,
    dynamo: values.dynamo as 'auto',
  });
  process.exit(ok ? 0 : 1);
}
if (values.tracing) {
  // In memory (the engine's own CPU: the worst case for tracing), then on the emulators.
  console.log(await runTracingBench(values.turns === '1000' ? 200 : Number(values.turns), 7, values.dynamo as 'auto'));
  process.exit(0);
}

if (values.context) {
  // In memory, no emulators: what the prompt holds does not depend on the storage.
  console.log(await runContextBench(values.turns === '1000' ? 200 : Number(values.turns)));
  process.exit(0);
}

const TURNS = Number(values.turns);
/** Timed windows per mode (see the loop below): four, so that in a one-run mode each is a quarter. */
const ROUNDS = 4;
const RUNS = Number(values.runs);
const emulators = await startEmulators({ dynamo: values.dynamo as 'auto' | 'dynalite' | 'dynamodb-local' });
const clients = createLocalAwsClients(emulators.endpoints);
const counters = emptyCounters();
instrument(clients, counters);
try {
  const resources = await createResources(emulators.endpoints, resourceNames(`bench-${Date.now()}`));
  const floorQueue = await createQueues(clients.sqs, resourceNames(`bench-floor-${Date.now()}`));
  const env: BenchEnv = {
    clients,
    counters,
    tableName: resources.tableName,
    bucket: resources.bucket,
    queueUrl: resources.queueUrl,
    floorQueueUrl: floorQueue.queueUrl,
    snapshotEvery: Number(values['snapshot-every']),
  };
  const perRun = Math.floor(TURNS / RUNS);
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const results: { single: ModeResult[]; concurrent: ModeResult[] } = { single: [], concurrent: [] };
  const none: Reference = { ms: 0, cpuMs: 0, ratios: [], cpuRatios: [] };
  /** The one-run modes' references and shapes, for their quarters (the floors have none). */
  const singleRefs = new Map<ModeResult, Reference>();
  const shapes = new Map<ModeResult, Shape>();
  let floorRuns: ModeResult[] = [];
  const references: CostDocInput['references'] = { single: { worker: none, warm: none, cold: none }, concurrent: { worker: none, warm: none, cold: none } };
  // The emulators' first thousands of requests are slower (JIT, caches): not part of any figure.
  log('warming up the emulators...');
  await floor(env, 'warm-up', 1, 300, true, 'warmup');
  // And the engine's code paths (JIT), as in a container that has run steps before: untimed.
  await workerShape(env, 'warm-up', 1, 100, 'warmup-w');
  await stepShape(env, 'warm-up', 1, 30, false, 'warmup-s');
  await stepShape(env, 'warm-up', 1, 30, true, 'warmup-c');
  for (const [key, runs, turns] of [
    ['single', 1, TURNS],
    ['concurrent', RUNS, perRun],
  ] as const) {
    const tag = `${key}`;
    const label = (s: string) => `${s}, ${runs === 1 ? `1 run x ${turns}` : `${runs} runs x ${turns}`}`;
    // Every mode runs in ROUNDS timed windows, each between two short runs of its floor (the hop
    // on a queue of its own, while the mode's ticks wait in theirs); each window's ratio is over
    // the two floor runs around it, and the verdict is on the median. A shared machine drifts
    // over minutes and its neighbours' load comes in bursts: a floor timed once, minutes away, or
    // one burst in one window, would move a ratio more than the code does.
    const share = Math.ceil(turns / ROUNDS);
    const puts: ModeResult[] = [];
    const putsRound = async (i: number) => {
      puts.push(await floor(env, label('floor: 3 puts'), runs, share, false, `${tag}-a${i}`));
    };
    const hops: ModeResult[] = [];
    const hopRound = async (i: number) => {
      hops.push(await floor(env, label('floor + FIFO hop'), runs, share, true, `${tag}-b${i}`));
    };
    log(`${label('worker')} (${ROUNDS} rounds between 3-put floor rounds)...`);
    await putsRound(0);
    const worker = await workerShape(env, label('worker: turns in one invocation'), runs, turns, tag, ROUNDS, (i) => putsRound(i + 1));
    await hopRound(0);
    log(`${label('warm steps')} (${ROUNDS} rounds between floor + hop rounds)...`);
    const warm = await stepShape(env, label('one turn per step, warm'), runs, turns, false, `${tag}-w`, ROUNDS, (i) => hopRound(i + 1));
    log(`${label('cold steps')} (${ROUNDS} rounds between floor + hop rounds)...`);
    const cold = await stepShape(env, label('one turn per step, cold'), runs, turns, true, `${tag}-c`, ROUNDS, (i) => hopRound(ROUNDS + i + 1));
    const floor3 = merged(label('floor: 3 puts'), puts);
    const hop = merged(label('floor + FIFO hop'), hops);
    results[key].push(floor3, hop, worker, warm, cold);
    references[key] = {
      worker: inRounds(worker, puts),
      warm: inRounds(warm, hops.slice(0, ROUNDS + 1)),
      cold: inRounds(cold, hops.slice(ROUNDS)),
    };
    if (key === 'single') {
      singleRefs.set(worker, references.single.worker).set(warm, references.single.warm).set(cold, references.single.cold);
      shapes.set(worker, 'worker').set(warm, 'warm').set(cold, 'cold');
      floorRuns = puts;
    }
  }
  // The one-run modes' first and last quarters again, side by side (side-by-side.ts).
  const sides = new Map<Shape, SideBySide>();
  for (const shape of ['worker', 'warm', 'cold'] as const) {
    log(`quarters side by side, ${shape}: a run to turn ${TURNS - Math.floor(TURNS / 4)}, then its last quarter alternating with another's first...`);
    sides.set(shape, await sideBySide(env, shape, TURNS, `${shape}-${Date.now()}`));
  }
  const floorPerTurn = floorRuns.map((f) => f.ms / f.turns);
  const output = costDoc({
    command: `npm run bench -- --turns ${TURNS} --runs ${RUNS} --dynamo ${values.dynamo}${values['write-docs'] ? ' --write-docs' : ''}`,
    emulator: emulators.dynamo,
    cores: cpus().length,
    gsiReported: counters.gsiReported,
    snapshotEvery: env.snapshotEvery,
    rounds: ROUNDS,
    single: results.single.map(figures),
    concurrent: results.concurrent.map(figures),
    floorSpread: { runs: floorPerTurn.length, min: Math.min(...floorPerTurn), max: Math.max(...floorPerTurn) },
    quarters: results.single.map((m) => {
      const ratios = singleRefs.get(m)?.ratios;
      // Each of the ROUNDS windows of a one-run mode is a quarter: the last one's ratio over its
      // floors, over the first one's (what the run's length did, with the machine's drift taken out).
      const overFloor = ratios?.length === 4 ? ratios[3]! / ratios[0]! : undefined;
      const shape = shapes.get(m);
      const side = shape ? sides.get(shape) : undefined;
      const sideBySideFigures = side && {
        ...sideBySideRatios(side),
        earlyMs: side.early.ms / side.early.turns,
        lateMs: side.late.ms / side.late.turns,
        slices: side.slices,
      };
      return {
        name: m.name,
        q: quarterRatios(m),
        ...(overFloor !== undefined ? { overFloor } : {}),
        ...(sideBySideFigures ? { sideBySide: sideBySideFigures } : {}),
      };
    }),
    references,
  });
  console.log(output);
  if (values['write-docs']) {
    writeCostSection(output);
    log(`wrote the generated section of ${COST_DOC}`);
  }
} finally {
  clients.destroy();
  await emulators.stop();
}
