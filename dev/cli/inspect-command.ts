import { parseArgs } from 'node:util';
import type { ProxyAuth } from '../ui/api-proxy.js';
import { startInspectServer } from '../ui/inspect-server.js';
import { executeApiSigner, regionOfApiUrl, type CredentialSource } from '../ui/sigv4.js';
import { UsageError, type Output } from './output.js';

export const INSPECT_USAGE = `logbook inspect --api URL [--token-stdin] [--region R] [--port N]
  The web inspector for a deployed stack, on http://127.0.0.1:N/ui/ (default port 8788). Its API
  calls go to URL (the stack's ApiUrl output), signed with your AWS credentials (SigV4, the SDK's
  default chain: AWS_PROFILE, env, SSO, ...) or, for a JWT authorizer, with a bearer token from
  LOGBOOK_TOKEN or read from stdin with --token-stdin (never from the command line, which every
  user of the machine can read in \`ps\`). Open the URL it prints: it carries this session's
  secret, without which the API calls are refused. Nothing public is added to the stack. Ctrl-C
  stops it.`;

function parseApiUrl(value: string | undefined): URL {
  if (!value) throw new UsageError('--api URL is required: the ApiUrl output of your stack');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--api must be a URL, got "${value}"`);
  }
  const loopback = url.hostname === '127.0.0.1' || url.hostname === 'localhost';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) throw new UsageError('--api must be an https:// URL (http:// only for 127.0.0.1)');
  if (url.search || url.hash) throw new UsageError('--api is the base URL: no query or fragment');
  return url;
}

export interface InspectDeps {
  /** Credentials for SigV4 (tests); default: the AWS SDK's default chain. */
  credentials?: CredentialSource;
  /** Resolves when the command should stop (default: SIGINT or SIGTERM). */
  until?: Promise<void>;
  fetch?: typeof fetch;
  /** All of stdin, for --token-stdin (tests); default: the process's stdin. */
  readStdin?: () => Promise<string>;
}

async function readProcessStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** `logbook inspect --api URL`: serve until Ctrl-C; the exit code. */
export async function inspectCommand(argv: string[], io: Output, deps: InspectDeps = {}): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { api: { type: 'string' }, token: { type: 'string' }, 'token-stdin': { type: 'boolean', default: false }, region: { type: 'string' }, port: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } },
    strict: true,
  });
  if (values.help) {
    io.out(INSPECT_USAGE);
    return 0;
  }
  const apiUrl = parseApiUrl(values.api);
  const port = values.port === undefined ? 8788 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be a port number (0 picks a free one)');
  if (values.token !== undefined) {
    throw new UsageError('--token is refused: a command line is visible to every user of this machine (ps). Set LOGBOOK_TOKEN, or pipe it in with --token-stdin');
  }
  let token = process.env.LOGBOOK_TOKEN || undefined;
  if (values['token-stdin']) {
    token = (await (deps.readStdin ?? readProcessStdin)()).trim();
    if (!token) throw new UsageError('--token-stdin read no token from stdin');
  }

  let auth: ProxyAuth;
  if (token) {
    auth = { kind: 'token', token };
  } else {
    const region = values.region ?? regionOfApiUrl(apiUrl) ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
    if (!region) throw new UsageError('cannot tell the region from --api: pass --region R (or set AWS_REGION)');
    const signer = executeApiSigner(region, deps.credentials);
    // Fail now, not on the first click, when there is nothing to sign with.
    try {
      await signer.credentials();
    } catch (error) {
      io.err(`logbook: no AWS credentials found (${(error as Error).message}). Set AWS_PROFILE or run \`aws sso login\`; for a JWT authorizer pass --token.`);
      return 1;
    }
    auth = { kind: 'sigv4', signer };
    io.err(`Signing requests with your AWS credentials (SigV4, execute-api, ${region}).`);
  }

  const server = await startInspectServer({ apiUrl, auth, port, ...(deps.fetch ? { fetch: deps.fetch } : {}) }).catch((error: unknown) => {
    if ((error as { code?: string }).code === 'EADDRINUSE') throw new UsageError(`port ${port} is in use: pick another with --port N`);
    throw error;
  });
  try {
    io.out(`Inspector: ${server.url}   (API calls go to ${apiUrl.href})`);
    io.err('Press Ctrl-C to stop.');
    await (deps.until ??
      new Promise<void>((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
      }));
    return 0;
  } finally {
    await server.close();
  }
}
