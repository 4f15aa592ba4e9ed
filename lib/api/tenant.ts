import { TENANT_PATTERN } from '../core/run-ref.js';

/** The parts of an API Gateway HTTP API (v2) request context that name the caller. */
export interface AuthorizerContext {
  iam?: { accountId?: string; userArn?: string; principalOrgId?: string | null };
  jwt?: { claims?: Record<string, unknown> };
  lambda?: Record<string, unknown>;
}

export interface Caller {
  tenant: string;
  /** Who acted, for the log (`resolvedBy`, `requestedBy`): never a secret. */
  principal: string;
}

export interface TenantOptions {
  /** JWT claim naming the tenant (default `sub`). */
  claim?: string;
}

/** An AWS account id: the only form an IAM tenant (and an EventBridge-started run's tenant) takes. */
const ACCOUNT_ID = /^\d{12}$/;

/** Namespaces of the tenants that are not AWS accounts: the prefix says which authorizer vouched. */
export const TENANT_NAMESPACE = { jwt: 'jwt:', lambda: 'lambda:' } as const;

/**
 * The tenant comes from the authorizer, never from the request body, in one namespace per kind
 * of authorizer, so that two authorizers can never name the same tenant:
 * - IAM (SigV4): the caller's AWS account id, as is (12 digits, no prefix); the principal is the
 *   caller's ARN. Runs started by EventBridge (the trigger) belong to the account the event came
 *   from, the same namespace: an account sees its own event-started runs through the API.
 * - JWT authorizer: `jwt:` + the configured claim (default `sub`); the principal is `jwt:` + sub.
 *   Without the prefix a user whose claim is `123456789012` would read that account's runs.
 * - Lambda authorizer: `lambda:` + its `tenant` context field.
 * Undefined means unauthenticated (the handler answers 401). A value that is not a valid tenant
 * id is refused rather than rewritten, so two callers can never collide on a sanitized name.
 */
export function callerFromAuthorizer(authorizer: AuthorizerContext | undefined, options: TenantOptions = {}): Caller | undefined {
  if (!authorizer) return undefined;
  const iam = authorizer.iam;
  if (iam?.accountId) {
    if (!ACCOUNT_ID.test(iam.accountId)) return undefined;
    return valid(iam.accountId, iam.userArn ?? `account:${iam.accountId}`);
  }
  const claims = authorizer.jwt?.claims;
  if (claims) {
    const claim = options.claim ?? 'sub';
    const tenant = claims[claim];
    const sub = claims.sub;
    if (typeof tenant !== 'string' && typeof tenant !== 'number') return undefined;
    return valid(`${TENANT_NAMESPACE.jwt}${String(tenant)}`, typeof sub === 'string' ? `jwt:${sub}` : `jwt:${String(tenant)}`);
  }
  const lambdaTenant = authorizer.lambda?.tenant;
  if (typeof lambdaTenant === 'string') {
    const principal = authorizer.lambda?.principal;
    return valid(`${TENANT_NAMESPACE.lambda}${lambdaTenant}`, typeof principal === 'string' ? principal : `lambda:${lambdaTenant}`);
  }
  return undefined;
}

function valid(tenant: string, principal: string): Caller | undefined {
  return TENANT_PATTERN.test(tenant) ? { tenant, principal } : undefined;
}

/** The single tenant of the local stack. */
export const LOCAL_CALLER: Caller = { tenant: 'local', principal: 'local-user' };
