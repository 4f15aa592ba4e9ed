import { describe, expect, it } from 'vitest';
import { firingsBetween, isTimeZone, nextFiring, parseCron, previousFiring, scheduleRunId } from '../../../lib/core/cron.js';
import { RUN_ID_PATTERN } from '../../../lib/core/run-ref.js';

const at = (iso: string) => Date.parse(iso);
const iso = (t: number | undefined) => (t === undefined ? undefined : new Date(t).toISOString());

describe('parseCron', () => {
  it('reads every field form EventBridge Scheduler takes (but L, W, #)', () => {
    const c = parseCron('cron(0/15 9-17 ? JAN,MAR-APR MON-FRI *)');
    expect(c.minutes).toEqual([0, 15, 30, 45]);
    expect(c.hours).toEqual([9, 10, 11, 12, 13, 14, 15, 16, 17]);
    expect([...c.months]).toEqual([1, 3, 4]);
    expect([...c.daysOfWeek!]).toEqual([2, 3, 4, 5, 6]);
    expect(c.daysOfMonth).toBeUndefined();
    expect(parseCron('cron(*/20 0 1-10/3 * ? 2027)').minutes).toEqual([0, 20, 40]);
    expect([...parseCron('cron(*/20 0 1-10/3 * ? 2027)').daysOfMonth!]).toEqual([1, 4, 7, 10]);
  });
  it.each([
    ['0 9 * * *', /must be cron\(minutes/],
    ['cron(0 9 * * *)', /has 5 of its 6 fields/],
    ['cron(0 9 * * MON *)', /exactly one of day-of-month and day-of-week must be \?/],
    ['cron(0 9 ? * ? *)', /exactly one of day-of-month and day-of-week must be \?/],
    ['cron(60 9 * * ? *)', /minutes "60" has "60", not a value from 0 to 59/],
    ['cron(0 24 * * ? *)', /hours "24"/],
    ['cron(0 9 L * ? *)', /uses L, W or #/],
    ['cron(0 9 ? * FRI#2 *)', /uses L, W or #/],
    ['cron(0 9 * FOO ? *)', /month "FOO"/],
    ['cron(0 9 * * ? 1969)', /year "1969"/],
    ['cron(5-1 9 * * ? *)', /runs backwards/],
    ['cron(*/0 9 * * ? *)', /step "0"/],
    ['cron(? 9 * * ? *)', /exactly one|only day-of-month/],
  ])('refuses %s with a clear error', (text, message) => {
    expect(() => parseCron(text)).toThrow(message);
  });
  it('takes WED and SAT as day names, not W', () => {
    expect([...parseCron('cron(0 9 ? * WED,SAT *)').daysOfWeek!]).toEqual([4, 7]);
  });
});

describe('isTimeZone', () => {
  it('knows IANA zones and refuses other text', () => {
    expect(isTimeZone('Europe/Paris')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('America/New_York')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
    expect(isTimeZone('')).toBe(false);
  });
});

describe('nextFiring', () => {
  it('in UTC: every minute, and a weekday at 09:00', () => {
    const every = parseCron('cron(* * * * ? *)');
    expect(iso(nextFiring(every, 'UTC', at('2026-12-04T14:49:30Z')))).toBe('2026-12-04T14:50:00.000Z');
    expect(iso(nextFiring(every, 'UTC', at('2026-12-04T14:50:00Z')))).toBe('2026-12-04T14:51:00.000Z');
    const weekdays = parseCron('cron(0 9 ? * MON-FRI *)');
    // 2026-12-04 is a Friday: the next is Monday the 7th.
    expect(iso(nextFiring(weekdays, 'UTC', at('2026-12-04T09:00:00Z')))).toBe('2026-12-07T09:00:00.000Z');
  });
  it('in a time zone: 09:00 in Paris is 08:00Z in winter and 07:00Z in summer', () => {
    const c = parseCron('cron(0 9 * * ? *)');
    expect(iso(nextFiring(c, 'Europe/Paris', at('2026-12-04T10:00:00Z')))).toBe('2026-12-05T08:00:00.000Z');
    expect(iso(nextFiring(c, 'Europe/Paris', at('2026-07-01T10:00:00Z')))).toBe('2026-07-02T07:00:00.000Z');
    // Across the date line: 09:00 in Tokyo is 00:00Z the same day.
    expect(iso(nextFiring(c, 'Asia/Tokyo', at('2026-12-04T01:00:00Z')))).toBe('2026-12-05T00:00:00.000Z');
  });
  it('spring forward (New York, 2026-03-08): 02:30 does not exist, so that day has no firing', () => {
    const c = parseCron('cron(30 2 * * ? *)');
    const out = firingsBetween(c, 'America/New_York', at('2026-03-06T12:00:00Z'), at('2026-03-09T12:00:00Z'));
    expect(out.map(iso)).toEqual(['2026-03-07T07:30:00.000Z', '2026-03-09T06:30:00.000Z']);
  });
  it('fall back (New York, 2026-11-01): 01:30 happens twice and fires once, at its first occurrence', () => {
    const c = parseCron('cron(30 1 * * ? *)');
    const out = firingsBetween(c, 'America/New_York', at('2026-10-31T12:00:00Z'), at('2026-11-02T12:00:00Z'));
    expect(out.map(iso)).toEqual(['2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z']);
  });
  it('every 30 minutes across fall back: the repeated hour fires once, the hour count of the day is 24 wall hours', () => {
    const c = parseCron('cron(0/30 * * * ? *)');
    const out = firingsBetween(c, 'America/New_York', at('2026-11-01T04:00:00Z'), at('2026-11-01T08:00:00Z'));
    // 00:30 EDT, 01:00 EDT, 01:30 EDT, then 02:00 EST (07:00Z), 02:30 EST, 03:00 EST.
    expect(out.map(iso)).toEqual([
      '2026-11-01T04:30:00.000Z',
      '2026-11-01T05:00:00.000Z',
      '2026-11-01T05:30:00.000Z',
      '2026-11-01T07:00:00.000Z',
      '2026-11-01T07:30:00.000Z',
      '2026-11-01T08:00:00.000Z',
    ]);
  });
  it('every 30 minutes across spring forward: 02:00 and 02:30 are skipped', () => {
    const c = parseCron('cron(0/30 * * * ? *)');
    const out = firingsBetween(c, 'America/New_York', at('2026-03-08T06:00:00Z'), at('2026-03-08T08:00:00Z'));
    expect(out.map(iso)).toEqual(['2026-03-08T06:30:00.000Z', '2026-03-08T07:00:00.000Z', '2026-03-08T07:30:00.000Z', '2026-03-08T08:00:00.000Z']);
  });
  it('a date that never comes (30 February) and a year that has passed fire never', () => {
    expect(nextFiring(parseCron('cron(0 0 30 2 ? *)'), 'UTC', at('2026-01-01T00:00:00Z'))).toBeUndefined();
    expect(nextFiring(parseCron('cron(0 0 * * ? 2025)'), 'UTC', at('2026-01-01T00:00:00Z'))).toBeUndefined();
    expect(iso(nextFiring(parseCron('cron(0 0 29 2 ? *)'), 'UTC', at('2026-01-01T00:00:00Z')))).toBe('2028-02-29T00:00:00.000Z');
  });
});

describe('previousFiring', () => {
  it('is the inverse of nextFiring, across a DST change', () => {
    const c = parseCron('cron(0/30 * * * ? *)');
    const zone = 'America/New_York';
    let t = at('2026-11-01T08:00:00Z');
    const back: string[] = [];
    for (let i = 0; i < 5; i++) {
      t = previousFiring(c, zone, t)!;
      back.push(iso(t)!);
      expect(nextFiring(c, zone, previousFiring(c, zone, t)!)).toBe(t);
    }
    expect(back).toEqual([
      '2026-11-01T07:30:00.000Z',
      '2026-11-01T07:00:00.000Z',
      '2026-11-01T05:30:00.000Z',
      '2026-11-01T05:00:00.000Z',
      '2026-11-01T04:30:00.000Z',
    ]);
  });
});

describe('scheduleRunId', () => {
  it('is a pure function of the name and the minute of the firing', () => {
    expect(scheduleRunId('nightly-report', at('2026-12-04T09:00:00Z'))).toBe('sched-nightly-report-20261204T0900Z');
    expect(scheduleRunId('nightly-report', at('2026-12-04T09:00:59.999Z'))).toBe('sched-nightly-report-20261204T0900Z');
    expect(scheduleRunId('nightly-report', at('2026-12-04T09:01:00Z'))).not.toBe(scheduleRunId('nightly-report', at('2026-12-04T09:00:00Z')));
    expect(scheduleRunId('other', at('2026-12-04T09:00:00Z'))).not.toBe(scheduleRunId('nightly-report', at('2026-12-04T09:00:00Z')));
  });
  it('fits a run id for the longest name, and two long names with one prefix stay apart', () => {
    const a = 'a'.repeat(60) + 'x';
    const b = 'a'.repeat(60) + 'y';
    const idA = scheduleRunId(a, 0);
    expect(idA).toMatch(RUN_ID_PATTERN);
    expect(scheduleRunId('z'.repeat(64), 0)).toMatch(RUN_ID_PATTERN);
    expect(idA).not.toBe(scheduleRunId(b, 0));
  });
});
