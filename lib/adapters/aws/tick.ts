import { z } from 'zod';
import { ValidationError } from '../../core/errors.js';
import { zodIssues } from '../../core/zod-issues.js';
import { RUN_ID_PATTERN, TENANT_PATTERN } from '../../ports/run-ref.js';
import type { Tick } from '../../ports/step-queue.js';

/** A wake-up body: which run to step, nothing else (ticks carry no commands). */
export const tickSchema = z
  .object({
    tenant: z.string().regex(TENANT_PATTERN),
    runId: z.string().regex(RUN_ID_PATTERN),
  })
  .strict();

/** Parse an SQS message body into a Tick; anything else is a ValidationError. */
export function parseTick(body: string): Tick {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new ValidationError('tick body is not JSON');
  }
  const parsed = tickSchema.safeParse(value);
  if (!parsed.success) {
    throw new ValidationError('tick body is not {tenant, runId}', zodIssues(parsed.error));
  }
  return parsed.data;
}
