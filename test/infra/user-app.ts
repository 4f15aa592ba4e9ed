import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readNagViolations, type Violation } from './synth.js';

export interface UserAppOptions {
  /** Bundle the functions with esbuild (seconds); off for tests that only read the template. */
  readonly bundle?: boolean;
  /** App context, e.g. the feature flags a `cdk init` project's cdk.json sets. */
  readonly context?: Record<string, unknown>;
}

export interface UserApp {
  readonly app: App;
  /** The user's own stack, into which a test adds `new Logbook(stack, id, props)`. */
  readonly stack: Stack;
  readonly outdir: string;
  synth(): { template: Template; nagViolations: Violation[] };
}

/**
 * An application's CDK app as its owner writes it, with nothing from buildLogbookApp: a plain
 * App, the user's own Stack, and cdk-nag's AwsSolutions checks added the way cdk-nag documents.
 * Offline: environment-agnostic, no credentials.
 */
export function userApp(options: UserAppOptions = {}): UserApp {
  const outdir = mkdtempSync(join(tmpdir(), 'logbook-user-app-'));
  const context: Record<string, unknown> = { ...options.context };
  // CDK's own switch: an empty list of bundling stacks skips esbuild and stages a placeholder.
  if (!options.bundle) context['aws:cdk:bundling-stacks'] = [];
  const app = new App({ outdir, context });
  const stack = new Stack(app, 'UserStack');
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return {
    app,
    stack,
    outdir,
    synth() {
      app.synth();
      return { template: Template.fromStack(stack), nagViolations: readNagViolations(outdir) };
    },
  };
}
