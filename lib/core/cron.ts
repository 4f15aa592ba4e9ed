import { ConfigError } from './errors.js';
import { crc32 } from './crc32.js';

/**
 * Schedules' cron, pure: EventBridge Scheduler's form `cron(minutes hours day-of-month month
 * day-of-week year)`, the one a deployed schedule is given as it is, so the local stack and AWS
 * read the same text. Each field takes `*`, a number, a range `a-b`, a list `a,b`, and a step
 * `*\/n` or `a/n` or `a-b/n`; months also `JAN`-`DEC`, days of the week `SUN`-`SAT` (1 is
 * Sunday, 7 Saturday); exactly one of day-of-month and day-of-week is `?` (any). EventBridge's
 * `L`, `W` and `#` are refused (not implemented here). No clock: every function takes the time.
 *
 * Wall times in a time zone, at a daylight-saving change: a time that does not exist (the hour
 * skipped in spring) has no firing; a time that occurs twice (the hour repeated in autumn) fires
 * once, at its first occurrence.
 */
export interface Cron {
  readonly text: string;
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  /** undefined: `?`. */
  readonly daysOfMonth?: ReadonlySet<number>;
  readonly months: ReadonlySet<number>;
  /** 1 (Sunday) to 7 (Saturday); undefined: `?`. */
  readonly daysOfWeek?: ReadonlySet<number>;
  readonly years: ReadonlySet<number>;
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
const FIELDS = [
  { name: 'minutes', min: 0, max: 59 },
  { name: 'hours', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS },
  { name: 'day-of-week', min: 1, max: 7, names: DAYS },
  { name: 'year', min: 1970, max: 2199 },
] as const;

export const CRON_FORM = 'cron(minutes hours day-of-month month day-of-week year), e.g. cron(0 9 ? * MON-FRI *)';

/** The parsed expression, or a ConfigError naming the field that is wrong. */
export function parseCron(text: string): Cron {
  const m = /^cron\((.*)\)$/.exec(typeof text === 'string' ? text.trim() : '');
  if (!m) throw new ConfigError(`cron ${JSON.stringify(text)}: must be ${CRON_FORM}`);
  const parts = m[1]!.trim().split(/\s+/);
  if (parts.length !== 6) throw new ConfigError(`cron ${JSON.stringify(text)}: has ${parts.length} of its 6 fields; must be ${CRON_FORM}`);
  const sets = parts.map((p, i) => parseField(text, p, FIELDS[i]!));
  const [minutes, hours, dom, months, dow, years] = sets;
  if ((dom === undefined) === (dow === undefined)) {
    throw new ConfigError(`cron ${JSON.stringify(text)}: exactly one of day-of-month and day-of-week must be ? (EventBridge's rule)`);
  }
  if (minutes === undefined || hours === undefined || months === undefined || years === undefined) {
    throw new ConfigError(`cron ${JSON.stringify(text)}: only day-of-month and day-of-week take ?`);
  }
  return {
    text: text.trim(),
    minutes: [...minutes].sort((a, b) => a - b),
    hours: [...hours].sort((a, b) => a - b),
    ...(dom ? { daysOfMonth: dom } : {}),
    months,
    ...(dow ? { daysOfWeek: dow } : {}),
    years,
  };
}

function parseField(text: string, part: string, f: (typeof FIELDS)[number]): Set<number> | undefined {
  const bad = (why: string) => new ConfigError(`cron ${JSON.stringify(text)}: ${f.name} ${JSON.stringify(part)} ${why}`);
  if (part === '?') return undefined;
  if (/[LW#]/i.test(part.replace(/[A-Z]{3}/gi, (w) => (('names' in f ? (f.names as readonly string[]) : []).includes(w.toUpperCase()) ? '0' : w)))) {
    throw bad('uses L, W or #, which Logbook schedules do not support');
  }
  const value = (s: string): number => {
    const names = 'names' in f ? (f.names as readonly string[]) : undefined;
    const named = names?.indexOf(s.toUpperCase()) ?? -1;
    const n = named >= 0 ? named + f.min : /^\d+$/.test(s) ? Number(s) : NaN;
    if (!Number.isInteger(n) || n < f.min || n > f.max) throw bad(`has ${JSON.stringify(s)}, not a value from ${f.min} to ${f.max}`);
    return n;
  };
  const out = new Set<number>();
  for (const item of part.split(',')) {
    const [range, stepText, extra] = item.split('/');
    if (extra !== undefined || range === undefined || range === '') throw bad('is not a value, range, list or step');
    let lo: number;
    let hi: number;
    if (range === '*') [lo, hi] = [f.min, f.max];
    else if (range.includes('-')) {
      const [a, b, more] = range.split('-');
      if (more !== undefined || !a || !b) throw bad('has a range that is not a-b');
      [lo, hi] = [value(a), value(b)];
      if (lo > hi) throw bad(`has a range ${range} that runs backwards`);
    } else [lo, hi] = [value(range), stepText === undefined ? value(range) : f.max];
    const step = stepText === undefined ? 1 : /^\d+$/.test(stepText) ? Number(stepText) : NaN;
    if (!Number.isInteger(step) || step < 1) throw bad(`has a step ${JSON.stringify(stepText)} that is not a positive whole number`);
    for (let n = lo; n <= hi; n += step) out.add(n);
  }
  return out;
}

/** Whether `zone` names an IANA time zone this runtime knows (`UTC` included). */
export function isTimeZone(zone: string): boolean {
  if (typeof zone !== 'string' || zone.length === 0) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC at instant `t`, in ms (wall time = t + offset). */
function offsetAt(zone: string, t: number): number {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, f);
  }
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(new Date(t))) if (part.type !== 'literal') p[part.type] = Number(part.value);
  const wall = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour! % 24, p.minute!, p.second!);
  return wall - Math.floor(t / 1000) * 1000;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The first instant whose wall time in `zone` is `wall` (a wall time written as UTC ms), or undefined when it does not exist. */
export function instantOfWallTime(zone: string, wall: number): number | undefined {
  const offsets = [...new Set([offsetAt(zone, wall - 12 * HOUR), offsetAt(zone, wall + 12 * HOUR)])];
  const found = offsets.map((o) => wall - o).filter((t) => offsetAt(zone, t) === wall - t);
  return found.length === 0 ? undefined : Math.min(...found);
}

function dayMatches(cron: Cron, day: number): boolean {
  const d = new Date(day);
  if (!cron.years.has(d.getUTCFullYear()) || !cron.months.has(d.getUTCMonth() + 1)) return false;
  if (cron.daysOfMonth) return cron.daysOfMonth.has(d.getUTCDate());
  return cron.daysOfWeek!.has(d.getUTCDay() + 1);
}

/** How far a search looks (about 8 years of days) before it answers that nothing fires. */
const SEARCH_DAYS = 366 * 8;

/** The first firing strictly after `after` (ms since the epoch), or undefined when none comes within about 8 years. */
export function nextFiring(cron: Cron, zone: string, after: number): number | undefined {
  const startDay = Math.floor((after + offsetAt(zone, after)) / DAY) * DAY - DAY;
  for (let i = 0; i <= SEARCH_DAYS; i++) {
    const day = startDay + i * DAY;
    if (!dayMatches(cron, day)) continue;
    for (const h of cron.hours) {
      for (const m of cron.minutes) {
        const t = instantOfWallTime(zone, day + h * HOUR + m * 60_000);
        if (t !== undefined && t > after) return t;
      }
    }
  }
  return undefined;
}

/** The last firing strictly before `before`, or undefined when none came within about 8 years. */
export function previousFiring(cron: Cron, zone: string, before: number): number | undefined {
  const startDay = Math.floor((before + offsetAt(zone, before)) / DAY) * DAY + DAY;
  for (let i = 0; i <= SEARCH_DAYS; i++) {
    const day = startDay - i * DAY;
    if (!dayMatches(cron, day)) continue;
    for (let hi = cron.hours.length - 1; hi >= 0; hi--) {
      for (let mi = cron.minutes.length - 1; mi >= 0; mi--) {
        const t = instantOfWallTime(zone, day + cron.hours[hi]! * HOUR + cron.minutes[mi]! * 60_000);
        if (t !== undefined && t < before) return t;
      }
    }
  }
  return undefined;
}

/** Every firing in (after, until], oldest first, at most `limit` of them. */
export function firingsBetween(cron: Cron, zone: string, after: number, until: number, limit = 100): number[] {
  const out: number[] = [];
  let t = nextFiring(cron, zone, after);
  while (t !== undefined && t <= until && out.length < limit) {
    out.push(t);
    t = nextFiring(cron, zone, t);
  }
  return out;
}

/** The longest schedule name a run id keeps whole (RUN_ID_PATTERN allows 80 characters). */
const MAX_NAME_IN_ID = 59;

/**
 * The run a firing starts: a pure function of the schedule's name and the firing's time (to the
 * minute, UTC), `sched-<name>-<yyyymmddThhmmZ>`, so a second delivery of the same firing names
 * the same run and starts nothing. A name too long to fit keeps its first 50 characters and a
 * CRC-32 of the whole.
 */
export function scheduleRunId(name: string, scheduledAt: number): string {
  const d = new Date(Math.floor(scheduledAt / 60_000) * 60_000);
  const stamp = d.toISOString().replace(/[-:]/g, '').slice(0, 13) + 'Z';
  const short = name.length <= MAX_NAME_IN_ID ? name : `${name.slice(0, 50)}-${crc32(new TextEncoder().encode(name)).toString(16).padStart(8, '0')}`;
  return `sched-${short}-${stamp}`;
}
