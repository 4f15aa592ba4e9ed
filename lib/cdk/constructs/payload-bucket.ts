import { Duration, Stack, Validations, type RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';

export interface BucketAccess {
  /** GetObject (and ListBucket, so a missing key is a 404 rather than a 403). */
  readonly read?: boolean;
  /** PutObject. Content-addressed keys make a repeated put harmless; nothing deletes. */
  readonly write?: boolean;
  /**
   * GetObject on the uploads only (`attachments/*`, and ListBucket so a missing upload is a 404):
   * for a function that starts runs and checks the attachments their input refers to, without
   * reading any run's payloads. Implied by `read`.
   */
  readonly readAttachments?: boolean;
}

export interface PayloadBucketProps {
  readonly key: kms.IKey;
  readonly removalPolicy: RemovalPolicy;
  /** Payloads expire this many days after their last write. */
  readonly expirationDays: number;
  /**
   * Off by default: objects are immutable and content-addressed (a rewrite has the same bytes),
   * retention is by lifecycle expiry, and versioning would keep expired payloads as noncurrent
   * versions. When on, noncurrent versions expire after 7 days.
   */
  readonly versioned?: boolean;
}

/** Large payloads and snapshots that the payload codec moves out of DynamoDB items. */
export class PayloadBucket extends Construct {
  readonly bucket: s3.Bucket;
  readonly accessLogs: s3.Bucket;

  constructor(scope: Construct, id: string, props: PayloadBucketProps) {
    super(scope, id);
    // Server access logs are granted by a bucket policy, never the legacy log-delivery ACL (which
    // needs ObjectWriter ownership). Set here, so it holds in any app, whatever its cdk.json says.
    this.node.setContext('@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy', true);
    this.accessLogs = new s3.Bucket(this, 'AccessLogs', {
      // Server access log delivery supports SSE-S3 only on the target bucket.
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      // No autoDeleteObjects: it adds a custom-resource Lambda with broad S3 rights; an
      // operator who destroys the stack empties the buckets first (docs/guides/deploying.md, Tear down).
      removalPolicy: props.removalPolicy,
      lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(props.expirationDays) }],
    });
    this.bucket = new s3.Bucket(this, 'Bucket', {
      encryption: s3.BucketEncryption.KMS,
      encryptionKey: props.key,
      // One KMS call per bucket key period instead of one per object.
      bucketKeyEnabled: true,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      versioned: props.versioned ?? false,
      serverAccessLogsBucket: this.accessLogs,
      serverAccessLogsPrefix: 'payloads/',
      removalPolicy: props.removalPolicy,
      lifecycleRules: [
        {
          id: 'expire-payloads-with-their-events',
          expiration: Duration.days(props.expirationDays),
          abortIncompleteMultipartUploadAfter: Duration.days(1),
          ...(props.versioned ? { noncurrentVersionExpiration: Duration.days(7) } : {}),
        },
      ],
    });
  }

  get bucketName(): string {
    return this.bucket.bucketName;
  }

  /**
   * Adds exactly the statements `access` needs. Object actions need the `<bucket ARN>/*` resource;
   * that one wildcard is acknowledged for cdk-nag on `scope` (the function that gets the grant).
   * Returns the actions the grantee needs on the bucket's KMS key.
   */
  grant(grantee: iam.IGrantable, access: BucketAccess, scope: Construct): string[] {
    const objectActions = [...(access.read ? ['s3:GetObject'] : []), ...(access.write ? ['s3:PutObject'] : [])];
    const uploadsOnly = access.readAttachments === true && !access.read;
    if (objectActions.length === 0 && !uploadsOnly) return [];
    const principal = grantee.grantPrincipal;
    const stack = Stack.of(this);
    const logicalId = stack.resolve(stack.getLogicalId(this.bucket.node.defaultChild as s3.CfnBucket)) as string;
    if (objectActions.length > 0) {
      principal.addToPrincipalPolicy(new iam.PolicyStatement({ actions: objectActions, resources: [this.bucket.arnForObjects('*')] }));
      Validations.of(scope).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${logicalId}.Arn>/*]`,
        reason: 'Object-level S3 actions need an object ARN; the grant covers only objects of the Logbook payload bucket, which holds nothing else.',
      });
    }
    if (uploadsOnly) {
      principal.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [this.bucket.arnForObjects('attachments/*')] }));
      Validations.of(scope).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${logicalId}.Arn>/attachments/*]`,
        reason: 'Reads the uploads (attachments) a run input refers to: object ARNs under the one prefix that holds them, no run payloads.',
      });
    }
    if (access.read || uploadsOnly) {
      principal.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [this.bucket.bucketArn] }));
    }
    // Readers decrypt; writers make data keys (and decrypt, which multipart uploads need).
    return access.write ? ['kms:Decrypt', 'kms:GenerateDataKey'] : ['kms:Decrypt'];
  }
}
