import { DEFAULT_API, LogbookClient, type RequestSigner } from './api-client.js';
import type { FlagSpecs } from './args.js';
import { UsageError } from './output.js';

/**
 * How a command reaches a Logbook API: the local stack by default, or a deployed stack's API
 * (its ApiUrl output), signed with the caller's AWS credentials (SigV4, as `logbook inspect`
 * signs) or with a bearer token for a JWT authorizer (LOGBOOK_TOKEN, or --header).
 */
export const API_FLAGS = {
  api: { type: 'string', value: 'URL' },
  header: { type: 'string', value: "'NAME: VALUE'", multiple: true },
  sigv4: { type: 'boolean' },
  region: { type: 'string', value: 'R' },
} as const satisfies FlagSpecs;

export interface ApiAccess {
  api?: string | undefined;
  header?: string[] | undefined;
  sigv4?: boolean | undefined;
  region?: string | undefined;
}

export interface ApiAccessDeps {
  env?: Record<string, string | undefined>;
  /** The signer (tests); default: SigV4 with the AWS SDK's credential chain. */
  signer?: (region: string) => Promise<RequestSigner>;
}

/** `--header 'Name: value'` lines as headers; a malformed one is refused without echoing it (it may hold a token). */
export function parseHeaders(list: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const h of list) {
    const colon = h.indexOf(':');
    const name = colon > 0 ? h.slice(0, colon).trim() : '';
    if (!/^[A-Za-z0-9-]+$/.test(name)) throw new UsageError('--header must look like "Name: value"');
    headers[name.toLowerCase()] = h.slice(colon + 1).trim();
  }
  return headers;
}

function apiUrl(value: string): URL {
  try {
    return new URL(value);
  } catch {
    throw new UsageError(`--api must be a URL, got "${value}"`);
  }
}

async function sigv4Signer(region: string): Promise<RequestSigner> {
  // Loaded only when signing: the credential chain is a large import the local case never needs.
  const { executeApiSigner } = await import('../ui/sigv4.js');
  const signer = executeApiSigner(region);
  return (request) => signer.sign(request);
}

/** The client for the flags given: local, a token, or SigV4 for a deployed API Gateway URL. */
export async function apiClient(access: ApiAccess, deps: ApiAccessDeps = {}): Promise<LogbookClient> {
  const env = deps.env ?? process.env;
  const base = access.api ?? DEFAULT_API;
  const url = apiUrl(base);
  const headers = parseHeaders(access.header ?? []);
  if (!headers.authorization && env.LOGBOOK_TOKEN) headers.authorization = `Bearer ${env.LOGBOOK_TOKEN}`;
  const region = access.region ?? /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$/.exec(url.hostname)?.[1];
  const deployed = /\.execute-api\.[a-z0-9-]+\.amazonaws\.com(?:\.cn)?$/.test(url.hostname);
  const sign = access.sigv4 === true || (deployed && !headers.authorization);
  if (!sign) return new LogbookClient(base, headers);
  const signingRegion = region ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  if (!signingRegion) throw new UsageError('cannot tell the region from --api: pass --region R (or set AWS_REGION)');
  return new LogbookClient(base, headers, await (deps.signer ?? sigv4Signer)(signingRegion));
}
