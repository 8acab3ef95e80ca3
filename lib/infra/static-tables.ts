/**
 * The static tables a query joins (`staticTable.s3(...)`, `staticTable.dynamodb(...)` in the
 * query): the construct cannot see the query (it lives in the Lambda's entry module), so the
 * tables are named here too, and each grants the role what its adapter sends, nothing more:
 *
 *     staticTables: [PipelineStaticTable.s3(refBucket, 'reference/products.csv'),
 *                    PipelineStaticTable.dynamodb(customers)]
 *
 * S3StaticTable lists the objects under the URI and GETs each one; DynamoDbStaticTable sends
 * BatchGetItem for the keys of each batch.
 */
import { type aws_dynamodb as dynamodb, aws_iam as iam, type aws_s3 as s3 } from 'aws-cdk-lib';
import { invalid } from './binding';

export abstract class PipelineStaticTable {
  /** Objects at or under `keyOrPrefix` of `bucket` (JSON lines or CSV), read once per run. */
  static s3(bucket: s3.IBucket, keyOrPrefix: string): PipelineStaticTable {
    if (!bucket) invalid('PipelineStaticTable.s3', 'needs the bucket that holds the table, e.g. s3.Bucket.fromBucketName(this, "Ref", "my-reference-data")');
    const key = (keyOrPrefix ?? '').replace(/^\/+/, '');
    if (!key || /[*?]/.test(key))
      invalid(
        'PipelineStaticTable.s3',
        `key or prefix ${JSON.stringify(keyOrPrefix)} must name the table's object(s) without wildcards, e.g. 'reference/products.csv' or 'reference/products/'`,
      );
    return new S3StaticTable(bucket, key);
  }

  /** A DynamoDB table looked up by its key with BatchGetItem. */
  static dynamodb(table: dynamodb.ITableV2 | dynamodb.ITable): PipelineStaticTable {
    if (!table)
      invalid('PipelineStaticTable.dynamodb', 'needs the table to look keys up in, e.g. dynamodb.Table.fromTableName(this, "Customers", "customers")');
    return new DynamoDbStaticTable(table);
  }

  /** Grants `role` what the table's adapter sends. */
  abstract grant(role: iam.IRole): void;
}

class S3StaticTable extends PipelineStaticTable {
  constructor(
    private readonly bucket: s3.IBucket,
    private readonly key: string,
  ) {
    super();
  }
  grant(role: iam.IRole): void {
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [this.bucket.arnForObjects(`${this.key}*`)] }));
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [this.bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [`${this.key}*`] } },
      }),
    );
    this.bucket.encryptionKey?.grantDecrypt(role);
  }
}

class DynamoDbStaticTable extends PipelineStaticTable {
  constructor(private readonly table: dynamodb.ITableV2 | dynamodb.ITable) {
    super();
  }
  grant(role: iam.IRole): void {
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['dynamodb:BatchGetItem'], resources: [this.table.tableArn] }));
    this.table.encryptionKey?.grantDecrypt(role);
  }
}
