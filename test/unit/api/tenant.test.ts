import { describe, expect, it } from 'vitest';
import { callerFromAuthorizer } from '../../../lib/api/tenant.js';

describe('callerFromAuthorizer', () => {
  it('uses the account id of an IAM caller, and its ARN as the principal', () => {
    expect(
      callerFromAuthorizer({ iam: { accountId: '123456789012', userArn: 'arn:aws:sts::123456789012:assumed-role/ops/alice' } }),
    ).toEqual({ tenant: '123456789012', principal: 'arn:aws:sts::123456789012:assumed-role/ops/alice' });
  });

  it('uses the configured JWT claim (default sub)', () => {
    const jwt = { jwt: { claims: { sub: 'user-1', 'custom:tenant': 'acme' } } };
    expect(callerFromAuthorizer(jwt)).toEqual({ tenant: 'user-1', principal: 'jwt:user-1' });
    expect(callerFromAuthorizer(jwt, { claim: 'custom:tenant' })).toEqual({ tenant: 'acme', principal: 'jwt:user-1' });
  });

  it('refuses a missing claim, a missing authorizer and a tenant that is not a valid id', () => {
    expect(callerFromAuthorizer(undefined)).toBeUndefined();
    expect(callerFromAuthorizer({})).toBeUndefined();
    expect(callerFromAuthorizer({ jwt: { claims: { sub: 'u' } } }, { claim: 'tenant' })).toBeUndefined();
    expect(callerFromAuthorizer({ jwt: { claims: { sub: 'a/b#c' } } })).toBeUndefined();
  });

  it('accepts a Lambda authorizer that names the tenant', () => {
    expect(callerFromAuthorizer({ lambda: { tenant: 'acme', principal: 'svc' } })).toEqual({ tenant: 'acme', principal: 'svc' });
  });
});
