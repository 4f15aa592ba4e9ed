/**
 * `npm run bench -- --eval 200`: `logbook eval` over recorded runs of the booking agent. The trips
 * are recorded in a test world (examples/booking-agent/booking-evals.ts: varied travellers,
 * routes, party sizes, charges approved), written as a run file (what `logbook runs export`
 * writes), then evaluated twice by the CLI in this process: against the unchanged candidate and
 * against the planted prompt change (BOOKING_EVAL_REWORD=1). Reports runs per second, the side
 * effects the candidates' fake services saw (must be 0) and what the eval found.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatRunFile, type EvalReport } from '../lib/testing/index.js';
import { main } from '../dev/cli/main.js';
import type { Output } from '../dev/cli/output.js';
import { candidateServices, recordTrips } from '../examples/booking-agent/booking-evals.js';

const CANDIDATE = 'examples/booking-agent/booking-evals.ts';

export interface EvalBenchResult {
  runs: number;
  unchanged: { code: number; runsPerSecond: number; score: number | null; effects: number };
  reworded: { code: number; runsPerSecond: number; score: number | null; effects: number; table: string };
  ok: boolean;
}

async function evalOnce(
  file: string,
  report: string,
  reword: boolean,
  minScore: string,
): Promise<{ code: number; seconds: number; report: EvalReport; stdout: string; effects: number }> {
  const stdout: string[] = [];
  const io: Output = { out: (t) => stdout.push(t), err: () => undefined, tty: false };
  const before = candidateServices.length;
  process.env.BOOKING_EVAL_REWORD = reword ? '1' : '0';
  const started = performance.now();
  const code = await main(['eval', '--agents', CANDIDATE, '--file', file, '--min-score', minScore, '--report', report], io);
  const seconds = (performance.now() - started) / 1000;
  delete process.env.BOOKING_EVAL_REWORD;
  const built = candidateServices.slice(before);
  if (built.length === 0) throw new Error('the CLI built no candidate services in this process: the effects count would be meaningless');
  const effects = built.reduce((n, s) => n + s.effects().length, 0);
  return { code, seconds, report: JSON.parse(readFileSync(report, 'utf8')) as EvalReport, stdout: stdout.join('\n'), effects };
}

export async function runEvalBench(options: { runs: number; log?: (line: string) => void }): Promise<EvalBenchResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const dir = mkdtempSync(join(tmpdir(), 'logbook-eval-bench-'));
  try {
    const recordStart = performance.now();
    const { runs, world } = await recordTrips(options.runs);
    const recordSeconds = (performance.now() - recordStart) / 1000;
    const file = join(dir, 'booking-runs.jsonl');
    writeFileSync(file, formatRunFile(runs));
    const writes = world.services.effects().filter((e) => e.applied && !e.readOnly).length;
    log(`recorded ${runs.length} booking runs in ${recordSeconds.toFixed(2)} s (${writes} holds, charges and ticketings written by the recording)`);
    log(`\nlogbook eval --agents ${CANDIDATE} --file booking-runs.jsonl --min-score 1`);
    const same = await evalOnce(file, join(dir, 'unchanged.json'), false, '1');
    log(same.stdout.replace(/^/gm, '  '));
    log(`\nBOOKING_EVAL_REWORD=1 logbook eval --agents ${CANDIDATE} --file booking-runs.jsonl --min-score 0.9`);
    const reworded = await evalOnce(file, join(dir, 'reworded.json'), true, '0.9');
    log(reworded.stdout.replace(/^/gm, '  '));
    const rate = (r: { seconds: number }) => runs.length / r.seconds;
    log(`\n| candidate | exit | runs/s | score | side effects executed | served / not executed |`);
    log(`|---|---|---|---|---|---|`);
    for (const [name, r] of [
      ['unchanged', same],
      ['reworded prompt', reworded],
    ] as const) {
      log(
        `| ${name} | ${r.code} | ${rate(r).toFixed(1)} | ${r.report.score?.toFixed(3)} | ${r.effects} | ${r.report.counts.served} / ${r.report.counts.notExecuted} |`,
      );
    }
    const ok = same.code === 0 && reworded.code === 1 && same.effects === 0 && reworded.effects === 0 && same.report.score === 1;
    return {
      runs: runs.length,
      unchanged: { code: same.code, runsPerSecond: rate(same), score: same.report.score, effects: same.effects },
      reworded: { code: reworded.code, runsPerSecond: rate(reworded), score: reworded.report.score, effects: reworded.effects, table: reworded.stdout },
      ok,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
