// The construct's `streamUrl` option: true SSE for GET /runs/{runId}/stream and the AI SDK's UI
// message stream of GET /runs/{runId}/chat from a Lambda function URL with response streaming,
// IAM-authorized, on a function that may only read the run table and the payload bucket.
// Off by default (nothing is added); on, cdk-nag stays clean and the URL is an output.
import { lstatSync } from 'node:fs';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { asArray, describeResource, inLogbook, statementsOf, synthLogbook, type Synthesized } from './synth.js';

let off: Synthesized;
let on: Synthesized;
beforeAll(() => {
  off = synthLogbook({ bundle: false });
  on = synthLogbook({ bundle: false, appProps: { context: { streamUrl: 'true' } } });
});

function grants(s: Synthesized, rolePrefix: string): string[] {
  const pairs = new Set<string>();
  for (const st of statementsOf(s.template, rolePrefix)) {
    expect(st.Effect).toBe('Allow');
    for (const action of asArray(st.Action as string | string[])) {
      for (const resource of asArray(st.Resource))
        pairs.add(
          `${action} @ ${describeResource(resource)
            .replace(/[0-9A-F]{8}(?=\.)/g, '')
            .replace(/(^|[^A-Za-z])Logbook(?=[A-Z])/g, '$1')}`,
        );
    }
  }
  return [...pairs].sort();
}

describe('streamUrl', () => {
  it('is off by default: no function URL, no stream function', () => {
    expect(off.template.findResources('AWS::Lambda::Url')).toEqual({});
    expect(Object.keys(off.template.findResources('AWS::Lambda::Function')).filter((id) => inLogbook(id, 'StreamFunction'))).toEqual([]);
  });

  it('on: one function URL, AWS_IAM auth, RESPONSE_STREAM, on the stream function, and no public invoke permission', () => {
    const urls = Object.values(on.template.findResources('AWS::Lambda::Url'));
    expect(urls).toHaveLength(1);
    const props = urls[0]!.Properties as { AuthType: string; InvokeMode: string; TargetFunctionArn: unknown; Cors?: unknown };
    expect(props.AuthType).toBe('AWS_IAM');
    expect(props.InvokeMode).toBe('RESPONSE_STREAM');
    expect(props.Cors).toBeUndefined();
    expect(describeResource(props.TargetFunctionArn)).toMatch(/^LogbookStreamFunction[0-9A-F]{8}\.Arn$/);
    // IAM auth with no resource policy: only principals the deployer grants (grantInvokeUrl) may call it.
    for (const p of Object.values(on.template.findResources('AWS::Lambda::Permission'))) {
      const perm = p.Properties as { Action: string; Principal: string };
      expect(perm.Action).not.toBe('lambda:InvokeFunctionUrl');
      expect(perm.Principal).not.toBe('*');
    }
    expect(on.template.toJSON().Outputs.StreamUrl).toBeDefined();
  });

  it('the stream function may only read the table and the payloads (and decrypt them), and ends before five minutes', () => {
    expect(grants(on, 'StreamRole')).toEqual(
      [
        'logs:CreateLogStream @ StreamLogs.Arn',
        'logs:PutLogEvents @ StreamLogs.Arn',
        'dynamodb:GetItem @ RunsTable.Arn',
        'dynamodb:Query @ RunsTable.Arn',
        'kms:Decrypt @ DataKey.Arn',
        'kms:DescribeKey @ DataKey.Arn',
        // GET /runs/{id}/chat shows an answer, arguments or a result offloaded to the payload bucket.
        's3:GetObject @ PayloadsBucket.Arn/*',
        's3:ListBucket @ PayloadsBucket.Arn',
      ].sort(),
    );
    const [, fn] = Object.entries(on.template.findResources('AWS::Lambda::Function')).find(([id]) => inLogbook(id, 'StreamFunction'))!;
    const p = fn.Properties as { Timeout: number; Environment: { Variables: Record<string, unknown> } };
    expect(p.Timeout).toBe(300);
    expect(p.Environment.Variables.POWERTOOLS_SERVICE_NAME).toBe('logbook-stream');
    expect(p.Environment.Variables.LOGBOOK_TABLE).toEqual({ Ref: expect.stringMatching(/^LogbookRunsTable/) });
  });

  it('cdk-nag stays clean with it on', () => {
    expect(on.nagViolations).toEqual([]);
  });
});

// The bundle's dependencies resolve through node_modules: in a checkout whose node_modules is a link
// to another checkout's (a git worktree sharing one install), the bundle mixes the two checkouts.
const selfResolved = !lstatSync(resolve('node_modules')).isSymbolicLink();

describe('the stream function bundle', () => {
  it.runIf(selfResolved)(
    'bundles, and loads in plain Node as a streamified handler when Lambda’s awslambda global is there',
    async () => {
      const { spawnSync } = await import('node:child_process');
      const { readFileSync } = await import('node:fs');
      const { join } = await import('node:path');
      const { pathToFileURL } = await import('node:url');
      const bundled = synthLogbook({ bundle: true, appProps: { context: { streamUrl: 'true' } } });
      const [, fn] = Object.entries(bundled.template.findResources('AWS::Lambda::Function')).find(([id]) => inLogbook(id, 'StreamFunction'))!;
      const assetHash = ((fn.Properties as { Code: { S3Key: unknown } }).Code.S3Key as string | { 'Fn::Sub'?: string }).toString();
      const manifest = JSON.parse(readFileSync(join(bundled.outdir, 'Logbook.assets.json'), 'utf8')) as {
        files: Record<string, { source: { path: string; packaging?: string } }>;
      };
      const entry = Object.entries(manifest.files).find(([hash]) => JSON.stringify(fn.Properties).includes(hash));
      expect(entry, assetHash).toBeDefined();
      const url = pathToFileURL(join(bundled.outdir, entry![1].source.path, 'index.mjs')).href;
      // Lambda's Node runtime provides `awslambda`; streamifyResponse marks the handler as streaming.
      // The chat route is in the bundle: a bad query is refused (400, naming it) before any read.
      const script = `let status = 0; globalThis.awslambda = { streamifyResponse: (h) => Object.assign(h, { streaming: true }), HttpResponseStream: { from: (s, m) => ((status = m.statusCode), s) } };
      const m = await import(${JSON.stringify(url)}); console.log(typeof m.handler, m.handler.streaming);
      let body = ''; const out = { write: (t) => (body += t), end: () => {}, on: () => {} };
      await m.handler({ rawPath: '/runs/r/chat', queryStringParameters: { from: '-1' }, headers: {}, requestContext: { http: { method: 'GET' }, authorizer: { iam: { accountId: '123456789012' } } } }, out, { getRemainingTimeInMillis: () => 300000 });
      console.log(status, JSON.parse(body).error.issues[0].path);`;
      const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        encoding: 'utf8',
        env: {
          PATH: process.env.PATH,
          LOGBOOK_TABLE: 't',
          LOGBOOK_BUCKET: 'b',
          LOGBOOK_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/q.fifo',
          AWS_REGION: 'us-east-1',
          // Calling the handler builds the SDK clients, which warn on Node 20.
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        },
      });
      expect(result.stderr).toBe('');
      expect(result.stdout.trim().split('\n')).toEqual(['function true', '400 query.from']);
    },
    600_000,
  );
});
