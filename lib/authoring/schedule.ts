import { z } from 'zod';
import { ConfigError, ValidationError } from '../core/errors.js';
import { isTimeZone, parseCron, CRON_FORM, type Cron } from '../core/cron.js';
import type { PinnedSchedule } from './schedule-types.js';
import type { JsonValue } from '../core/json.js';
import { TENANT_PATTERN } from '../core/run-ref.js';
import { zodIssuesText } from '../core/zod-issues.js';
import { parseRunInput } from './run-input.js';
import type { InputSchema } from './types.js';

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
export type { PinnedSchedule, ScheduleSpec } from './schedule-types.js';
