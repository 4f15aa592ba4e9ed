import type { JsonValue } from '../../../lib/core/json.js';

/**
 * Realistic secrets as they reach a run (tool outputs, arguments, inputs), in the shapes issue 26
 * named: `secret` is the part that must never be stored. Values are format-valid fakes.
 */
export interface CorpusCase {
  name: string;
  payload: JsonValue;
  secret: string;
}

const PGP = [
  '-----BEGIN PGP PRIVATE KEY BLOCK-----',
  '',
  'lQOYBGX3Yc0BCAC7q9yU4aW1rJ5mHn2Y0t3L8kZ9c2B0pVZcQ6n1G7pGq4n2y2sK',
  'xg1U8pQ3o8Hk0v3Jm1L2w9t8Y5c4r3e2w1q0p9o8i7u6y5t4r3e2w1q0p9o8i7u6',
  '=Zx9K',
  '-----END PGP PRIVATE KEY BLOCK-----',
].join('\n');

const RSA = ['-----BEGIN RSA PRIVATE KEY-----', 'MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun', '-----END RSA PRIVATE KEY-----'].join('\n');

export const AWS_ID = 'AKIAIOSFODNN7EXAMPLE';
export const AWS_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';

export const CORPUS: readonly CorpusCase[] = [
  // Under a key whose name says it is a secret, whatever the value looks like.
  { name: 'key password', payload: { user: 'ops', password: 'hunter2!Winter' }, secret: 'hunter2!Winter' },
  { name: 'key secret', payload: { webhook: { secret: 'q9f8Zx1opaque' } }, secret: 'q9f8Zx1opaque' },
  { name: 'key token', payload: { session: { token: 'opaque-7f3a9c21e0' } }, secret: 'opaque-7f3a9c21e0' },
  { name: 'key apiKey', payload: { service: 'geo', apiKey: 'c0ffee1234deadbeef' }, secret: 'c0ffee1234deadbeef' },
  { name: 'key aws_secret_access_key', payload: { profile: 'prod', aws_secret_access_key: AWS_SECRET }, secret: AWS_SECRET },
  // Formats recognisable on their own, in free text.
  { name: 'stripe sk_live_', payload: 'STRIPE_KEY=sk_live_51H8xYzAbCdEfGhIjKlMnOpQr', secret: 'sk_live_51H8xYzAbCdEfGhIjKlMnOpQr' },
  { name: 'stripe rk_live_', payload: { note: 'restricted rk_live_51H8xYzRestrictedKey0123 for refunds' }, secret: 'rk_live_51H8xYzRestrictedKey0123' },
  { name: 'google AIza', payload: 'maps key AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY in config', secret: 'AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY' },
  { name: 'credentials in a URL', payload: { dsnNote: 'connect to postgres://app_user:s3cr3t-P4ss@db.internal:5432/orders' }, secret: 's3cr3t-P4ss' },
  {
    name: 'github_pat_',
    payload: 'export GH=github_pat_11ABCDEFG0123456789abc_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU',
    secret: 'github_pat_11ABCDEFG0123456789abc_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU',
  },
  { name: 'slack webhook URL', payload: { url: 'https://hooks.slack.com/services/T024BE7LD/B08ABCDEF12/8kPq2vXyZ3tR5uW7yA9bC1dE' }, secret: 'T024BE7LD/B08ABCDEF12/8kPq2vXyZ3tR5uW7yA9bC1dE' },
  { name: 'PGP private key block', payload: { file: 'key.asc', content: PGP }, secret: 'lQOYBGX3Yc0BCAC7q9yU4aW1rJ5mHn2Y0t3L8kZ9c2B0pVZcQ6n1G7pGq4n2y2sK' },
  { name: 'Basic auth', payload: 'curl -u sent as Basic YWRtaW46Y29ycmVjdC1ob3JzZQ== to the proxy', secret: 'YWRtaW46Y29ycmVjdC1ob3JzZQ==' },
  { name: 'sendgrid SG.', payload: { out: 'SENDGRID=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' }, secret: 'ngeVfQFYQlKU0ufo8x5d1A.TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr' },
  {
    name: 'azure AccountKey=',
    payload: 'DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;EndpointSuffix=core.windows.net',
    secret: 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==',
  },
  { name: 'bare AWS secret beside its key id (text)', payload: `${AWS_ID},${AWS_SECRET}`, secret: AWS_SECRET },
  { name: 'bare AWS secret beside its key id (siblings)', payload: { id: AWS_ID, key: AWS_SECRET }, secret: AWS_SECRET },
  // Caught before issue 26 too.
  { name: 'aws access key id', payload: `key ${AWS_ID}`, secret: AWS_ID },
  { name: 'bearer token', payload: { log: 'GET /v1 with Bearer abcdefghijklmnopqrstuvwxyz012345' }, secret: 'abcdefghijklmnopqrstuvwxyz012345' },
  { name: 'RSA private key', payload: RSA, secret: 'MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun' },
  { name: 'openai sk-proj-', payload: 'OPENAI_API_KEY is sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t', secret: 'sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t' },
  { name: 'github ghp_', payload: ['push with ghp_16C7e42F292c6912E7710c838347Ae178B4a'], secret: 'ghp_16C7e42F292c6912E7710c838347Ae178B4a' },
  { name: 'slack xoxb-', payload: { text: 'bot xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy' }, secret: 'xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy' },
];

/** Caught: the secret is gone and the payload's keys are untouched. */
export function caught(redact: (v: JsonValue) => JsonValue, c: CorpusCase): boolean {
  return !JSON.stringify(redact(c.payload)).includes(c.secret);
}
