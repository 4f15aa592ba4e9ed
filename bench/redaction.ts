/**
 * `npx tsx --conditions=logbook-source bench/redaction.ts [--kb 256] [--rounds 15] [--baseline DIR]`: what the
 * redactor costs per KB of payload, on the shapes a run writes: prose (a model's text), a JSON tool
 * output with many keys, numbers and ids, log lines full of timestamps and order numbers, a base64
 * image (an attachment echoed by a tool), and the same prose streamed in 250 ms batches through the
 * stream redactor. Redaction runs on every write, so each figure is the median over rounds of CPU
 * time (process.cpuUsage) per KB; a line also says whether the work is linear (the ratio of the
 * cost per KB at 4x the size, which stays near 1 for a linear pass).
 */
import { parseArgs } from 'node:util';
import type { JsonValue } from '../lib/core/json.js';
import { Redactor } from '../lib/core/redaction.js';
import { StreamRedactor } from '../lib/core/redaction-stream.js';

const { values } = parseArgs({ options: { kb: { type: 'string', default: '256' }, rounds: { type: 'string', default: '15' }, baseline: { type: 'string' } } });
const KB = Number(values.kb);
const ROUNDS = Number(values.rounds);
/**
 * `--baseline DIR`: another checkout of Logbook (e.g. the main worktree) whose redactor runs
 * round by round beside this one, so a machine's changing load falls on both: the ratio is the
 * figure to read, not the µs.
 */
const BASELINE = values.baseline;

const WORDS = 'the order shipped on time and the customer asked about a refund for the second parcel which was late'.split(' ');

function prose(bytes: number): string {
  let out = '';
  let i = 0;
  while (out.length < bytes) {
    out += WORDS[(i * 7) % WORDS.length]! + (i % 17 === 16 ? '.\n' : ' ');
    i++;
  }
  return out.slice(0, bytes);
}

function jsonOutput(bytes: number): JsonValue {
  const items: JsonValue[] = [];
  let size = 2;
  for (let i = 0; size < bytes; i++) {
    const item = {
      id: `ord_${(1_000_000 + i * 37).toString(36)}`,
      orderNumber: String(4_000_000_000_000_000 + i * 7919),
      createdAt: 1_730_419_200_000 + i * 60_000,
      status: i % 3 === 0 ? 'shipped' : 'pending',
      total: { amount: 1999 + i, currency: 'EUR' },
      customer: { name: 'Ada Lovelace', email: `ada${i}@example.com` },
      note: WORDS.slice(0, 6 + (i % 8)).join(' '),
      sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    };
    items.push(item);
    size += JSON.stringify(item).length + 1;
  }
  return { items, nextToken: 'AAAbbbCCCddd111' };
}

function logLines(bytes: number): string {
  let out = '';
  for (let i = 0; out.length < bytes; i++) {
    out += `2026-11-01T10:${String(i % 60).padStart(2, '0')}:00.000Z ts=${1_730_419_200_000 + i} order=${7_340_012_345_678_901 + i * 13} user=${100_000 + i} took ${i % 900} ms\n`;
  }
  return out.slice(0, bytes);
}

function base64Image(bytes: number): string {
  const raw = new Uint8Array(Math.ceil((bytes * 3) / 4));
  let x = 2463534242;
  for (let i = 0; i < raw.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    raw[i] = x & 0xff;
  }
  return `data:image/png;base64,${Buffer.from(raw).toString('base64')}`.slice(0, bytes);
}

function cpuMicros(fn: () => void): number {
  const before = process.cpuUsage();
  fn();
  const d = process.cpuUsage(before);
  return d.user + d.system;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

type Runner = { text(v: string): string; json(v: JsonValue): JsonValue };
const r = new Redactor();
const base: Runner | undefined = BASELINE ? new ((await import(`${BASELINE}/lib/core/redaction.ts`)) as { Redactor: new () => Runner }).Redactor() : undefined;

/** The stream redactor, fed the text as a model streams it: a delta every 40 characters, a release every 2,048. */
function streamed(value: string): void {
  const sr = new StreamRedactor(r, { holdChars: 64 });
  let since = 0;
  for (let i = 0; i < value.length; i += 40) {
    sr.push(value.slice(i, i + 40));
    since += 40;
    if (since >= 2048) {
      sr.take(false);
      since = 0;
    }
  }
  sr.take(true);
}

interface Shape {
  name: string;
  make: (bytes: number) => unknown;
  run: (redactor: Runner, v: unknown) => void;
  /** Only this checkout has it. */
  newOnly?: boolean;
}
const shapes: Shape[] = [
  { name: 'prose (text)', make: prose, run: (x, v) => void x.text(v as string) },
  { name: 'JSON tool output (json)', make: jsonOutput, run: (x, v) => void x.json(v as JsonValue) },
  { name: 'log lines: timestamps, order numbers (text)', make: logLines, run: (x, v) => void x.text(v as string) },
  { name: 'base64 image (text)', make: base64Image, run: (x, v) => void x.text(v as string) },
  { name: 'prose streamed, 2 KB releases (stream redactor)', make: prose, run: (_x, v) => streamed(v as string), newOnly: true },
];

/** Median CPU µs per KB of each redactor on `make(kb KB)`, rounds alternating between them. */
function perKb(shape: Shape, kb: number): { now: number; before?: number } {
  const value = shape.make(kb * 1024);
  const arms: Runner[] = [r, ...(base && !shape.newOnly ? [base] : [])];
  for (const arm of arms) shape.run(arm, value); // warm-up
  const times = arms.map(() => [] as number[]);
  for (let i = 0; i < ROUNDS; i++) arms.forEach((arm, a) => times[a]!.push(cpuMicros(() => shape.run(arm, value))));
  const [now, before] = times.map((t) => median(t) / kb);
  return { now: now!, ...(before !== undefined ? { before } : {}) };
}

console.log(`Redaction CPU per KB (median of ${ROUNDS} rounds at ${KB} KB; linearity = cost per KB at ${KB * 4} KB / at ${KB} KB)`);
console.log('');
console.log(base ? '| payload | before µs/KB | now µs/KB | now / before | linearity |' : '| payload | µs/KB | linearity |');
console.log(base ? '|---|---:|---:|---:|---:|' : '|---|---:|---:|');
for (const shape of shapes) {
  const small = perKb(shape, KB);
  const large = perKb(shape, KB * 4);
  const linearity = (large.now / small.now).toFixed(2);
  if (!base) console.log(`| ${shape.name} | ${small.now.toFixed(1)} | ${linearity} |`);
  else {
    const before = small.before === undefined ? '-' : small.before.toFixed(1);
    const ratio = small.before === undefined ? '-' : (small.now / small.before).toFixed(2);
    console.log(`| ${shape.name} | ${before} | ${small.now.toFixed(1)} | ${ratio} | ${linearity} |`);
  }
}
