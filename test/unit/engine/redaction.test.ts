import { describe, expect, it } from 'vitest';
import { MemoryBlobStore } from '../../../lib/adapters/memory/memory-blob-store.js';
import { ConfigError } from '../../../lib/core/errors.js';
import type { JsonValue } from '../../../lib/core/json.js';
import { defineAgents } from '../../../lib/authoring/define-agents.js';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { PayloadCodec } from '../../../lib/engine/payload-codec.js';
import { FIELD_PLACEHOLDER, Redactor } from '../../../lib/core/redaction.js';
import { createRuntime } from '../../../lib/lambda/wiring.js';
import { ScriptedModel } from '../../../lib/models/scripted-model.js';
import { hashJson } from '../../../lib/support/hash.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { agentsWorld, spawnWorker } from '../../../lib/testing/world.js';
import { AWS_ID, AWS_SECRET, CORPUS, caught } from './redaction-corpus.js';

/** Every key of every object, in order, and every array length: what redaction must never change. */
function shape(value: JsonValue): unknown {
  if (Array.isArray(value)) return value.map(shape);
  if (value !== null && typeof value === 'object') return Object.entries(value).map(([k, v]) => [k, shape(v)]);
  return typeof value === 'string' ? 's' : value;
}

const r = new Redactor();

describe('the secrets of issue 26', () => {
  it.each(CORPUS.map((c) => [c.name, c] as const))('%s is redacted, and only its value: keys and structure stay', (_name, c) => {
    const out = r.json(c.payload);
    expect(JSON.stringify(out)).not.toContain(c.secret);
    expect(JSON.stringify(out)).toContain('[REDACTED:');
    expect(shape(out)).toEqual(shape(c.payload));
    // Redacting the stored form again changes nothing (hashes of redacted arguments stay stable).
    expect(r.json(out)).toEqual(out);
  });

  it('counts: all of them are caught', () => {
    expect(CORPUS.filter((c) => caught((v) => r.json(v), c)).map((c) => c.name)).toEqual(CORPUS.map((c) => c.name));
    expect(CORPUS).toHaveLength(23);
  });

  it('keeps the readable part around a secret: the user and host of a URL, the name of an assignment, the header', () => {
    expect(r.text('postgres://app_user:s3cr3t-P4ss@db.internal:5432/orders')).toBe('postgres://app_user:[REDACTED:url_credentials]@db.internal:5432/orders');
    expect(r.text('redis://:hunter2hunter2@cache:6379')).toBe('redis://:[REDACTED:url_credentials]@cache:6379');
    expect(r.text('https://hooks.slack.com/services/T0/B0/abcdefghij')).toBe('https://hooks.slack.com/[REDACTED:slack_webhook]');
    expect(r.text('AccountName=a;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OU==;EndpointSuffix=x')).toBe('AccountName=a;AccountKey=[REDACTED:azure_key];EndpointSuffix=x');
    expect(r.text('Authorization: Basic YWRtaW46Y29ycmVjdC1ob3JzZQ==')).toBe('Authorization: [REDACTED:http_header]');
    expect(r.text('with Basic YWRtaW46Y29ycmVjdC1ob3JzZQ==')).toBe('with Basic [REDACTED:basic_auth]');
    expect(r.text(`${AWS_ID} ${AWS_SECRET}`)).toBe('[REDACTED:aws_access_key_id] [REDACTED:aws_secret_access_key]');
  });

  it('catches more formats a team meets: OAuth, npm, GitLab, Hugging Face, Discord, webhooks, JWTs, cookies, quoted and embedded JSON', () => {
    const cases: [string, string][] = [
      ['GOOGLE_CLIENT_SECRET=GOCSPX-abcdefghijklmnopqrstuvwx12', 'GOCSPX-abcdefghijklmnopqrstuvwx12'],
      ['//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789', 'npm_abcdefghijklmnopqrstuvwxyz0123456789'],
      ['glpat-abcdefghij1234567890', 'glpat-abcdefghij1234567890'],
      ['HF_TOKEN hf_abcdefghijklmnopqrstuvwxyzABCDEFGH', 'hf_abcdefghijklmnopqrstuvwxyzABCDEFGH'],
      ['https://discord.com/api/webhooks/123456789012345678/abcDEF-ghiJKL_mnoPQR', 'abcDEF-ghiJKL_mnoPQR'],
      ['whsec_abcdefghijklmnopqrstuvwxyz0123', 'whsec_abcdefghijklmnopqrstuvwxyz0123'],
      ['eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U', 'dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'],
      ['Cookie: session=9f8e7d6c5b4a; theme=dark', 'session=9f8e7d6c5b4a'],
      ['config: password: "correct horse battery staple"', 'horse battery'],
      ['{"client_secret":"zx81-Qv0-secret-value"}', 'zx81-Qv0-secret-value'],
      ['{\\"refresh_token\\":\\"1//0gAbCdEfGh\\"}', '1//0gAbCdEfGh'],
      ['https://acct.blob.core.windows.net/c/f?sv=2022-11-02&sig=AbCdEf0123456789%2BxyZ%3D', 'AbCdEf0123456789'],
      ['https://api.example.com/v1?api_key=9f8e7d6c5b4a3210&page=2', '9f8e7d6c5b4a3210'],
      ['-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ (output cut here)', 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ'],
      ['-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oPO6AHz0MzVaoAoGCCqGSM49\n-----END EC PRIVATE KEY-----', 'MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oPO6AHz0MzVaoAoGCCqGSM49'],
      ['sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789', 'abcdefghijklmnopqrstuvwxyz0123456789'],
    ];
    for (const [text, secret] of cases) expect(r.text(text), text).not.toContain(secret);
  });
});

describe('redaction by key name', () => {
  it('redacts every string under a secret key, whatever its case or separators, at any depth', () => {
    const keys = [
      'password', 'Password', 'DB_PASSWORD', 'passwordConfirmation', 'passwd', 'passphrase', 'secret', 'client-secret', 'clientSecret',
      'webhook_secret', 'token', 'accessToken', 'access_token', 'refresh_token', 'id_token', 'githubToken', 'csrf-token', 'apiKey',
      'api_key', 'X-Api-Key', 'stripeApiKey', 'private_key', 'privateKey', 'secret_key', 'aws_secret_access_key', 'SecretAccessKey',
      'AccountKey', 'authorization', 'Proxy-Authorization', 'cookie', 'Set-Cookie', 'credentials', 'connectionString', 'sessionId', 'auth',
    ];
    for (const key of keys) {
      const input = { outer: [{ [key]: 'plain-looking-value' }] };
      expect(r.json(input), key).toEqual({ outer: [{ [key]: FIELD_PLACEHOLDER }] });
    }
  });

  it('redacts every string beneath a secret key (objects and arrays), and leaves numbers, booleans, null and empty strings', () => {
    const input = { credentials: { user: 'ops', pass: 'x9', port: 5432, tls: true, ca: null, list: ['a', 'b'] }, secrets: ['one', 'two'], token: '' };
    expect(r.json(input)).toEqual({
      credentials: { user: FIELD_PLACEHOLDER, pass: FIELD_PLACEHOLDER, port: 5432, tls: true, ca: null, list: [FIELD_PLACEHOLDER, FIELD_PLACEHOLDER] },
      secrets: [FIELD_PLACEHOLDER, FIELD_PLACEHOLDER],
      token: '',
    });
  });

  it('leaves counts, cursors, ids, tool names and look-alike keys alone', () => {
    const input: JsonValue = {
      id: 'call-1',
      callId: '2-0',
      name: 'lookup_order',
      usage: { inputTokens: 1200, outputTokens: 30, tokens: 12, max_tokens: 4096, totalTokens: 1230 },
      tokens: ['the', 'quick'],
      tokenType: 'access',
      tokenUrl: 'https://auth.example.com/oauth/token',
      secretName: 'prod/orders-db',
      secretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/orders-db',
      nextToken: 'AAAbbbCCCddd111',
      NextContinuationToken: '1ueGcxLPRx1Tr',
      pageToken: 'CAoQAA',
      clientToken: 'idem-42',
      passwordPolicy: 8,
      commit: 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3',
      sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      uuid: '123e4567-e89b-12d3-a456-426614174000',
      note: 'Basic information about the plan; max_tokens=4096; the secret to soup is salt; see https://example.com/a?b=1',
      author: 'Ada',
    };
    expect(r.json(input)).toEqual(input);
  });

  it('never changes a key, even one that looks like a secret', () => {
    const input = { [AWS_ID]: 1, 'sk_live_51H8xYzAbCdEfGhIjKlMnOpQr': 'x' };
    expect(Object.keys(r.json(input) as object)).toEqual(Object.keys(input));
  });
});

describe('what an application adds', () => {
  it('allow-lists keys (any depth) and paths (from the root, * for any key or index): nothing beneath them is redacted', () => {
    const own = new Redactor({ allow: ['trackingToken', 'order.items.*.secret', 'fixtures'] });
    const input = {
      trackingToken: 'TRK-1234567',
      deep: [{ tracking_token: 'TRK-7654321' }],
      order: { secret: 'still-secret', items: [{ secret: 'gift-note-1' }, { secret: 'gift-note-2' }] },
      fixtures: { sample: `example ${AWS_ID}`, password: 'documented-example' },
      password: 'hunter2!Winter',
    };
    expect(own.json(input)).toEqual({ ...input, order: { ...input.order, secret: FIELD_PLACEHOLDER }, password: FIELD_PLACEHOLDER });
  });

  it('adds patterns (the whole match, or only the `secret` group) and key names (names or RegExps)', () => {
    const own = new Redactor({
      rules: [
        { name: 'acme_key', pattern: /\bacme_[a-z0-9]{16}\b/ },
        { name: 'employee_pin', pattern: /PIN:\s*(?<secret>\d{4})\b/ },
      ],
      keys: ['accountNumber', /^x-acme-/i],
    });
    expect(own.text('use acme_0123456789abcdef now; PIN: 4821')).toBe('use [REDACTED:acme_key] now; PIN: [REDACTED:employee_pin]');
    expect(own.json({ account_number: 'DE89 3704', 'X-Acme-Signature': 'v1=abc', accountName: 'Ada' })).toEqual({
      account_number: FIELD_PLACEHOLDER,
      'X-Acme-Signature': FIELD_PLACEHOLDER,
      accountName: 'Ada',
    });
    // The built-in rules still apply beside the application's.
    expect(own.text(`key ${AWS_ID}`)).toBe('key [REDACTED:aws_access_key_id]');
  });

  it('defaults: false leaves only the application rules and keys', () => {
    const own = new Redactor({ defaults: false, keys: ['pin'] });
    expect(own.json({ password: 'kept', pin: '1234', note: `key ${AWS_ID}` })).toEqual({ password: 'kept', pin: FIELD_PLACEHOLDER, note: `key ${AWS_ID}` });
  });

  it('refuses unusable options at definition time (ConfigError), with the path of what is wrong', () => {
    expect(() => new Redactor({ rules: [{ name: 'has space', pattern: /x/ }] })).toThrow(/redaction\.rules\[0\]\.name/);
    expect(() => new Redactor({ rules: [{ name: 'ok', pattern: 'x' as unknown as RegExp }] })).toThrow(ConfigError);
    expect(() => new Redactor({ keys: ['--'] })).toThrow(/redaction\.keys\[0\]/);
    expect(() => new Redactor({ allow: ['a..b'] })).toThrow(/redaction\.allow\[0\]/);
    const agent = defineAgent({
      name: 'a',
      version: '1',
      model: { id: 'scripted:a', maxOutputTokens: 10, price: { inputPerMTokUsd: 0, outputPerMTokUsd: 0 } },
      system: { version: '1', text: 'x' },
      tools: [],
    });
    expect(() => defineAgents({ agents: [agent], models: { 'scripted:a': () => new ScriptedModel([]) }, redaction: { rules: [{ name: '', pattern: /x/ }] } })).toThrow(ConfigError);
    expect(defineAgents({ agents: [agent], redaction: { keys: ['pin'] } }).redaction).toEqual({ keys: ['pin'] });
  });
});

describe('the codec redacts every free-text field of an event, not only its bodies', () => {
  it('a cancel reason and a provider parse error quoting the arguments', async () => {
    const codec = new PayloadCodec({ blobs: new MemoryBlobStore(), redactor: new Redactor() });
    const run = { tenant: 't', runId: 'r' };
    const cancel = await codec.encodeDraft(run, { type: 'cancel_requested', requestedBy: 'u', inboxId: 'i', reason: `leaked ${AWS_ID}` });
    expect(JSON.stringify(cancel)).not.toContain(AWS_ID);
    const response = await codec.encodeDraft(run, {
      type: 'model_response',
      text: null,
      calls: [{ callId: '2-0', providerId: 'p', name: 'x', args: { kind: 'inline', value: '{"password": "hunter2!W' }, argsError: `arguments are not valid JSON: '{"password": "hunter2!W' ${AWS_ID}` }],
      usage: { inputTokens: 1, outputTokens: 1 },
      costUsd: 0,
      stopReason: 'tool_use',
    });
    expect(JSON.stringify(response)).not.toContain(AWS_ID);
    expect(JSON.stringify(response)).not.toContain('hunter2!W');
  });
});

describe('where the application gives its redaction: defineAgents, and every host of those agents applies it', () => {
  const agents = () =>
    defineAgents({
      agents: [
        defineAgent({
          name: 'a',
          version: '1',
          model: { id: 'scripted:a', maxOutputTokens: 10, price: { inputPerMTokUsd: 0, outputPerMTokUsd: 0 } },
          system: { version: '1', text: 'x' },
          tools: [],
        }),
      ],
      models: { 'scripted:a': () => new ScriptedModel([]) },
      redaction: { keys: ['badgeCode'], allow: ['trackingToken'] },
    });
  const payload = { badgeCode: 'B-1234', trackingToken: 'TRK-1', password: 'hunter2!Winter' };
  const expected = { badgeCode: FIELD_PLACEHOLDER, trackingToken: 'TRK-1', password: FIELD_PLACEHOLDER };

  it('the Lambda runtime (API, trigger, worker and logbook dev build their engine here)', async () => {
    const env = { LOGBOOK_TABLE: 't', LOGBOOK_BUCKET: 'b', LOGBOOK_QUEUE_URL: 'http://127.0.0.1:1/q', LOGBOOK_DYNAMODB_ENDPOINT: 'http://127.0.0.1:1', POWERTOOLS_LOG_LEVEL: 'ERROR' };
    const runtime = await createRuntime('test', { agents: agents(), env });
    expect(runtime.engine.codec.redactJson(payload)).toEqual(expected);
    // Without agents (the sweeper), the built-in redaction only.
    const bare = await createRuntime('test', { env });
    expect(bare.engine.codec.redactJson(payload)).toEqual({ ...expected, badgeCode: 'B-1234', trackingToken: FIELD_PLACEHOLDER });
  });

  it('the testing kit: a world of the agents, and its workers', () => {
    const world = agentsWorld(agents());
    expect(spawnWorker(world).deps.codec.redactJson(payload)).toEqual(expected);
  });
});

describe('redact, then hash', () => {
  it('a run\'s request hash is over the redacted input (a hash of the raw one would let a reader test guesses at a short secret); a retry is still the same request', async () => {
    const t = scriptedWorld({ tools: [], script: [{ text: 'ok' }] });
    const input = { user: 'ops', password: 'hunter2!Winter' };
    expect((await startRun(t.worker.deps, { ...t.run, agent: 'agent', input })).created).toBe(true);
    const started = (await t.storage.log.readOne(t.run, 1)) as { requestHash: string };
    const over = (value: JsonValue) => hashJson({ agent: 'agent', version: '1', input: value, budgets: null });
    expect(started.requestHash).toBe(over({ user: 'ops', password: FIELD_PLACEHOLDER }));
    expect(started.requestHash).not.toBe(over(input));
    expect((await startRun(t.worker.deps, { ...t.run, agent: 'agent', input })).created).toBe(false);
  });
});
