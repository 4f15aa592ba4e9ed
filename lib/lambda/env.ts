import { z } from 'zod';
import { ConfigError } from '../core/errors.js';
import { zodIssuesText } from '../core/zod-issues.js';
import { LEASE_MS, MAX_ACTIVE_RUNS_LIMIT, MAX_CLAIM_ATTEMPTS, MAX_CLAIM_ATTEMPTS_LIMIT, VISIBILITY_MARGIN_S } from '../core/limits.js';

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
  LOGBOOK_LEASE_MS: z.coerce.number().int().positive().default(LEASE_MS),
  /** Claims without progress before a run parks as poisoned; below the queue's receive count (limits.ts). */
  LOGBOOK_MAX_ATTEMPTS: z.coerce.number().int().positive().max(MAX_CLAIM_ATTEMPTS_LIMIT).default(MAX_CLAIM_ATTEMPTS),
  LOGBOOK_RETENTION_COMPLETED_DAYS: z.coerce.number().int().positive().default(30),
  LOGBOOK_RETENTION_FAILED_DAYS: z.coerce.number().int().positive().default(90),
  AWS_REGION: z.string().default('us-east-1'),
  /**
   * Which JWT claim names the tenant when the HTTP API uses a JWT authorizer (default `sub`).
   * IAM-authorized calls use the caller's account id.
   */
  LOGBOOK_TENANT_CLAIM: z.string().min(1).default('sub'),
  /** Source of the outcome events put on the bus. */
  LOGBOOK_EVENT_SOURCE: z.string().min(1).default('logbook'),
  /** Kept free before the lease or the invocation ends (ms). */
  LOGBOOK_MARGIN_MS: z.coerce.number().int().positive().optional(),
  /** Grace past a model call's expected end, for the time-left check (ms). */
  LOGBOOK_MODEL_TIMEOUT_MS: z.coerce.number().int().positive().optional(),
  /** Visibility kept beyond the lease on a tick being processed (s): how soon a crashed step is retried. */
  LOGBOOK_VISIBILITY_MARGIN_S: z.coerce.number().int().nonnegative().default(VISIBILITY_MARGIN_S),
  /**
   * Unfinished runs one tenant may hold at once; a start beyond it is refused with 429 and
   * Retry-After (the API) or a retryable error (the trigger). 0: no limit. At most 1,000 (the
   * admission set lives in one item).
   */
  LOGBOOK_MAX_ACTIVE_RUNS: z.coerce.number().int().nonnegative().max(MAX_ACTIVE_RUNS_LIMIT).default(0),
  /** The Retry-After of a start refused by LOGBOOK_MAX_ACTIVE_RUNS (s). */
  LOGBOOK_ADMISSION_RETRY_AFTER_S: z.coerce.number().int().positive().max(3600).default(5),
  /**
   * Publish model calls' text as it streams (GET /runs/{id}/stream): `on` (default) or `off`.
   * Off, the models are called without streaming and the stream endpoint serves events only.
   */
  LOGBOOK_STREAMING: z.enum(['on', 'off']).default('on'),
  /** Base of the back-off between deliveries of a tick that did not finish (s); default the lease (limits.ts). */
  LOGBOOK_BACKOFF_BASE_S: z.coerce.number().int().nonnegative().optional(),
  /**
   * Logbook's own switch for the worker's OpenTelemetry spans (engine/tracing), below the standard
   * variables: `otlp` is on and `off` off unless OTEL_TRACES_EXPORTER says otherwise (or
   * OTEL_SDK_DISABLED=true turns everything off); unset, spans are on when
   * OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set
   * (engine/tracing/otel-env.ts has the whole rule). Off, the SDK is never loaded.
   */
  LOGBOOK_TRACING: z.enum(['off', 'otlp']).optional(),
  /** `true`: spans carry prompt and tool payloads, redacted as the log holds them. */
  LOGBOOK_TRACING_PAYLOADS: z.enum(['true', 'false']).default('false'),
});
export type LogbookEnv = z.infer<typeof envSchema>;

/** Parse the environment or throw a ConfigError naming every bad variable (no values echoed). */
export function loadEnv(source: Record<string, string | undefined> = process.env): LogbookEnv {
  const parsed = envSchema.safeParse(source);
  if (!parsed.success) {
    throw new ConfigError(`invalid environment: ${zodIssuesText(parsed.error, { root: '(env)' })}`);
  }
  return parsed.data;
}
