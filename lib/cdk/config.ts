import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { RETENTION } from '../adapters/aws/table-definition.js';
import { MAX_ACTIVE_RUNS_LIMIT } from '../core/limits.js';

/** What a deployment may choose. Every field has a safe default (see DEFAULTS). */
export interface LogbookConfig {
  /** RETAIN (default) keeps the table, bucket and key when the stack is deleted. */
  readonly removalPolicy: RemovalPolicy;
  /** DynamoDB deletion protection; on by default. */
  readonly deletionProtection: boolean;
  /**
   * When set, the HTTP API uses this JWT authorizer instead of IAM (SigV4), and the api handler
   * takes the tenant from `tenantClaim` (default `sub`). Under IAM the tenant is the caller's account.
   */
  readonly jwt?: { readonly issuer: string; readonly audience: readonly string[]; readonly tenantClaim?: string };
  /**
   * Also serve GET /runs/{runId}/stream as true Server-Sent Events from a Lambda function URL with
   * response streaming (AWS_IAM auth; the tenant is the caller's account, as on the HTTP API).
   * Off by default: the HTTP API's long poll of the same endpoint needs nothing extra. Grant
   * callers with `logbook.stream?.url.grantInvokeUrl(role)` (docs/guides/streaming.md).
   */
  readonly streamUrl: boolean;
  /** Use the account's default event bus instead of creating a `logbook` bus. */
  readonly useDefaultEventBus: boolean;
  /** Restrict the run-request rule to these event sources (default: any source on the bus). */
  readonly triggerSources?: readonly string[];
  /**
   * Concurrency reserved for the trigger function, which is also its cap (1..1000, default 10): a
   * flood of run requests starts at most this many runs at once and cannot take the account's
   * concurrency from the workers and the API. Events beyond it wait in Lambda's asynchronous
   * queue (throttled invocations are retried) for up to `triggerMaxEventAge`, then go to the
   * trigger's failure queue. It is taken from the account's unreserved pool, which must keep 100.
   */
  readonly triggerReservedConcurrency: number;
  /**
   * How long an Agent Run Requested event may wait in Lambda's asynchronous queue (throttles,
   * failed attempts) before it goes to the failure queue. 1 minute..6 hours; default 1 hour.
   */
  readonly triggerMaxEventAge: Duration;
  /** Upper bound on concurrent workers (SQS event source maxConcurrency, 2..1000). */
  readonly workerMaxConcurrency: number;
  readonly workerMemoryMb: number;
  readonly apiThrottle: { readonly rateLimit: number; readonly burstLimit: number };
  readonly sweepEvery: Duration;
  readonly logRetention: RetentionDays;
  readonly retention: {
    readonly completedDays: number;
    readonly failedOrParkedDays: number;
    readonly eventsDays: number;
  };
  /**
   * Longest run a tenant may configure (its deadline ceiling). Payloads expire after
   * eventsDays + maxRunDays, so no blob expires before an event that references it.
   */
  readonly maxRunDays: number;
  /**
   * Per-tenant admission. `maxActiveRuns`: unfinished runs (running, waiting, parked) one tenant
   * may hold at once (1..1000, 0 = no limit); a start beyond it gets 429 with Retry-After
   * (`retryAfterSeconds`) from the API, and a retryable error from the trigger. It is also what
   * bounds another tenant's wait behind a burst: the step queue holds about one tick per admitted
   * run, so a run waits behind at most the other tenants' admitted runs, shared among the
   * workers (docs/guides/flood-and-tenant-limits.md).
   */
  readonly tenantLimits: { readonly maxActiveRuns: number; readonly retryAfterSeconds: number };
  readonly alarmEmail?: string;
  readonly alarms: {
    /** Sum over 5 minutes. */
    readonly ticksWithoutProgress: number;
    /** Maximum over 5 minutes: ticks of the busiest run. */
    readonly invocationsPerRun: number;
    /** Sum over 5 minutes. */
    readonly runsParked: number;
  };
}

export const DEFAULTS: LogbookConfig = {
  removalPolicy: RemovalPolicy.RETAIN,
  deletionProtection: true,
  streamUrl: false,
  useDefaultEventBus: false,
  triggerReservedConcurrency: 10,
  triggerMaxEventAge: Duration.hours(1),
  workerMaxConcurrency: 20,
  workerMemoryMb: 512,
  apiThrottle: { rateLimit: 50, burstLimit: 100 },
  sweepEvery: Duration.minutes(1),
  logRetention: RetentionDays.ONE_MONTH,
  retention: { ...RETENTION },
  maxRunDays: 30,
  alarms: { ticksWithoutProgress: 50, invocationsPerRun: 500, runsParked: 1 },
  tenantLimits: { maxActiveRuns: 100, retryAfterSeconds: 5 },
};

/** Reads `cdk -c key=value` context into a config; unknown keys are ignored. */
export function configFromContext(get: (key: string) => unknown): Partial<LogbookConfig> {
  const str = (key: string): string | undefined => {
    const v = get(key);
    return v === undefined || v === null || v === '' ? undefined : String(v);
  };
  const num = (key: string): number | undefined => {
    const v = str(key);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isFinite(n)) throw new Error(`context ${key} must be a number, got ${v}`);
    return n;
  };
  const out: { -readonly [K in keyof LogbookConfig]?: LogbookConfig[K] } = {};
  const removal = str('removalPolicy');
  if (removal !== undefined) {
    if (removal !== 'retain' && removal !== 'destroy') throw new Error('context removalPolicy must be retain or destroy');
    out.removalPolicy = removal === 'destroy' ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN;
    // A stack you intend to destroy must not be blocked by deletion protection.
    out.deletionProtection = removal !== 'destroy';
  }
  const issuer = str('jwtIssuer');
  const audience = str('jwtAudience');
  if (issuer !== undefined || audience !== undefined) {
    if (issuer === undefined || audience === undefined) throw new Error('jwtIssuer and jwtAudience go together');
    const tenantClaim = str('jwtTenantClaim');
    out.jwt = {
      issuer,
      audience: audience
        .split(',')
        .map((a) => a.trim())
        .filter(Boolean),
      ...(tenantClaim ? { tenantClaim } : {}),
    };
  }
  if (str('useDefaultEventBus') !== undefined) out.useDefaultEventBus = str('useDefaultEventBus') === 'true';
  if (str('streamUrl') !== undefined) out.streamUrl = str('streamUrl') === 'true';
  const sources = str('triggerSources');
  if (sources !== undefined)
    out.triggerSources = sources
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const concurrency = num('workerMaxConcurrency');
  if (concurrency !== undefined) out.workerMaxConcurrency = concurrency;
  const triggerConcurrency = num('triggerReservedConcurrency');
  if (triggerConcurrency !== undefined) out.triggerReservedConcurrency = triggerConcurrency;
  const memory = num('workerMemoryMb');
  if (memory !== undefined) out.workerMemoryMb = memory;
  const alarmEmail = str('alarmEmail');
  if (alarmEmail !== undefined) out.alarmEmail = alarmEmail;
  const maxActiveRuns = num('maxActiveRunsPerTenant');
  if (maxActiveRuns !== undefined) out.tenantLimits = { ...DEFAULTS.tenantLimits, maxActiveRuns };
  const maxRunDays = num('maxRunDays');
  if (maxRunDays !== undefined) out.maxRunDays = maxRunDays;
  return out;
}

export function withDefaults(partial: Partial<LogbookConfig> = {}): LogbookConfig {
  const config = { ...DEFAULTS, ...partial };
  if (config.workerMaxConcurrency < 2 || config.workerMaxConcurrency > 1000) {
    // The SQS event source rejects other values at deploy time; fail at synth instead.
    throw new Error('workerMaxConcurrency must be between 2 and 1000');
  }
  const reserved = config.triggerReservedConcurrency;
  // 0 would throttle every run request: refuse it rather than lose events slowly.
  if (!Number.isInteger(reserved) || reserved < 1 || reserved > 1000) throw new Error('triggerReservedConcurrency must be an integer between 1 and 1000');
  const age = config.triggerMaxEventAge.toSeconds();
  if (age < 60 || age > 6 * 3600) throw new Error('triggerMaxEventAge must be between 1 minute and 6 hours');
  const { maxActiveRuns, retryAfterSeconds } = config.tenantLimits;
  if (!Number.isInteger(maxActiveRuns) || maxActiveRuns < 0 || maxActiveRuns > MAX_ACTIVE_RUNS_LIMIT) {
    throw new Error(`tenantLimits.maxActiveRuns must be an integer from 0 (no limit) to ${MAX_ACTIVE_RUNS_LIMIT}`);
  }
  if (!Number.isInteger(retryAfterSeconds) || retryAfterSeconds < 1 || retryAfterSeconds > 3600) {
    throw new Error('tenantLimits.retryAfterSeconds must be an integer from 1 to 3600');
  }
  return config;
}
