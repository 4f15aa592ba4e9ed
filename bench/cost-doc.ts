import type { ModeResult, RoundTiming } from './modes.js';
import { PAIRS, SLICE_TURNS } from './side-by-side.js';
import { PRICES, comparisonTable, costTable, markdownTable, type TurnFigures } from './report.js';

export interface CostDocInput {
  command: string;
  emulator: string;
  cores: number;
  gsiReported: boolean;
  snapshotEvery: number;
  /** Timed windows of each one-turn-per-step mode. */
  rounds: number;
  /** floor, floor + hop, worker, warm step, cold step (in that order). */
  single: TurnFigures[];
  concurrent: TurnFigures[];
  /**
   * Last quarter over first quarter of each one-run mode: time and items read (report.ts);
   * `overFloor`, the last quarter's time ratio over its floor divided by the first quarter's; and
   * `sideBySide`, the two quarters run in alternating slices (side-by-side.ts), late over early.
   */
  quarters: {
    name: string;
    q: { time: number; itemsRead: number; firstItems: number; lastItems: number } | undefined;
    overFloor?: number;
    sideBySide?: { time: number; cpu: number; itemsRead: number; earlyMs: number; lateMs: number; slices: number };
  }[];
  /** The one-run 3-put floor's per-turn time over its short runs: how much the machine drifted. */
  floorSpread: { runs: number; min: number; max: number };
  /** Per mode, the floor its ratios divide by, and the ratios (one per timed window). */
  references: Record<'single' | 'concurrent', Record<'worker' | 'warm' | 'cold', Reference>>;
}

/**
 * What a mode is compared with: the floor's ms and CPU ms per turn around it, and the mode's
 * time and CPU ratios, one per timed window (the verdict is on their median).
 */
export interface Reference {
  ms: number;
  cpuMs: number;
  ratios: number[];
  cpuRatios: number[];
}

const perTurn = (r: RoundTiming) => ({ ms: r.ms / r.turns, cpuMs: r.cpuMs / r.turns });
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

/** A mode timed in n windows, `floors` the n + 1 floor runs around them: round i over floors i and i + 1. */
export function inRounds(mode: ModeResult, floors: ModeResult[]): Reference {
  const floorRounds = floors.map((f) => perTurn({ turns: f.turns, ms: f.ms, cpuMs: f.cpuMs }));
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  mode.rounds.forEach((round, i) => {
    const [a, b] = [floorRounds[i], floorRounds[i + 1]];
    if (!a || !b || round.turns === 0) return;
    const m = perTurn(round);
    ratios.push(m.ms / ((a.ms + b.ms) / 2));
    cpuRatios.push(m.cpuMs / ((a.cpuMs + b.cpuMs) / 2));
  });
  return { ms: mean(floorRounds.map((f) => f.ms)), cpuMs: mean(floorRounds.map((f) => f.cpuMs)), ratios, cpuRatios };
}

const TARGETS = { worker: 1.25, step: 2, quarter: 1.1, workerUsd: 3, stepUsd: 6 } as const;

/**
 * The markdown the bench prints and `--write-docs` writes to docs/cost.md. Every figure comes
 * from this run's counters: nothing here is hand arithmetic.
 */
export function costDoc(input: CostDocInput): string {
  const comparisons = (key: 'single' | 'concurrent') => {
    const [floor3, floorHop, worker, warm, cold] = input[key] as [TurnFigures, TurnFigures, TurnFigures, TurnFigures, TurnFigures];
    const ref = input.references[key];
    return comparisonTable([
      { label: `worker turn / 3-put floor (${worker.name.split(', ')[1]})`, mode: worker, floor: floor3, reference: ref.worker, target: TARGETS.worker },
      { label: 'one turn per step, warm / floor + hop', mode: warm, floor: floorHop, reference: ref.warm, target: TARGETS.step },
      { label: 'one turn per step, cold / floor + hop', mode: cold, floor: floorHop, reference: ref.cold, target: TARGETS.step },
    ]);
  };
  const quarters = input.quarters
    .filter((x) => x.q && !x.name.startsWith('floor'))
    .map((x) => {
      const side = x.sideBySide;
      // The verdict: the quarters side by side when they were run so, and the items read.
      const time = side?.time ?? x.overFloor ?? x.q!.time;
      const items = Math.max(x.q!.itemsRead, side?.itemsRead ?? 0);
      const verdict = time <= TARGETS.quarter && items <= TARGETS.quarter ? 'met' : 'not met';
      const opt = (v: number | undefined) => (v !== undefined ? v.toFixed(2) : '-');
      const sideMs = side ? `${side.earlyMs.toFixed(2)} → ${side.lateMs.toFixed(2)} (${side.slices} slices each)` : '-';
      const itemsText = (v: number) => (v === Infinity ? '∞' : v.toFixed(2));
      return `| ${x.name} | ${x.q!.time.toFixed(2)} | ${opt(x.overFloor)} | ${sideMs} | **${opt(side?.time)}** | ${opt(side?.cpu)} | ${itemsText(x.q!.itemsRead)} (${x.q!.firstItems} → ${x.q!.lastItems}); ${side ? itemsText(side.itemsRead) : '-'} | ≤ ${TARGETS.quarter} | ${verdict} |`;
    });
  const worker = input.single[2]!;
  const warm = input.single[3]!;
  const usdVerdict = (r: TurnFigures, max: number) => `${r.name}: $${r.costPerMTurns.total.toFixed(2)} per million turns (target ≤ $${max}): ${r.costPerMTurns.total <= max ? 'met' : 'not met'}`;
  return `## Cost per turn, counted

<!-- Generated by \`${input.command}\` (bench/cost-doc.ts). Do not edit by hand: run it again. -->

A **turn** is one model response and the tool call it asked for: \`model_response\`,
\`tool_started\`, \`tool_result\`; the result that resolves the turn's last call carries the next
model call's budget reservation (what a separate \`model_started\` recorded before), and a step
that owes no outcome notice projects the head and releases the lease in one conditional update.
The figures below were counted
by \`${input.command}\` on ${input.emulator} and fauxqs (SQS, S3), on a ${input.cores}-core machine,
with the real adapters and AWS SDK clients; middleware on the clients counts every request, and
${input.gsiReported ? 'DynamoDB Local reports the consumed write and read units (ReturnConsumedCapacity=INDEXES), GSI copies included' : 'this emulator reports table units only (GSI copies are not in these figures: use DynamoDB Local)'}.
Snapshots every ${input.snapshotEvery} events. Times are for the ratios only (a shared machine is noisy); the counts are exact.
The emulators and the engine's code paths are warmed up first (untimed runs). Each mode runs in
${input.rounds} timed windows, each between two short runs of its floor (floor + hop on a queue of
its own, while the mode's ticks wait in theirs; the worker's windows are invocations that hand
over after their share of the turns): each window's ratio is over the two floor runs around it,
all of them are shown, and the verdict is on their median. A shared machine drifts over minutes
and its neighbours' load comes in bursts: a floor timed once, minutes away, or one burst in one
window, would move a ratio more than the code does. **CPU ms** is this
process's user + system time (the bench, the SDK clients, the engine, and fauxqs for SQS and S3;
DynamoDB Local runs in its own JVM and is not in it): a steadier figure than wall time on a shared
machine, shown beside the time ratio that the targets are set on.

Modes: the **floor** is a loop of 3 conditional PutItems of event-sized items per turn (decision,
started, result), and **floor + FIFO hop** adds one SendMessage, ReceiveMessage and DeleteMessage.
The **worker** runs turns back to back in one invocation (what the Lambda worker does while it has
time); **one turn per step** runs one turn per SQS tick, in a warm container (cached state) or a
**cold** one (a new container per step: snapshot + tail read). Empty long-poll receives are left
out (they are the pollers' idle cost, a fixed monthly line).

### One run

${markdownTable(input.single)}

${comparisons('single')}

Last quarter over first quarter of the run's turns (the target: a turn late in a 1000-turn run
costs at most 1.1 times one early in it). **time, one run** is the run above: its last quarter's
time over its first's (its first turn, which pays for the run's creation tick, left out); **over
its floor** divides each by the floor timed around it. Both compare windows minutes apart, and
a shared machine's speed drifts over minutes: in this run, the 3-put floor's ${input.floorSpread.runs}
short runs (the same requests every time) took from ${input.floorSpread.min.toFixed(2)} to ${input.floorSpread.max.toFixed(2)} ms per turn, a
spread of ${(input.floorSpread.max / input.floorSpread.min).toFixed(2)}x. So the verdict is on the
quarters **side by side** (bench/side-by-side.ts): two more runs of the mode, one taken to three
quarters of its turns and the other through its first turn (untimed), then the first one's last
quarter and the other's first quarter in alternating slices (${SLICE_TURNS.warm} steps, or a ${SLICE_TURNS.worker}-turn invocation for
the worker), each slice timed on its own, so that whatever the machine does, it does to both (the
worker runs ${PAIRS.worker} such pairs and sums them: a quarter holds few of its long slices). Its
**CPU** is this process's CPU per turn, late over early (the engine, the SDK clients and fauxqs;
not DynamoDB Local's JVM). **Items read** are exact counts, of the run above (first → last
quarter) and side by side; the verdict takes the larger.

| mode | time, one run | over its floor | side by side: ms per turn, early → late | side by side: time | side by side: CPU | items read: one run (first → last); side by side | target | verdict |
|---|---:|---:|---:|---:|---:|---:|---:|---|
${quarters.join('\n')}

### ${input.concurrent[0]?.runs ?? 0} concurrent runs

${markdownTable(input.concurrent)}

${comparisons('concurrent')}

### At list prices (us-east-1, on-demand)

Per million turns, from the per-turn counts of the one-run modes above: DynamoDB $${PRICES.dynamoWruPerM} per million write
units and $${PRICES.dynamoRruPerM} per million read units, SQS FIFO $${PRICES.sqsFifoPerM} per million requests, S3 PUT
$${(PRICES.s3PutPerM / 1000).toFixed(3)} and GET $${(PRICES.s3GetPerM / 1000).toFixed(4)} per thousand. Lambda (requests and duration) and
the model's tokens are not included: Lambda duration is the wall time of the step, mostly the
model's; the model's own price is usually far larger than everything here.

${costTable(input.single)}

- ${usdVerdict(worker, TARGETS.workerUsd)}
- ${usdVerdict(warm, TARGETS.stepUsd)}
`;
}
