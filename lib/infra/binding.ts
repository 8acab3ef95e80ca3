/**
 * What the pipeline's sources and sinks share with the construct: the IAM actions each adapter
 * needs, the grant of an S3 location, what a source or sink receives when it binds itself, and
 * the construct's typed validation error.
 */
import { type RemovalPolicy, aws_iam as iam, type aws_s3 as s3 } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { InvalidOptionError } from '../engine/errors';
import type { QueryPlan } from '../engine/plan/types';

/**
 * What the adapters in lib/aws send, as IAM actions, per resource. test/infra checks that every
 * SDK command in lib/aws maps to an action granted here, so a new call cannot ship ungranted.
 */
export const GRANTED_ACTIONS = {
  /** S3CheckpointStore (GET/PUT entries, DeleteObjects when purging) on `<checkpointPrefix>/*`. */
  checkpointObjects: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'],
  /**
   * S3ShuffleStore (a partitioned run's hand-offs between tasks, with `parallelism`): PUT and GET
   * under `<checkpointPrefix>-shuffle/*`, DeleteObjects when the checkpoint's retention purges
   * old batches (after a prefix-bound ListBucket).
   */
  shuffleObjects: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'],
  /** S3LandingSource: GET each file under `<landing prefix>/*`. */
  landingObjects: ['s3:GetObject'],
  /** cleanSource (PipelineSource.s3's prop): the file's DELETE after its batch committed, on `<landing prefix>/*`. */
  cleanedObjects: ['s3:DeleteObject'],
  /** cleanSource 'archive': the copy of each file (a PUT with a copy source) under `<sourceArchiveDir>/*`. */
  archiveObjects: ['s3:PutObject'],
  /**
   * S3JsonSink (one PUT per batch, or a multipart upload past 8 MiB: its parts are authorized as
   * s3:PutObject, its abort is s3:AbortMultipartUpload) and S3FileSink (the objects, then the sink
   * log entry) under `<sink prefix>/*`; GET: a replay whose write-once PUT is refused (412) reads
   * what is stored to compare it with what it would write (without it, every such replay on AWS
   * failed with AccessDenied).
   */
  sinkObjects: ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload'],
  /** S3DeadLetterSink: PUT (a multipart upload past 8 MiB, as the JSON sink) under `<deadLetterPrefix>/*`; GET as the sink's on a replay. */
  deadLetterObjects: ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload'],
  /** ListObjectsV2, with an s3:prefix condition; on the bucket ARN. */
  list: ['s3:ListBucket'],
  /**
   * DynamoDbStateStore (GetItem, PutItem, BatchGetItem, BatchWriteItem, Query) and DynamoDbLease
   * (UpdateItem; its ConditionCheck joins a DynamoDB sink's TransactWriteItems, which IAM evaluates
   * per entry: dynamodb:ConditionCheckItem). Deletes go through BatchWriteItem.
   */
  stateTable: [
    'dynamodb:GetItem',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:BatchGetItem',
    'dynamodb:BatchWriteItem',
    'dynamodb:Query',
    'dynamodb:ConditionCheckItem',
  ],
  /**
   * DynamoDbSink: batch-ID-guarded puts in TransactWriteItems (IAM checks each entry's action:
   * PutItem), one BatchGetItem of the batch's chunk markers on a replay, Query for readers.
   */
  sinkTable: ['dynamodb:PutItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'],
  /** The Kinesis source, on the stream ARN. */
  stream: ['kinesis:DescribeStreamSummary', 'kinesis:ListShards', 'kinesis:GetShardIterator', 'kinesis:GetRecords'],
  /**
   * SqsNotificationDiscovery (an S3 source in notification mode), on its queue's ARN: the count at
   * the start, receives, DeleteMessageBatch (authorized as DeleteMessage) and
   * ChangeMessageVisibilityBatch (as ChangeMessageVisibility) to release what a run did not read.
   */
  notificationQueue: ['sqs:GetQueueAttributes', 'sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility'],
} as const;

/** What the pipeline hands a source or sink when it binds: its name and what it creates for them. */
export interface PipelineDefaults {
  /** Names the default prefixes (`landing/<pipelineName>`, `output/<pipelineName>`). */
  readonly pipelineName: string;
  /** For anything the source or sink creates (a stream). */
  readonly removalPolicy: RemovalPolicy;
  /** The pipeline's own bucket, for a location given no bucket; created on first use. */
  pipelineBucket(): s3.IBucket;
  /** The run's Lambda timeout: a notification queue's visibility timeout must outlast it. */
  readonly lambdaTimeoutSeconds: number;
  /** Whether runs are partitioned (`parallelism`, Step Functions), which notification mode does not support. */
  readonly partitioned: boolean;
  /** The query's plan when the construct has it (`query`, or a .sql entry): a sink refuses at synth an output it could not write. */
  readonly plan?: QueryPlan;
}

/** A bucket and a key prefix (without slashes at either end) in it. */
export interface S3Place {
  readonly bucket: s3.IBucket;
  readonly prefix: string;
}

/** An S3 location the function uses, with what it may do there. */
export interface S3Grant extends S3Place {
  readonly objectActions: readonly string[];
  /** Also s3:ListBucket on the bucket, for keys under the prefix. */
  readonly list: boolean;
  /** KMS actions on the bucket's key, when it has one. */
  readonly kms: readonly string[];
}

/**
 *  objects:  <actions> on arn:aws:s3:::<bucket>/<prefix>/*
 *  list:     s3:ListBucket on arn:aws:s3:::<bucket>, only for keys under <prefix>/
 */
export function grantS3(role: iam.IRole, g: S3Grant): void {
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: [...g.objectActions], resources: [g.bucket.arnForObjects(`${g.prefix}/*`)] }));
  if (g.list) {
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: [...GRANTED_ACTIONS.list],
        resources: [g.bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [`${g.prefix}/*`] } },
      }),
    );
  }
  if (g.bucket.encryptionKey && g.kms.length > 0) g.bucket.encryptionKey.grant(role, ...g.kms);
}

/**
 * A prop or factory argument that cannot work: `where` names it (a construct path, or the factory
 * when no construct exists yet); the message gives the value, the rule and the fix.
 */
export function invalid(where: Construct | string, message: string, details: Record<string, unknown> = {}): never {
  const at = typeof where === 'string' ? where : `AvailableNowPipeline ${where.node.path}:`;
  throw new InvalidOptionError(`${at} ${message}`, { details });
}

/** `value` without slashes at either end; a non-empty key prefix without wildcards or empty segments. */
export function cleanPrefix(where: Construct | string, name: string, value: string): string {
  const p = value.replace(/^\/+|\/+$/g, '');
  if (p === '' || /[*?]/.test(p) || p.includes('//')) {
    invalid(where, `${name} ${JSON.stringify(value)} must be a non-empty key prefix without wildcards or empty segments, e.g. "checkpoints/orders"`, {
      [name]: value,
    });
  }
  return p;
}

/** `value` if it is a whole number in [min, max]. */
export function wholeNumber(where: Construct | string, name: string, value: number, min: number, max: number, fix: string): number {
  if (!Number.isInteger(value) || value < min || value > max)
    invalid(where, `${name} (${value}) must be a whole number from ${min} to ${max}: ${fix}`, { [name]: value });
  return value;
}
