import { App, Validations, type AppProps, type Environment } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { configFromContext, withDefaults, type LogbookConfig } from './config.js';
import { LogbookStack } from './logbook-stack.js';

export interface BuildOptions {
  readonly appProps?: AppProps;
  /** Overrides on top of `-c` context and the defaults. */
  readonly config?: Partial<LogbookConfig>;
  readonly stackName?: string;
  readonly env?: Environment;
}

/**
 * The one way the app is assembled, used by infra/app.ts (`cdk synth`, `cdk deploy`) and by the
 * tests, so the tests check the code path a deploy takes: same stack, same cdk-nag checks.
 */
export function buildLogbookApp(options: BuildOptions = {}): { app: App; stack: LogbookStack } {
  const app = new App({
    ...options.appProps,
    // Feature flags live here rather than in cdk.json so that in-process tests and the CLI build
    // the same template. Server access logs are granted by bucket policy, not the legacy ACL.
    context: { '@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy': true, ...options.appProps?.context },
  });
  const fromContext = configFromContext((key) => app.node.tryGetContext(key));
  const config = withDefaults({ ...fromContext, ...options.config });
  const stackName = options.stackName ?? (app.node.tryGetContext('stackName') as string | undefined) ?? 'Logbook';
  const stack = new LogbookStack(app, stackName, {
    stackName,
    description: 'Logbook: durable LLM agent runs on AWS serverless',
    env: options.env,
    config,
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return { app, stack };
}
