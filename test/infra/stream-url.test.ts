// The construct's `streamUrl` option: true SSE for GET /runs/{runId}/stream from a Lambda function
// URL with response streaming, IAM-authorized, on a function that may only read the run table.
// Off by default (nothing is added); on, cdk-nag stays clean and the URL is an output.
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

  it('the stream function may only read the table (and decrypt it), and ends before five minutes', () => {
    expect(grants(on, 'StreamRole')).toEqual(
      [
        'logs:CreateLogStream @ StreamLogs.Arn',
        'logs:PutLogEvents @ StreamLogs.Arn',
        'dynamodb:GetItem @ RunsTable.Arn',
        'dynamodb:Query @ RunsTable.Arn',
        'kms:Decrypt @ DataKey.Arn',
        'kms:DescribeKey @ DataKey.Arn',
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
