import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { LogbookAppOptions, LogbookStack } from 'logbook/cdk';
import { buildSupportApp } from '../../infra/build-app.js';

export interface Violation {
  ruleName: string;
  severity: string;
  violatingConstructs: { constructPath: string }[];
}

export interface Synthesized {
  app: App;
  stack: LogbookStack;
  template: Template;
  outdir: string;
  /** Unsuppressed findings of the AwsSolutions (cdk-nag) plugin. */
  nagViolations: Violation[];
}

export interface SynthOptions extends Partial<LogbookAppOptions> {
  /** Bundle the handlers with esbuild (seconds); off for tests that only read the template. */
  readonly bundle?: boolean;
}

/** Reads the policy validation report CDK writes into the cloud assembly. */
export function readNagViolations(outdir: string): Violation[] {
  const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as {
    pluginReports: { pluginName: string; violations: Violation[] }[];
  };
  return report.pluginReports.filter((p) => p.pluginName === 'AwsSolutions').flatMap((p) => p.violations);
}

/**
 * Builds the support app exactly as its infra/app.ts does and synthesizes it in-process, offline: no AWS
 * credentials, no account or region (the stack is environment-agnostic). Synthesize once per test
 * file and share the result.
 */
export function synthLogbook(options: SynthOptions = {}): Synthesized {
  const outdir = mkdtempSync(join(tmpdir(), 'logbook-cdk-'));
  const context: Record<string, unknown> = { ...options.appProps?.context };
  // CDK's own switch: an empty list of bundling stacks skips esbuild and stages a placeholder.
  if (options.bundle === false) context['aws:cdk:bundling-stacks'] = [];
  const { app, stack } = buildSupportApp({ ...options, appProps: { ...options.appProps, outdir, context } });
  app.synth();
  return { app, stack, template: Template.fromStack(stack), outdir, nagViolations: readNagViolations(outdir) };
}

type Json = Record<string, unknown>;

/** Resources of the Logbook construct have logical ids `Logbook<Child>...`; tests name the child. */
export function inLogbook(logicalId: string, childPrefix: string): boolean {
  return logicalId.startsWith(`Logbook${childPrefix}`) || logicalId.startsWith(childPrefix);
}

/** All IAM statements of one function's role (its default policy), as synthesized. */
export function statementsOf(template: Template, roleLogicalIdPrefix: string): Json[] {
  const policies = template.findResources('AWS::IAM::Policy');
  const statements: Json[] = [];
  for (const [id, policy] of Object.entries(policies)) {
    if (!inLogbook(id, roleLogicalIdPrefix)) continue;
    const doc = (policy.Properties as Json).PolicyDocument as { Statement: Json[] };
    statements.push(...doc.Statement);
  }
  return statements;
}

export function asArray<T>(value: T | T[]): T[] {
  return Array.isArray(value) ? value : [value];
}

/** `{"Fn::GetAtt": [id, "Arn"]}` → id; a Join over a GetAtt → `id` + the literal suffix. */
export function describeResource(resource: unknown): string {
  if (typeof resource === 'string') return resource;
  const r = resource as Json;
  if (Array.isArray(r['Fn::GetAtt'])) return `${(r['Fn::GetAtt'] as string[])[0]}.${(r['Fn::GetAtt'] as string[])[1]}`;
  if (r.Ref !== undefined) return `Ref:${String(r.Ref)}`;
  if (Array.isArray(r['Fn::Join'])) {
    const parts = (r['Fn::Join'] as [string, unknown[]])[1];
    return parts.map((p) => describeResource(p)).join('');
  }
  return JSON.stringify(resource);
}

/** The logical id of the one resource of `type` whose id starts with `prefix`. */
export function logicalId(template: Template, type: string, prefix: string): string {
  const ids = Object.keys(template.findResources(type)).filter((id) => inLogbook(id, prefix));
  if (ids.length !== 1) throw new Error(`expected one ${type} starting with ${prefix}, found ${ids.join(', ') || 'none'}`);
  return ids[0] as string;
}
