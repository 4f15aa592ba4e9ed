import { RemovalPolicy } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { RETENTION } from '../../lib/adapters/aws/table-definition.js';
import { configFromContext, DEFAULTS, withDefaults } from '../../infra/config.js';

const context = (values: Record<string, unknown>) => (key: string) => values[key];

describe('deployment config', () => {
  it('defaults keep data: retain, deletion protection, IAM auth, own bus, scripted model', () => {
    expect(DEFAULTS).toMatchObject({
      removalPolicy: RemovalPolicy.RETAIN,
      deletionProtection: true,
      model: 'scripted',
      useDefaultEventBus: false,
      retention: RETENTION,
    });
    expect(DEFAULTS.jwt).toBeUndefined();
  });

  it('reads -c context values', () => {
    expect(
      configFromContext(
        context({
          removalPolicy: 'destroy',
          model: 'bedrock:anthropic.claude-3-haiku-20240307-v1:0',
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
      model: 'bedrock:anthropic.claude-3-haiku-20240307-v1:0',
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
