import { z } from 'zod';
import { ValidationError } from '../../core/errors.js';
import { zodIssues } from '../../core/zod-issues.js';
import { RUN_ID_PATTERN, TENANT_PATTERN } from '../../core/run-ref.js';
import type { LoadHint, Tick } from '../../ports/step-queue.js';

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

/** The SQS message attribute that carries a tick's LoadHint (the body stays {tenant, runId}). */
export const HINT_ATTRIBUTE = 'logbookHint';

const hintSchema = z.object({
  snapshot: z
    .object({
      seq: z.number().int().nonnegative(),
      key: z.string().min(1).max(1024),
      sha256: z.string().regex(/^[0-9a-f]{64}$/),
      foldVersion: z.number().int(),
    })
    .nullable(),
});

/**
 * A hint as sent beside a tick, or undefined when absent or not one: a hint only makes a cold
 * step faster, so one that does not parse is ignored (the step reads after its claim).
 */
export function parseTickHint(text: string | undefined): LoadHint | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed = hintSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
