import { z } from 'zod';

/**
 * Environment of every handler, validated once per cold start. The CDK constructs set these
 * through their bind*() helpers; the local stack sets them for the child worker process.
 */
export const envSchema = z.object({
  LOGBOOK_TABLE: z.string().min(1),
  LOGBOOK_BUCKET: z.string().min(1),
  LOGBOOK_QUEUE_URL: z.string().url(),
  /** EventBridge bus for outcome events; empty disables publishing. */
  LOGBOOK_EVENT_BUS: z.string().default(''),
  /** Which model client serves runs: scripted (default), bedrock:<id>, openai:<model>. */
  LOGBOOK_MODEL: z.string().default('scripted'),
  /** Local stack only: endpoints of the emulators. Unset on AWS. */
  LOGBOOK_DYNAMODB_ENDPOINT: z.string().url().optional(),
  LOGBOOK_S3_ENDPOINT: z.string().url().optional(),
  LOGBOOK_SQS_ENDPOINT: z.string().url().optional(),
  LOGBOOK_EVENTS_ENDPOINT: z.string().url().optional(),
  LOGBOOK_LEASE_MS: z.coerce.number().int().positive().default(60_000),
  LOGBOOK_MAX_ATTEMPTS: z.coerce.number().int().positive().default(5),
  LOGBOOK_RETENTION_COMPLETED_DAYS: z.coerce.number().int().positive().default(30),
  LOGBOOK_RETENTION_FAILED_DAYS: z.coerce.number().int().positive().default(90),
  AWS_REGION: z.string().default('us-east-1'),
});
export type LogbookEnv = z.infer<typeof envSchema>;
