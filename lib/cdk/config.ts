import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { RETENTION } from '../adapters/aws/table-definition.js';
import { MAX_ACTIVE_RUNS_LIMIT } from '../engine/limits.js';

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
  /** Use the account's default event bus instead of creating a `logbook` bus. */
  readonly useDefaultEventBus: boolean;
  /** Restrict the run-request rule to these event sources (default: any source on the bus). */
  readonly triggerSources?: readonly string[];
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
  useDefaultEventBus: false,
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
      audience: audience.split(',').map((a) => a.trim()).filter(Boolean),
      ...(tenantClaim ? { tenantClaim } : {}),
    };
  }
  if (str('useDefaultEventBus') !== undefined) out.useDefaultEventBus = str('useDefaultEventBus') === 'true';
  const sources = str('triggerSources');
  if (sources !== undefined) out.triggerSources = sources.split(',').map((s) => s.trim()).filter(Boolean);
  const concurrency = num('workerMaxConcurrency');
  if (concurrency !== undefined) out.workerMaxConcurrency = concurrency;
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
  const { maxActiveRuns, retryAfterSeconds } = config.tenantLimits;
  if (!Number.isInteger(maxActiveRuns) || maxActiveRuns < 0 || maxActiveRuns > MAX_ACTIVE_RUNS_LIMIT) {
    throw new Error(`tenantLimits.maxActiveRuns must be an integer from 0 (no limit) to ${MAX_ACTIVE_RUNS_LIMIT}`);
  }
  if (!Number.isInteger(retryAfterSeconds) || retryAfterSeconds < 1 || retryAfterSeconds > 3600) {
    throw new Error('tenantLimits.retryAfterSeconds must be an integer from 1 to 3600');
  }
  return config;
}
