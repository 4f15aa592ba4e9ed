import type { ModeResult } from './modes.js';

/** us-east-1 list prices, on-demand, USD per million requests/units (no free tier). */
export const PRICES = {
  dynamoWruPerM: 0.625,
  dynamoRruPerM: 0.125,
  sqsFifoPerM: 0.5,
  s3PutPerM: 5,
  s3GetPerM: 0.4,
} as const;

export interface TurnFigures {
  name: string;
  runs: number;
  turns: number;
  msPerTurn: number;
  /** This process's CPU per turn (ModeResult.cpuMs). */
  cpuMsPerTurn: number;
  p95Ms: number;
  turnsPerSecond: number;
  dynamoRequests: number;
  dynamoWrites: number;
  dynamoReads: number;
  wru: number;
  gsiWru: number;
  rru: number;
  itemsRead: number;
  sqs: number;
  s3Puts: number;
  s3Gets: number;
  /** USD per million turns: DynamoDB, SQS, S3; no Lambda duration, no model. */
  costPerMTurns: { dynamo: number; sqs: number; s3: number; total: number };
}

export function p95(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)]!;
}

export function figures(m: ModeResult): TurnFigures {
  const per = (x: number) => x / m.turns;
  // Times are over the timed windows (a mode in rounds leaves the steps that straddle a window's
  // end out of every window); counts are over every turn.
  const timedTurns = m.rounds.reduce((s, r) => s + r.turns, 0) || m.turns;
  const c = m.counters;
  const wru = per(c.dynamo.wru);
  const rru = per(c.dynamo.rru);
  const sqs = per(c.sqs.requests);
  const s3Puts = per(c.s3.puts);
  const s3Gets = per(c.s3.gets);
  // Per turn x price per million = USD per million turns.
  const dynamo = wru * PRICES.dynamoWruPerM + rru * PRICES.dynamoRruPerM;
  const sqsCost = sqs * PRICES.sqsFifoPerM;
  const s3 = s3Puts * PRICES.s3PutPerM + s3Gets * PRICES.s3GetPerM;
  return {
    name: m.name,
    runs: m.runs,
    turns: m.turns,
    msPerTurn: m.ms / timedTurns,
    cpuMsPerTurn: m.cpuMs / timedTurns,
    p95Ms: p95(m.turnMs),
    turnsPerSecond: timedTurns / (m.ms / 1000),
    dynamoRequests: per(c.dynamo.requests),
    dynamoWrites: per(c.dynamo.writes),
    dynamoReads: per(c.dynamo.reads),
    wru,
    gsiWru: per(c.dynamo.gsiWru),
    rru,
    itemsRead: per(m.itemsRead),
    sqs,
    s3Puts,
    s3Gets,
    costPerMTurns: { dynamo, sqs: sqsCost, s3, total: dynamo + sqsCost + s3 },
  };
}

/** `last` over `first` for counts that may be zero: none in both is no growth, some from none is. */
export function countRatio(last: number, first: number): number {
  return first === 0 ? (last === 0 ? 1 : Infinity) : last / first;
}

/** Last quarter over first quarter of a single run's turns: time and items read. */
export function quarterRatios(m: ModeResult): { time: number; itemsRead: number; firstItems: number; lastItems: number } | undefined {
  const n = m.perTurn.length;
  if (n < 8) return undefined;
  const q = Math.floor(n / 4);
  // The first turn of a run pays for its creation tick and an empty cache: start after it.
  const first = m.perTurn.slice(1, q + 1);
  const last = m.perTurn.slice(n - q);
  const sum = (xs: typeof first, k: 'ms' | 'itemsRead') => xs.reduce((s, x) => s + x[k], 0);
  const firstItems = sum(first, 'itemsRead');
  const lastItems = sum(last, 'itemsRead');
  return {
    time: sum(last, 'ms') / sum(first, 'ms'),
    itemsRead: countRatio(lastItems, firstItems),
    firstItems,
    lastItems,
  };
}

const f = (x: number, d = 2) => x.toFixed(d);
const usd = (x: number) => `$${x.toFixed(2)}`;

export interface Comparison {
  label: string;
  mode: TurnFigures;
  floor: TurnFigures;
  /** The floor timed around the mode, and the mode's ratios over it (one per timed window). */
  reference: { ms: number; cpuMs: number; ratios: number[]; cpuRatios: number[] };
  target: number;
}

export function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The table the bench prints and writes to docs/cost.md: one row per mode. */
export function markdownTable(rows: TurnFigures[]): string {
  const head =
    '| mode | runs | turns | ms/turn | CPU ms/turn | p95 ms | turns/s | DynamoDB req | writes | reads | WRU (GSI) | RRU | items read | SQS req | S3 PUT/GET | $/M turns |\n' +
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|';
  const lines = rows.map(
    (r) =>
      `| ${r.name} | ${r.runs} | ${r.turns} | ${f(r.msPerTurn)} | ${f(r.cpuMsPerTurn)} | ${f(r.p95Ms, 1)} | ${f(r.turnsPerSecond, 0)} | ${f(r.dynamoRequests)} | ${f(r.dynamoWrites)} | ${f(r.dynamoReads)} | ${f(r.wru)} (${f(r.gsiWru)}) | ${f(r.rru)} | ${f(r.itemsRead)} | ${f(r.sqs)} | ${f(r.s3Puts, 3)}/${f(r.s3Gets, 3)} | ${usd(r.costPerMTurns.total)} |`,
  );
  return [head, ...lines].join('\n');
}

export function comparisonTable(rows: Comparison[]): string {
  const head =
    '| comparison | ms per turn (mode / floor around it) | time ratio | rounds | target | verdict | CPU ms per turn (mode / floor) | CPU ratio | requests per turn (mode / floor) |\n' +
    '|---|---:|---:|---|---:|---|---:|---:|---:|';
  const lines = rows.map((c) => {
    const ratio = median(c.reference.ratios);
    const rounds = c.reference.ratios.length > 1 ? c.reference.ratios.map((r) => f(r)).join(', ') : '1 window';
    const req = `${f(c.mode.dynamoRequests + c.mode.sqs)} / ${f(c.floor.dynamoRequests + c.floor.sqs)}`;
    const cpu = `${f(c.mode.cpuMsPerTurn)} / ${f(c.reference.cpuMs)} | ${f(median(c.reference.cpuRatios))}x`;
    return `| ${c.label} | ${f(c.mode.msPerTurn)} / ${f(c.reference.ms)} | ${f(ratio)}x | ${rounds} | ≤ ${f(c.target)}x | ${ratio <= c.target ? 'met' : 'not met'} | ${cpu} | ${req} |`;
  });
  return [head, ...lines].join('\n');
}

export function costTable(rows: TurnFigures[]): string {
  const head = '| mode | DynamoDB | SQS FIFO | S3 | total per million turns |\n|---|---:|---:|---:|---:|';
  const lines = rows.map((r) => `| ${r.name} | ${usd(r.costPerMTurns.dynamo)} | ${usd(r.costPerMTurns.sqs)} | ${usd(r.costPerMTurns.s3)} | **${usd(r.costPerMTurns.total)}** |`);
  return [head, ...lines].join('\n');
}
