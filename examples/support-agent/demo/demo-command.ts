import { parseArgs } from 'node:util';
import { UsageError, table, type Output } from 'logbook/local';
import { runDemo, type DemoReport } from './demo.js';

function intArg(value: string | undefined, name: string, fallback: number, min = 0): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer >= ${min}`);
  return n;
}

/** `npm run demo -- [--runs N] [--chaos] [--seed S] [--json]`: exit 1 when a check fails. */
export async function demoCommand(argv: string[], io: Output): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: 'string' },
      chaos: { type: 'boolean', default: false },
      seed: { type: 'string' },
      'max-kills': { type: 'string' },
      timeout: { type: 'string' },
      dynamo: { type: 'string', default: 'auto' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const runs = intArg(values.runs, 'runs', 3, 1);
  const seed = intArg(values.seed, 'seed', Date.now() % 100_000);
  const dynamo = values.dynamo;
  if (dynamo !== 'auto' && dynamo !== 'dynalite' && dynamo !== 'dynamodb-local') throw new UsageError('--dynamo must be auto, dynalite or dynamodb-local');
  // Progress goes to stderr so that stdout stays one JSON object with --json.
  const log = (line: string) => io.err(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
  log(`demo: ${runs} run(s), seed ${seed}${values.chaos ? ', chaos' : ''}`);
  const report = await runDemo({
    runs,
    seed,
    chaos: values.chaos,
    dynamo,
    log,
    ...(values['max-kills'] !== undefined ? { maxKills: intArg(values['max-kills'], 'max-kills', 0) } : {}),
    ...(values.timeout !== undefined ? { timeoutMs: intArg(values.timeout, 'timeout', 0, 1) * 1000 } : {}),
  });
  if (values.json) {
    io.out(JSON.stringify(summary(report)));
  } else {
    io.out(printable(report));
  }
  return report.ok ? 0 : 1;
}

export function summary(report: DemoReport): Record<string, unknown> {
  return {
    runs: report.runs,
    completed: report.completed,
    parked: report.parked,
    failed: report.failed,
    workerKills: report.workerKills,
    sideEffects: report.sideEffects,
    duplicateSideEffects: report.duplicateSideEffects,
    steps: report.steps,
    elapsedMs: report.elapsedMs,
    resolutions: report.resolutions,
    crashParks: report.crashParks,
    headParks: report.headParks,
    deadLettered: report.deadLettered,
    ...(report.faults ? { poisonRun: report.faults.poison, failingRun: report.faults.failing } : {}),
    invocations: report.invocations,
    seed: report.seed,
    ok: report.ok,
    checks: report.checks,
  };
}

export function printable(report: DemoReport): string {
  const lines = [
    '',
    table(
      ['RUNS', 'COMPLETED', 'PARKED+RESOLVED', 'FAILED', 'WORKER KILLS', 'INJECTED TICKS', 'SIDE EFFECTS', 'DUPLICATES', 'MODEL STEPS', 'SECONDS'],
      [
        [
          report.runs,
          report.completed,
          report.parked,
          report.failed,
          report.workerKills,
          report.injectedTicks,
          report.sideEffects,
          report.duplicateSideEffects,
          report.steps,
          (report.elapsedMs / 1000).toFixed(1),
        ],
      ],
    ),
    '',
    `Resolver: ${report.crashParks} read(s) whose every start died rerun, ${report.headParks} head park(s) retried; dead-lettered ticks: ${
      Object.entries(report.deadLettered)
        .map(([run, n]) => `${run} x${n}`)
        .join(', ') || 'none'
    }.`,
    ...(report.faults
      ? [
          '',
          table(
            ['FAULT RUN', 'STATUS', 'LOOKUP STARTS', 'ENDED ON'],
            [report.faults.poison, report.faults.failing].map((f) => [f.runId, f.status, f.lookupStarts, f.reason.slice(0, 120)]),
          ),
        ]
      : []),
    '',
    table(['CHECK', 'RESULT', 'DETAIL'], report.checks.map((c) => [c.name, c.ok ? 'ok' : 'FAILED', c.detail])),
    '',
    report.ok ? 'All checks passed.' : 'Some checks FAILED.',
    `Replay this schedule with --seed ${report.seed}.`,
  ];
  return lines.join('\n');
}
