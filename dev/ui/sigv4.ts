import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
}

/** Where credentials come from: by default the AWS SDK's chain (env, profile, SSO, IMDS, ...). */
export type CredentialSource = () => Promise<AwsCredentials>;

export interface RequestToSign {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: Uint8Array;
}

/**
 * SigV4 for API Gateway (service `execute-api`) with the SDK's own signer and credential chain:
 * returns the headers to send (authorization, x-amz-date, x-amz-security-token, ...). The chain is
 * memoized by the SDK and refreshes credentials before they expire.
 */
export function executeApiSigner(region: string, credentials: CredentialSource = defaultProvider()) {
  const signer = new SignatureV4({ service: 'execute-api', region, credentials, sha256: Sha256 });
  return {
    credentials,
    async sign(request: RequestToSign): Promise<Record<string, string>> {
      const query: Record<string, string | string[]> = {};
      for (const [key, value] of request.url.searchParams) {
        const prior = query[key];
        query[key] = prior === undefined ? value : [...(Array.isArray(prior) ? prior : [prior]), value];
      }
      const signed = await signer.sign({
        method: request.method,
        protocol: request.url.protocol,
        hostname: request.url.hostname,
        ...(request.url.port ? { port: Number(request.url.port) } : {}),
        path: request.url.pathname,
        query,
        headers: { ...request.headers, host: request.url.host },
        ...(request.body ? { body: request.body } : {}),
      });
      return signed.headers;
    },
  };
}

/** The region of an API Gateway URL (`https://id.execute-api.eu-west-1.amazonaws.com/`), if it says. */
export function regionOfApiUrl(url: URL): string | undefined {
  return /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$/.exec(url.hostname)?.[1];
}
