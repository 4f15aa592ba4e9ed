import { Duration, Stack, type RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

export interface DataKeyProps {
  readonly removalPolicy: RemovalPolicy;
}

/**
 * One customer-managed KMS key for everything that holds run data (table, bucket, queues) and the
 * alarm topic. Why customer-managed rather than AWS-managed keys: run logs hold tenants' prompts
 * and tool results; a key of our own is a second gate beside IAM (its key policy), every use is in
 * CloudTrail under this key, and disabling it shreds the data of a torn-down deployment. It costs
 * $1 a month; per-request KMS calls stay negligible because S3 uses a bucket key, SQS reuses data
 * keys and DynamoDB caches its table key.
 */
export class DataKey extends Construct {
  readonly key: kms.Key;

  constructor(scope: Construct, id: string, props: DataKeyProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.key = new kms.Key(this, 'Key', {
      description: `Logbook data key (${stack.stackName}): run table, payload bucket, step queues, alarm topic`,
      enableKeyRotation: true,
      removalPolicy: props.removalPolicy,
      pendingWindow: Duration.days(30),
    });
    // CloudWatch alarms publish to the encrypted alarm topic and EventBridge writes failed run
    // requests to the encrypted trigger dead-letter queue; both must be able to make a data key.
    // Only on behalf of this account (aws:SourceAccount, the confused-deputy guard AWS's key-policy
    // guidance for EventBridge recommends): without it the key would serve these services acting
    // for any account that points an alarm or a rule at something encrypted with it. No
    // aws:SourceArn: the alarms and rules are many, and the topic's and queue's own resource
    // policies already pick them. (Checked by synth assertions only, not against a deployment.)
    for (const service of ['cloudwatch.amazonaws.com', 'events.amazonaws.com']) {
      this.key.addToResourcePolicy(
        new iam.PolicyStatement({
          sid: `Allow${service.split('.')[0]}ToEncryptMessages`,
          principals: [new iam.ServicePrincipal(service)],
          actions: ['kms:Decrypt', 'kms:GenerateDataKey'],
          // In a key policy `*` means this key.
          resources: ['*'],
          conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
        }),
      );
    }
  }
}
