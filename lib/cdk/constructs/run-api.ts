import type { RemovalPolicy } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpIamAuthorizer, HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

export interface RunApiProps {
  readonly handler: lambda.IFunction;
  /** IAM (SigV4) authorization unless a JWT issuer and audience are given. */
  readonly jwt?: { readonly issuer: string; readonly audience: readonly string[] };
  readonly throttle: { readonly rateLimit: number; readonly burstLimit: number };
  readonly logRetention: logs.RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * Fields of one access log line. Who called (the IAM principal or the JWT subject), what, and how
 * it went; never headers, bodies or tokens.
 */
const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  requestTime: '$context.requestTime',
  ip: '$context.identity.sourceIp',
  caller: '$context.identity.caller',
  userArn: '$context.identity.userArn',
  jwtSubject: '$context.authorizer.claims.sub',
  httpMethod: '$context.httpMethod',
  path: '$context.path',
  routeKey: '$context.routeKey',
  status: '$context.status',
  responseLength: '$context.responseLength',
  latencyMs: '$context.responseLatency',
  integrationLatencyMs: '$context.integrationLatency',
  integrationError: '$context.integrationErrorMessage',
  authorizerError: '$context.authorizer.error',
};

/** HTTP API → api handler: one `$default` route, authorized, throttled and access-logged. */
export class RunApi extends Construct {
  readonly httpApi: apigw.HttpApi;
  readonly stage: apigw.HttpStage;
  readonly accessLogs: logs.LogGroup;

  constructor(scope: Construct, id: string, props: RunApiProps) {
    super(scope, id);
    const authorizer = props.jwt ? new HttpJwtAuthorizer('JwtAuthorizer', props.jwt.issuer, { jwtAudience: [...props.jwt.audience] }) : new HttpIamAuthorizer();
    this.httpApi = new apigw.HttpApi(this, 'HttpApi', {
      description: 'Logbook runs API',
      // Every path goes to the api handler, which routes itself; the authorizer guards them all.
      defaultIntegration: new HttpLambdaIntegration('ApiIntegration', props.handler),
      defaultAuthorizer: authorizer,
      // The stage is made below, with throttling and access logs.
      createDefaultStage: false,
    });
    this.accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    this.stage = new apigw.HttpStage(this, 'DefaultStage', {
      httpApi: this.httpApi,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: props.throttle.rateLimit, burstLimit: props.throttle.burstLimit },
      accessLogSettings: {
        destination: new apigw.LogGroupLogDestination(this.accessLogs),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
    });
  }

  /** Base URL of the API (the `$default` stage serves at the root). */
  get url(): string {
    return this.stage.url;
  }
}
