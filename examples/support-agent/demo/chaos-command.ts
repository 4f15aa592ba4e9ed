import { parseArgs } from 'node:util';
import { UsageError, type Output } from 'logbook/local';
import { runDemo } from './demo.js';
import { printable, summary } from './demo-command.js';

function intArg(value: string | undefined, name: string, fallback: number, min = 0): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer >= ${min}`);
  return n;
}

/**
 * `npm run chaos -- [--runs N] [--max-kills K] [--seed S] [--json]`: a kill storm on the real
 * local stack. N support runs (default 20) while worker processes are killed with SIGKILL at
 * random points of their steps (up to K, default 220) and duplicated and stale ticks are sent
 * into the queue; escalate parks and run-level parks are answered by the scripted resolver. Two
 * more runs carry scripted faults: one whose order lookup kills its worker every time (poison),
 * one whose lookup fails every time. Exit 1 when a check fails (every run completed with the
 * uninterrupted answer, no side effect twice, no budget reset, contiguous logs, heads equal to
 * their logs; the poison run parked or failed before the DLQ, never completed; the failing
 * lookup's run completed with the model's answer to the error).
 */
export async function chaosCommand(argv: string[], io: Output): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: 'string' },
      seed: { type: 'string' },
      'max-kills': { type: 'string' },
      timeout: { type: 'string' },
      concurrency: { type: 'string' },
      dynamo: { type: 'string', default: 'auto' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const runs = intArg(values.runs, 'runs', 20, 1);
  const seed = intArg(values.seed, 'seed', Date.now() % 100_000);
  const maxKills = intArg(values['max-kills'], 'max-kills', 220);
  const dynamo = values.dynamo;
  if (dynamo !== 'auto' && dynamo !== 'dynalite' && dynamo !== 'dynamodb-local') throw new UsageError('--dynamo must be auto, dynalite or dynamodb-local');
  const log = (line: string) => io.err(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
  log(`chaos: ${runs} run(s), up to ${maxKills} kills, duplicated and stale ticks, seed ${seed}`);
  const report = await runDemo({
    runs,
    seed,
    chaos: true,
    injectTicks: true,
    faults: true,
    maxKills,
    dynamo,
    log,
    concurrency: intArg(values.concurrency, 'concurrency', 2, 1),
    timeoutMs: intArg(values.timeout, 'timeout', 1800, 1) * 1000,
  });
  io.out(values.json ? JSON.stringify({ ...summary(report), injectedTicks: report.injectedTicks }) : printable(report));
  return report.ok ? 0 : 1;
}
