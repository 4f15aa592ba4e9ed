import { RemovalPolicy } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { RETENTION } from '../../lib/adapters/aws/table-definition.js';
import { configFromContext, DEFAULTS, withDefaults } from '../../lib/cdk/config.js';

const context = (values: Record<string, unknown>) => (key: string) => values[key];

describe('deployment config', () => {
  it('defaults keep data: retain, deletion protection, IAM auth, own bus', () => {
    expect(DEFAULTS).toMatchObject({
      removalPolicy: RemovalPolicy.RETAIN,
      deletionProtection: true,
      useDefaultEventBus: false,
      retention: RETENTION,
    });
    expect(DEFAULTS.jwt).toBeUndefined();
  });

  it('limits unfinished runs per tenant by default, and refuses a limit the admission item cannot hold', () => {
    expect(DEFAULTS.tenantLimits).toEqual({ maxActiveRuns: 100, retryAfterSeconds: 5 });
    expect(configFromContext(context({ maxActiveRunsPerTenant: '8' })).tenantLimits).toEqual({ maxActiveRuns: 8, retryAfterSeconds: 5 });
    expect(withDefaults({ tenantLimits: { maxActiveRuns: 0, retryAfterSeconds: 5 } }).tenantLimits.maxActiveRuns).toBe(0);
    expect(() => withDefaults({ tenantLimits: { maxActiveRuns: 1001, retryAfterSeconds: 5 } })).toThrow(/maxActiveRuns/);
    expect(() => withDefaults({ tenantLimits: { maxActiveRuns: 10, retryAfterSeconds: 0 } })).toThrow(/retryAfterSeconds/);
  });

  it('reads -c context values', () => {
    expect(
      configFromContext(
        context({
          removalPolicy: 'destroy',
          jwtIssuer: 'https://issuer.example.com/',
          jwtAudience: 'a, b',
          jwtTenantClaim: 'org',
          useDefaultEventBus: 'true',
          triggerSources: 'x.y,z',
          workerMaxConcurrency: '50',
          alarmEmail: 'ops@example.com',
        }),
      ),
    ).toEqual({
      removalPolicy: RemovalPolicy.DESTROY,
      deletionProtection: false,
      jwt: { issuer: 'https://issuer.example.com/', audience: ['a', 'b'], tenantClaim: 'org' },
      useDefaultEventBus: true,
      triggerSources: ['x.y', 'z'],
      workerMaxConcurrency: 50,
      alarmEmail: 'ops@example.com',
    });
    expect(configFromContext(context({}))).toEqual({});
  });

  it('rejects values that would fail at deploy time', () => {
    expect(() => configFromContext(context({ removalPolicy: 'snapshot' }))).toThrow(/retain or destroy/);
    expect(() => configFromContext(context({ jwtIssuer: 'https://x/' }))).toThrow(/go together/);
    expect(() => configFromContext(context({ workerMaxConcurrency: 'many' }))).toThrow(/number/);
    expect(() => withDefaults({ workerMaxConcurrency: 1 })).toThrow(/between 2 and 1000/);
  });
});
