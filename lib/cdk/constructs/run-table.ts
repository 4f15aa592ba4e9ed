import type { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { KEY_ATTRIBUTE_TYPES, TABLE } from '../../adapters/aws/table-definition.js';

export type IndexName = (typeof TABLE.gsi)[keyof typeof TABLE.gsi]['name'];

/**
 * What one function may do with the table. Each flag maps to exact actions on exact ARNs; there
 * is no Scan, no Batch* and no Transact* (the design uses single-item conditional writes only).
 */
export interface TableAccess {
  /** GetItem + Query on the base table (consistent reads of heads and event tails). */
  readonly read?: boolean;
  /** PutItem + UpdateItem on the base table (conditional appends, head updates, inbox items). */
  readonly write?: boolean;
  /** UpdateItem only (the sweeper records its wake-ups on the heads, RunHeads.markSwept). */
  readonly update?: boolean;
  /**
   * DeleteItem: inbox items only, in practice (the worker removes an item once ingested; the API
   * rolls back an item whose run does not exist). Events and heads leave by TTL.
   */
  readonly delete?: boolean;
  /** Query on these GSIs only. */
  readonly queryIndexes?: readonly IndexName[];
}

export interface RunTableProps {
  readonly key: kms.IKey;
  readonly removalPolicy: RemovalPolicy;
  readonly deletionProtection: boolean;
}

function attribute(name: string): dynamodb.Attribute {
  const type = KEY_ATTRIBUTE_TYPES[name];
  if (type === undefined) throw new Error(`table-definition has no attribute type for key ${name}`);
  return { name, type: type === 'N' ? dynamodb.AttributeType.NUMBER : dynamodb.AttributeType.STRING };
}

/** The run log, heads and inbox items: one table, shaped by lib/adapters/aws/table-definition.ts. */
export class RunTable extends Construct {
  readonly table: dynamodb.Table;

  constructor(scope: Construct, id: string, props: RunTableProps) {
    super(scope, id);
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: attribute(TABLE.partitionKey),
      sortKey: attribute(TABLE.sortKey),
      // Pay per step: nothing is billed while no run is stepping.
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED,
      encryptionKey: props.key,
      timeToLiveAttribute: TABLE.ttlAttribute,
      deletionProtection: props.deletionProtection,
      removalPolicy: props.removalPolicy,
    });
    for (const gsi of Object.values(TABLE.gsi)) {
      this.table.addGlobalSecondaryIndex({
        indexName: gsi.name,
        partitionKey: attribute(gsi.partitionKey),
        sortKey: attribute(gsi.sortKey),
        // Keys only (see TABLE.gsiProjection): a head write that changes no index key writes no index.
        projectionType: dynamodb.ProjectionType.KEYS_ONLY,
      });
    }
  }

  get tableName(): string {
    return this.table.tableName;
  }

  indexArn(name: IndexName): string {
    return `${this.table.tableArn}/index/${name}`;
  }

  /**
   * Adds exactly the table and index statements `access` needs to the grantee's policy and
   * returns the actions it needs on the table's KMS key (the caller merges those per role).
   */
  grant(grantee: iam.IGrantable, access: TableAccess): string[] {
    const tableActions = [
      ...(access.read ? ['dynamodb:GetItem', 'dynamodb:Query'] : []),
      ...(access.write ? ['dynamodb:PutItem', 'dynamodb:UpdateItem'] : access.update ? ['dynamodb:UpdateItem'] : []),
      ...(access.delete ? ['dynamodb:DeleteItem'] : []),
    ];
    if (tableActions.length > 0) {
      grantee.grantPrincipal.addToPrincipalPolicy(new iam.PolicyStatement({ actions: tableActions, resources: [this.table.tableArn] }));
    }
    const indexes = access.queryIndexes ?? [];
    if (indexes.length > 0) {
      grantee.grantPrincipal.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['dynamodb:Query'], resources: indexes.map((i) => this.indexArn(i)) }));
    }
    if (tableActions.length === 0 && indexes.length === 0) return [];
    // DynamoDB uses the table's key under the caller's identity. Exact actions: CDK's own grants
    // add the GenerateDataKey* and ReEncrypt* wildcards, which a Logbook role never needs.
    return access.write || access.update || access.delete
      ? ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey']
      : ['kms:Decrypt', 'kms:DescribeKey'];
  }
}
