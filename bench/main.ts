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
 *   npm run bench -- --write-docs          # also write docs/cost.md from this run's output
 *   npm run bench -- --scale 100           # 100 concurrent runs on the whole local stack
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { writeReadmeCostSection } from './readme-section.js';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { createLocalAwsClients } from '../lib/adapters/aws/aws-clients.js';
import { startEmulators } from '../dev/local/emulators.js';
import { createResources, resourceNames } from '../dev/local/resources.js';
import { emptyCounters, instrument } from './instrument.js';
import { floor, stepShape, workerShape, type BenchEnv, type ModeResult } from './modes.js';
import { costDoc, type CostDocInput } from './cost-doc.js';
import { figures, quarterRatios } from './report.js';
import { runScale } from './scale.js';

const { values } = parseArgs({
  options: {
    turns: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '8' },
    dynamo: { type: 'string', default: 'dynamodb-local' },
    'snapshot-every': { type: 'string', default: '50' },
    'write-docs': { type: 'boolean', default: false },
    scale: { type: 'string' },
    workers: { type: 'string' },
  },
});

// Node 20 is supported here; the SDK's notice about its future releases is noise in the output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
if (values.scale !== undefined) {
  const { ok } = await runScale({ runs: Number(values.scale), workers: values.workers ? Number(values.workers) : undefined, turns: Number(values.turns === '1000' ? 5 : values.turns), dynamo: values.dynamo as 'auto' });
  process.exit(ok ? 0 : 1);
}

const TURNS = Number(values.turns);
const RUNS = Number(values.runs);
const emulators = await startEmulators({ dynamo: values.dynamo as 'auto' | 'dynalite' | 'dynamodb-local' });
const clients = createLocalAwsClients(emulators.endpoints);
const counters = emptyCounters();
instrument(clients, counters);
try {
  const resources = await createResources(emulators.endpoints, resourceNames(`bench-${Date.now()}`));
  const env: BenchEnv = { clients, counters, tableName: resources.tableName, bucket: resources.bucket, queueUrl: resources.queueUrl, snapshotEvery: Number(values['snapshot-every']) };
  const perRun = Math.floor(TURNS / RUNS);
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const results: { single: ModeResult[]; concurrent: ModeResult[] } = { single: [], concurrent: [] };
  const none = { ms: 0, cpuMs: 0 };
  const references: CostDocInput['references'] = { single: { worker: none, warm: none, cold: none }, concurrent: { worker: none, warm: none, cold: none } };
  // The emulators' first thousands of requests are slower (JIT, caches): not part of any figure.
  log('warming up the emulators...');
  await floor(env, 'warm-up', 1, 300, true, 'warmup');
  for (const [key, runs, turns] of [['single', 1, TURNS], ['concurrent', RUNS, perRun]] as const) {
    const tag = `${key}`;
    const label = (s: string) => `${s}, ${runs === 1 ? `1 run x ${turns}` : `${runs} runs x ${turns}`}`;
    const msPerTurn = (m: ModeResult) => m.ms / m.turns;
    // Each mode is timed between two runs of its floor, and its ratio is over their mean: a shared
    // machine drifts over minutes, and a floor measured once, long before, drifts with it.
    log(`${label('floor')}...`);
    const floor3 = await floor(env, label('floor: 3 puts'), runs, turns, false, `${tag}-a`);
    log(`${label('worker')}...`);
    const worker = await workerShape(env, label('worker: turns in one invocation'), runs, turns, tag);
    log(`${label('floor again')}...`);
    const floor3After = await floor(env, label('floor: 3 puts'), runs, turns, false, `${tag}-a2`);
    log(`${label('floor + hop')}...`);
    const hop = await floor(env, label('floor + FIFO hop'), runs, turns, true, `${tag}-b`);
    log(`${label('warm steps')}...`);
    const warm = await stepShape(env, label('one turn per step, warm'), runs, turns, false, `${tag}-w`);
    log(`${label('floor + hop again')}...`);
    const hopBetween = await floor(env, label('floor + FIFO hop'), runs, turns, true, `${tag}-b2`);
    log(`${label('cold steps')}...`);
    const cold = await stepShape(env, label('one turn per step, cold'), runs, turns, true, `${tag}-c`);
    log(`${label('floor + hop again')}...`);
    const hopAfter = await floor(env, label('floor + FIFO hop'), runs, turns, true, `${tag}-b3`);
    results[key].push(floor3, hop, worker, warm, cold);
    const mean = (a: ModeResult, b: ModeResult) => ({ ms: (msPerTurn(a) + msPerTurn(b)) / 2, cpuMs: (a.cpuMs / a.turns + b.cpuMs / b.turns) / 2 });
    references[key] = { worker: mean(floor3, floor3After), warm: mean(hop, hopBetween), cold: mean(hopBetween, hopAfter) };
  }
  const output = costDoc({
    command: `npm run bench -- --turns ${TURNS} --runs ${RUNS} --dynamo ${values.dynamo}${values['write-docs'] ? ' --write-docs' : ''}`,
    emulator: emulators.dynamo,
    cores: cpus().length,
    gsiReported: counters.gsiReported,
    snapshotEvery: env.snapshotEvery,
    single: results.single.map(figures),
    concurrent: results.concurrent.map(figures),
    quarters: results.single.map((m) => ({ name: m.name, q: quarterRatios(m) })),
    references,
  });
  console.log(output);
  if (values['write-docs']) {
    mkdirSync('docs', { recursive: true });
    writeFileSync('docs/cost.md', output);
    writeReadmeCostSection(output);
    log('wrote docs/cost.md and the README\'s cost section');
  }
} finally {
  clients.destroy();
  await emulators.stop();
}
