/** Numbers, times and sizes as people read them. No DOM here: unit tests import it. */

/**
 * Dollars as lib/core/money.ts's formatUsd shows them (rounded to micro-dollars, then four
 * decimals under a dollar, else cents). The inspector's modules cannot import lib/ (they are
 * served as they are, from their own root): test/unit/ui/money.test.ts holds the two together.
 */
export const USD_DECIMALS = 6;

export function usd(value: number): string {
  const scale = 10 ** USD_DECIMALS;
  const rounded = Number.isFinite(value) ? Math.round(value * scale) / scale : value;
  return `$${rounded.toFixed(Math.abs(rounded) < 1 ? 4 : 2)}`;
}

/** "1 event", "3 events": lib/core/plural.ts's plural, for the inspector (which cannot import lib/). */
export function plural(n: number, noun: string, nouns = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : nouns}`;
}

export function int(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

export function bytes(size: number): string {
  if (size < 1024) return `${size} B`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KB`;
  return `${(size / 1024 / 1024).toFixed(1)} MB`;
}

/** A duration: 850 ms, 4.2 s, 3 min 5 s, 2 h 10 min. */
export function duration(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  const a = Math.abs(ms);
  if (a < 1000) return `${sign}${Math.round(a)} ms`;
  if (a < 60_000) return `${sign}${(a / 1000).toFixed(a < 10_000 ? 1 : 0)} s`;
  if (a < 3_600_000) return `${sign}${Math.floor(a / 60_000)} min ${Math.floor((a % 60_000) / 1000)} s`;
  return `${sign}${Math.floor(a / 3_600_000)} h ${Math.floor((a % 3_600_000) / 60_000)} min`;
}

/** Wall-clock time of an epoch-ms or ISO timestamp, in UTC with milliseconds (log-like). */
export function clock(at: number | string): string {
  const d = new Date(at);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString().slice(11, 23);
}

/**
 * A moment a person can place: its time (as clock()) when it falls on the same UTC day as `now`,
 * else with its date first. An approval asked today and due in three days reads "10:00:00.000",
 * "2026-03-07 10:00:00.000", never two times that look a moment apart.
 */
export function when(at: number | string, now: number = Date.now()): string {
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return '';
  const day = d.toISOString().slice(0, 10);
  return day === new Date(now).toISOString().slice(0, 10) ? clock(at) : `${day} ${clock(at)}`;
}

export function dateTime(at: number | string): string {
  const d = new Date(at);
  return Number.isNaN(d.getTime()) ? '' : `${d.toISOString().slice(0, 19).replace('T', ' ')}Z`;
}

/** "in 12 s" / "4 s ago". */
export function relative(at: number, now: number): string {
  const d = at - now;
  return d >= 0 ? `in ${duration(d)}` : `${duration(-d)} ago`;
}

export function short(hash: string, n = 12): string {
  return hash.length > n ? `${hash.slice(0, n)}…` : hash;
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** A payload value as text: strings as they are, anything else as indented JSON. */
export function pretty(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, 2) ?? String(value);
}
