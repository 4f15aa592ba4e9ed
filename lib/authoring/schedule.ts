import { z } from 'zod';
import { ConfigError, ValidationError } from '../core/errors.js';
import { isTimeZone, parseCron, CRON_FORM, type Cron } from '../core/cron.js';
import type { JsonValue } from '../core/json.js';
import { TENANT_PATTERN } from '../core/run-ref.js';
import { zodIssuesText } from '../core/zod-issues.js';
import { parseRunInput } from './run-input.js';
import type { InputSchema } from './types.js';

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

const scheduleSchema = z
  .object({
    cron: z.string(),
    timezone: z.string().optional(),
    input: z.json(),
    overlap: z.enum(['skip', 'queue']).optional(),
    tenant: z.string().regex(TENANT_PATTERN).optional(),
  })
  .strict();

/** The checked schedule of definition `name`, or a ConfigError that says what is wrong. */
export function checkSchedule(kind: 'agent' | 'workflow', name: string, version: string, spec: unknown, input: InputSchema | undefined): PinnedSchedule {
  const where = `${kind} ${name}: schedule`;
  const parsed = scheduleSchema.safeParse(spec);
  if (!parsed.success) throw new ConfigError(`${where}: ${zodIssuesText(parsed.error)}`);
  const s = parsed.data;
  let cron: Cron;
  try {
    cron = parseCron(s.cron);
  } catch (error) {
    throw new ConfigError(`${where}: ${(error as Error).message}`);
  }
  const timezone = s.timezone ?? 'UTC';
  if (!isTimeZone(timezone)) throw new ConfigError(`${where}: timezone ${JSON.stringify(timezone)} is not an IANA time zone (e.g. Europe/Paris)`);
  try {
    parseRunInput({ name, version, input }, s.input, 'schedule.input');
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    throw new ConfigError(`${where}: ${error.message}: ${error.issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
  }
  return { cron: cron.text, timezone, input: s.input as JsonValue, overlap: s.overlap ?? 'skip', tenant: s.tenant ?? 'default', parsed: cron };
}

export { CRON_FORM };
