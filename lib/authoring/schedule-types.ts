import type { Cron } from '../core/cron.js';
import type { JsonValue } from '../core/json.js';

/**
 * A workflow's or agent's schedule (`schedule` of defineWorkflow / defineAgent): a run starts at
 * each firing of `cron` in `timezone`, with `input`, under `tenant`.
 */
export interface ScheduleSpec {
  /** EventBridge Scheduler's form: `cron(minutes hours day-of-month month day-of-week year)` (lib/core/cron.ts). */
  cron: string;
  /** An IANA time zone the cron is read in (default `UTC`). */
  timezone?: string;
  /** The input of every scheduled run, checked against the input schema when the definition is made. */
  input: JsonValue;
  /**
   * When a firing comes while the run of an earlier firing is unfinished:
   * - `skip` (default): the firing starts nothing (logged, counted);
   * - `queue`: it starts its run all the same, admitted like any start: at the tenant's limit of
   *   unfinished runs, the delivery fails and is retried (then goes to the dead-letter queue).
   */
  overlap?: 'skip' | 'queue';
  /** The tenant the runs belong to (default `default`; the local stack uses its local tenant). */
  tenant?: string;
}

/** A schedule as checked at define time. */
export interface PinnedSchedule {
  readonly cron: string;
  readonly timezone: string;
  readonly input: JsonValue;
  readonly overlap: 'skip' | 'queue';
  readonly tenant: string;
  readonly parsed: Cron;
}
