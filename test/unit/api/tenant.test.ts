import { describe, expect, it } from 'vitest';
import { callerFromAuthorizer } from '../../../lib/api/tenant.js';
import { TENANT_PATTERN } from '../../../lib/core/run-ref.js';

describe('callerFromAuthorizer', () => {
  it('uses the account id of an IAM caller as is (the namespace EventBridge-started runs share), and its ARN as the principal', () => {
    expect(
      callerFromAuthorizer({ iam: { accountId: '123456789012', userArn: 'arn:aws:sts::123456789012:assumed-role/ops/alice' } }),
    ).toEqual({ tenant: '123456789012', principal: 'arn:aws:sts::123456789012:assumed-role/ops/alice' });
  });

  it('puts a JWT caller in the jwt: namespace, by the configured claim (default sub)', () => {
    const jwt = { jwt: { claims: { sub: 'user-1', 'custom:tenant': 'acme' } } };
    expect(callerFromAuthorizer(jwt)).toEqual({ tenant: 'jwt:user-1', principal: 'jwt:user-1' });
    expect(callerFromAuthorizer(jwt, { claim: 'custom:tenant' })).toEqual({ tenant: 'jwt:acme', principal: 'jwt:user-1' });
    expect(callerFromAuthorizer({ jwt: { claims: { sub: 'u', org: 42 } } }, { claim: 'org' })).toEqual({ tenant: 'jwt:42', principal: 'jwt:u' });
  });

  it('never gives an IAM account and a JWT or Lambda-authorizer caller the same tenant, whatever the claim says', () => {
    const account = '123456789012';
    const iam = callerFromAuthorizer({ iam: { accountId: account } })?.tenant;
    expect(iam).toBe(account);
    const impostors = [
      callerFromAuthorizer({ jwt: { claims: { sub: account } } }),
      callerFromAuthorizer({ jwt: { claims: { sub: 'x', tenant: Number(account) } } }, { claim: 'tenant' }),
      callerFromAuthorizer({ lambda: { tenant: account } }),
      // A claim that spells out another namespace stays inside its own.
      callerFromAuthorizer({ jwt: { claims: { sub: `lambda:${account}` } } }),
    ];
    for (const caller of impostors) {
      expect(caller).toBeDefined();
      expect(caller?.tenant).not.toBe(iam);
    }
    expect(callerFromAuthorizer({ lambda: { tenant: 'acme' } })?.tenant).not.toBe(callerFromAuthorizer({ jwt: { claims: { sub: 'acme' } } })?.tenant);
  });

  it('refuses a missing claim, a missing authorizer, an IAM account that is not 12 digits, and a tenant that is not a valid id', () => {
    expect(callerFromAuthorizer(undefined)).toBeUndefined();
    expect(callerFromAuthorizer({})).toBeUndefined();
    expect(callerFromAuthorizer({ jwt: { claims: { sub: 'u' } } }, { claim: 'tenant' })).toBeUndefined();
    expect(callerFromAuthorizer({ jwt: { claims: { sub: 'a/b#c' } } })).toBeUndefined();
    expect(callerFromAuthorizer({ iam: { accountId: 'jwt:acme' } })).toBeUndefined();
    // The prefix counts against the tenant's length: a claim that fits alone but not with it is refused, not cut.
    const long = 'a'.repeat(128);
    expect(TENANT_PATTERN.test(long)).toBe(true);
    expect(callerFromAuthorizer({ jwt: { claims: { sub: long } } })).toBeUndefined();
  });

  it('puts a Lambda authorizer’s tenant in the lambda: namespace', () => {
    expect(callerFromAuthorizer({ lambda: { tenant: 'acme', principal: 'svc' } })).toEqual({ tenant: 'lambda:acme', principal: 'svc' });
  });
});
