import { App, Validations, type AppProps, type Environment } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { configFromContext, type LogbookConfig } from './config.js';
import type { LogbookProps } from './logbook.js';
import { LogbookStack } from './logbook-stack.js';

export interface LogbookAppOptions extends Omit<LogbookProps, keyof LogbookConfig | 'environment'> {
  /** The functions' environment, or a function of the `-c` context (e.g. `-c model=...` → LOGBOOK_MODEL). */
  readonly environment?: Readonly<Record<string, string>> | ((context: (key: string) => unknown) => Readonly<Record<string, string>>);
  readonly appProps?: AppProps;
  /** Overrides on top of `-c` context and the defaults. */
  readonly config?: Partial<LogbookConfig>;
  /** Default: context `stackName`, else `Logbook`. */
  readonly stackName?: string;
  readonly description?: string;
  /** Default: the CLI's account and region (CDK_DEFAULT_*), environment-agnostic without credentials. */
  readonly env?: Environment;
}

/**
 * A whole CDK app in one call (`buildLogbookApp({ agents: 'src/agents.ts' }).app.synth()`): one
 * stack holding the Logbook construct, options from `-c name=value` context, and cdk-nag's
 * AwsSolutions checks, so `cdk synth` fails on any finding nobody acknowledged.
 */
export function buildLogbookApp(options: LogbookAppOptions): { app: App; stack: LogbookStack } {
  const { appProps, config, stackName: name, description, env, environment, ...logbook } = options;
  const app = new App(appProps);
  const fromContext = configFromContext((key) => app.node.tryGetContext(key));
  const stackName = name ?? (app.node.tryGetContext('stackName') as string | undefined) ?? 'Logbook';
  const account = process.env.CDK_DEFAULT_ACCOUNT;
  const region = process.env.CDK_DEFAULT_REGION;
  const stack = new LogbookStack(app, stackName, {
    stackName,
    description: description ?? 'Logbook: durable LLM agent runs on AWS serverless',
    env: env ?? (account && region ? { account, region } : undefined),
    logbook: {
      ...logbook,
      ...fromContext,
      ...config,
      ...(environment ? { environment: typeof environment === 'function' ? environment((key) => app.node.tryGetContext(key)) : environment } : {}),
    },
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return { app, stack };
}
