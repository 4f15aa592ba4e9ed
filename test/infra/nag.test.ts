import { Validations } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildSupportApp } from '../../infra/build-app.js';
import { readNagViolations, synthLogbook, type Synthesized } from './synth.js';

const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };
const BEDROCK_PROFILE = 'bedrock:us.anthropic.claude-sonnet-4-20250514-v1:0';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('cdk-nag AwsSolutionsChecks', () => {
  it('is applied by buildLogbookApp: an insecure resource fails the synth', () => {
    const outdir = mkdtempSync(join(tmpdir(), 'logbook-cdk-'));
    const { app, stack } = buildSupportApp({ appProps: { outdir, context: NO_BUNDLING } });
    new s3.Bucket(stack, 'Insecure');
    expect(() => app.synth()).toThrow(/AwsSolutions-S1/);
  });

  it('every acknowledgment is specific, has a reason, and matches a finding that really occurs', () => {
    // Record the acknowledgments instead of applying them, then synthesize with every option that
    // adds one (a Bedrock inference profile) and compare what cdk-nag finds with what we waived.
    const acknowledged: { id: string; path: string; reason: string }[] = [];
    vi.spyOn(Validations.prototype, 'acknowledge').mockImplementation(function (this: unknown, ...rules) {
      const scope = (this as { scope: { node: { path: string } } }).scope;
      for (const rule of rules) acknowledged.push({ id: rule.id, path: scope.node.path, reason: rule.reason ?? '' });
    });
    const outdir = mkdtempSync(join(tmpdir(), 'logbook-cdk-'));
    const { app } = buildSupportApp({ models: [BEDROCK_PROFILE], appProps: { outdir, context: NO_BUNDLING } });
    expect(() => app.synth()).toThrow(/AwsSolutions-L1/);

    const found = readNagViolations(outdir).flatMap((v) =>
      v.violatingConstructs.map((c) => ({ id: v.ruleName, path: c.constructPath })),
    );
    expect(acknowledged.length).toBeGreaterThan(0);
    for (const ack of acknowledged) {
      expect(ack.reason.length, ack.id).toBeGreaterThan(60);
      // Wildcard findings are waived one by one, never the whole rule.
      if (ack.id.startsWith('AwsSolutions-IAM5')) expect(ack.id).toMatch(/^AwsSolutions-IAM5\[Resource::.+\]$/);
      const matches = found.filter((f) => f.id === ack.id && (f.path === ack.path || f.path.startsWith(`${ack.path}/`)));
      expect(matches, `${ack.id} at ${ack.path}`).not.toHaveLength(0);
    }
    for (const finding of found) {
      const covered = acknowledged.some((a) => a.id === finding.id && (finding.path === a.path || finding.path.startsWith(`${a.path}/`)));
      expect(covered, `${finding.id} at ${finding.path}`).toBe(true);
    }
  });
});

describe('variant: JWT, Bedrock inference profile, default bus, destroyable', () => {
  let v: Synthesized;
  beforeAll(() => {
    v = synthLogbook({
    bundle: false,
    models: [BEDROCK_PROFILE, 'scripted:support-v1', 'bedrock:anthropic.claude-3-haiku-20240307-v1:0'],
    config: {
      jwt: { issuer: 'https://issuer.example.com/', audience: ['logbook'], tenantClaim: 'org_id' },
      useDefaultEventBus: true,
      triggerSources: ['my.app'],
      alarmEmail: 'ops@example.com',
    },
    appProps: { context: { removalPolicy: 'destroy' } },
    });
  });

  it('passes cdk-nag with no unsuppressed findings', () => {
    expect(v.nagViolations).toEqual([]);
  });

  it('authorizes the API with the JWT authorizer and tells the api handler the tenant claim', () => {
    v.template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
      AuthorizerType: 'JWT',
      JwtConfiguration: { Issuer: 'https://issuer.example.com/', Audience: ['logbook'] },
    });
    for (const route of Object.values(v.template.findResources('AWS::ApiGatewayV2::Route'))) {
      expect((route.Properties as { AuthorizationType: string }).AuthorizationType).toBe('JWT');
    }
    v.template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ LOGBOOK_TENANT_CLAIM: 'org_id' }) },
    });
  });

  it('grants bedrock:InvokeModel to the worker only, on the profile and its foundation model', () => {
    const bedrock = Object.entries(v.template.findResources('AWS::IAM::Policy')).flatMap(([id, p]) =>
      (p.Properties as { PolicyDocument: { Statement: { Action: string | string[]; Resource: unknown }[] } }).PolicyDocument.Statement.filter(
        (st) => JSON.stringify(st.Action).includes('bedrock'),
      ).map((st) => ({ id, st })),
    );
    expect(bedrock).toHaveLength(1);
    expect(bedrock[0]?.id).toMatch(/^LogbookWorkerRole/);
    expect(bedrock[0]?.st.Action).toEqual(['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream']);
    const resources = JSON.stringify(bedrock[0]?.st.Resource);
    expect(resources).toContain(':inference-profile/us.anthropic.claude-sonnet-4-20250514-v1:0');
    expect(resources).toContain(':bedrock:*::foundation-model/anthropic.claude-sonnet-4-20250514-v1:0');
    // Every Bedrock model the agents pin, not only one.
    expect(resources).toContain(':foundation-model/anthropic.claude-3-haiku-20240307-v1:0');
  });

  it('puts the run-requested rule on the default bus, filtered by source, and creates no bus', () => {
    v.template.resourceCountIs('AWS::Events::EventBus', 0);
    v.template.hasResourceProperties('AWS::Events::Rule', {
      EventBusName: 'default',
      EventPattern: { 'detail-type': ['Agent Run Requested'], source: ['my.app'] },
    });
  });

  it('deletes data on stack deletion and turns deletion protection off', () => {
    v.template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete', Properties: Match.objectLike({ DeletionProtectionEnabled: false }) });
    v.template.hasResource('AWS::S3::Bucket', { DeletionPolicy: 'Delete' });
    v.template.hasResource('AWS::KMS::Key', { DeletionPolicy: 'Delete' });
  });

  it('subscribes the alarm e-mail', () => {
    v.template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' });
  });
});
