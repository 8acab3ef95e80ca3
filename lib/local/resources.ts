/**
 * Creates what a query needs (bucket, state table, stream, notification queue), idempotently: calling these on
 * existing resources changes nothing. Used for the local stack and LocalStack; on AWS the
 * AvailableNowPipeline construct creates the same resources.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  type TableDescription,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateStreamCommand, DescribeStreamSummaryCommand, type KinesisClient } from '@aws-sdk/client-kinesis';
import {
  type BucketLocationConstraint,
  CreateBucketCommand,
  HeadBucketCommand,
  PutBucketNotificationConfigurationCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { errorName } from '../aws/request/errors';
import { InvalidOptionError } from '../engine/errors';

/** The state table's key schema (also used by the lease, the sinks and the CDK construct). */
export const STATE_TABLE_PARTITION_KEY = 'pk';
export const STATE_TABLE_SORT_KEY = 'sk';
/** Epoch seconds after which DynamoDB may delete an item (where TTL is enabled). */
const STATE_TABLE_TTL_ATTRIBUTE = 'ttl';

export interface WaitOptions {
  /** How long to wait for the resource to become ACTIVE (default 5 minutes: AWS can be slow). */
  readonly timeoutMs?: number;
}

const DEFAULT_WAIT_MS = 5 * 60_000;

/** Creates the bucket unless this account can already use it. */
export async function ensureBucket(s3: S3Client, name: string): Promise<void> {
  const region = await s3.config.region();
  try {
    await s3.send(
      new CreateBucketCommand({
        Bucket: name,
        // us-east-1 is the one region that must not be named.
        ...(region && region !== 'us-east-1' ? { CreateBucketConfiguration: { LocationConstraint: region as BucketLocationConstraint } } : {}),
      }),
    );
  } catch (e) {
    const code = errorName(e);
    if (code === 'BucketAlreadyOwnedByYou') return;
    if (code !== 'BucketAlreadyExists') throw e;
    // AWS: another account owns the name. Emulators (s3rver) answer this for our own bucket
    // too, so the bucket is fine when we can reach it.
    try {
      await s3.send(new HeadBucketCommand({ Bucket: name }));
    } catch {
      throw new Error(`bucket ${name} exists but belongs to someone else: choose another bucket name`, { cause: e });
    }
  }
}

/**
 * Creates the state table (pk S, sk S, on-demand) unless it exists, waits until it is ACTIVE,
 * and enables TTL on `ttl`. Throws when an existing table has another key schema.
 */
export async function ensureStateTable(dynamodb: DynamoDBClient, name: string, opts: WaitOptions = {}): Promise<void> {
  let table = await describeTable(dynamodb, name);
  if (!table) {
    try {
      await dynamodb.send(
        new CreateTableCommand({
          TableName: name,
          AttributeDefinitions: [
            { AttributeName: STATE_TABLE_PARTITION_KEY, AttributeType: 'S' },
            { AttributeName: STATE_TABLE_SORT_KEY, AttributeType: 'S' },
          ],
          KeySchema: [
            { AttributeName: STATE_TABLE_PARTITION_KEY, KeyType: 'HASH' },
            { AttributeName: STATE_TABLE_SORT_KEY, KeyType: 'RANGE' },
          ],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
    } catch (e) {
      // Someone else created it between our describe and create: fine, wait for it below.
      if (errorName(e) !== 'ResourceInUseException') throw e;
    }
  }
  table = await waitFor(`DynamoDB table ${name} to become ACTIVE`, opts.timeoutMs ?? DEFAULT_WAIT_MS, async () => {
    const t = await describeTable(dynamodb, name);
    return t?.TableStatus === 'ACTIVE' ? t : undefined;
  });
  checkStateTableKeys(name, table);
  await enableTtl(dynamodb, name);
}

async function describeTable(dynamodb: DynamoDBClient, name: string): Promise<TableDescription | undefined> {
  try {
    return (await dynamodb.send(new DescribeTableCommand({ TableName: name }))).Table;
  } catch (e) {
    if (errorName(e) === 'ResourceNotFoundException') return undefined;
    throw e;
  }
}

function checkStateTableKeys(name: string, table: TableDescription): void {
  const keys = table.KeySchema ?? [];
  const hash = keys.find((k) => k.KeyType === 'HASH')?.AttributeName;
  const range = keys.find((k) => k.KeyType === 'RANGE')?.AttributeName;
  if (hash !== STATE_TABLE_PARTITION_KEY || range !== STATE_TABLE_SORT_KEY) {
    throw new Error(
      `table ${name} exists with key schema (${hash ?? '-'}, ${range ?? '-'}), not the state table's ` +
        `(${STATE_TABLE_PARTITION_KEY} S, ${STATE_TABLE_SORT_KEY} S): use another table name or delete the table`,
    );
  }
}

async function enableTtl(dynamodb: DynamoDBClient, name: string): Promise<void> {
  try {
    const current = await dynamodb.send(new DescribeTimeToLiveCommand({ TableName: name }));
    const status = current.TimeToLiveDescription?.TimeToLiveStatus;
    if (status === 'ENABLED' || status === 'ENABLING') return;
    await dynamodb.send(new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: { Enabled: true, AttributeName: STATE_TABLE_TTL_ATTRIBUTE } }));
  } catch (e) {
    // TTL only reclaims space; an emulator without it (or a concurrent enable, which DynamoDB
    // rejects with "TimeToLive is already enabled") does not stop the table from working.
    const code = errorName(e);
    if (code === 'UnknownOperationException' || code === 'ValidationException' || code === 'NotImplemented') return;
    throw e;
  }
}

/**
 * Creates the stream (provisioned, `shardCount` shards) unless it exists, and waits until it is
 * ACTIVE. An existing stream is kept with whatever shard count it has.
 */
export async function ensureStream(kinesis: KinesisClient, name: string, shardCount: number, opts: WaitOptions = {}): Promise<void> {
  if (!Number.isInteger(shardCount) || shardCount < 1)
    throw new InvalidOptionError(`ensureStream ${name} shardCount (${shardCount}) must be a positive integer: pass e.g. 2`);
  if ((await streamStatus(kinesis, name)) === undefined) {
    try {
      await kinesis.send(new CreateStreamCommand({ StreamName: name, ShardCount: shardCount }));
    } catch (e) {
      if (errorName(e) !== 'ResourceInUseException') throw e;
    }
  }
  await waitFor(`Kinesis stream ${name} to become ACTIVE`, opts.timeoutMs ?? DEFAULT_WAIT_MS, async () => {
    // DELETING: someone is removing it; keep waiting and let the timeout report it.
    return (await streamStatus(kinesis, name)) === 'ACTIVE' ? true : undefined;
  });
}

async function streamStatus(kinesis: KinesisClient, name: string): Promise<string | undefined> {
  try {
    const out = await kinesis.send(new DescribeStreamSummaryCommand({ StreamName: name }));
    return out.StreamDescriptionSummary?.StreamStatus;
  } catch (e) {
    if (errorName(e) === 'ResourceNotFoundException') return undefined;
    throw e;
  }
}

/**
 * Polls `check` until it returns a value. Starts fast (emulators are ready within milliseconds)
 * and backs off to one poll per second (AWS takes seconds to tens of seconds).
 */
async function waitFor<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let delay = 20;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}: check that the endpoint is up, or raise timeoutMs`);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 1_000);
  }
}

/** What ensureNotificationQueue made: the queue the discovery reads, and its dead-letter queue. */
export interface NotificationQueue {
  readonly queueUrl: string;
  readonly deadLetterQueueUrl: string;
}

/**
 * Notification mode's resources, as the construct makes them on AWS: a queue `name` with a
 * dead-letter queue `<name>-dlq` (after `maxReceiveCount` receives, default 10), and the bucket's
 * notification of `s3:ObjectCreated:*` under `<prefix>/` to the queue. It replaces the bucket's
 * notification configuration (the local stack's S3 keeps one per bucket; on LocalStack it is the
 * bucket's whole configuration). Calling it again changes nothing.
 */
export async function ensureNotificationQueue(
  clients: { readonly s3: S3Client; readonly sqs: SQSClient },
  opts: {
    readonly bucket: string;
    readonly prefix: string;
    readonly name: string;
    readonly visibilityTimeoutSeconds?: number;
    readonly maxReceiveCount?: number;
  },
): Promise<NotificationQueue> {
  const { sqs, s3 } = clients;
  const arnOf = async (queueUrl: string) =>
    (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }))).Attributes?.QueueArn ?? '';
  const deadLetterQueueUrl = (
    await sqs.send(new CreateQueueCommand({ QueueName: `${opts.name}-dlq`, Attributes: { MessageRetentionPeriod: String(14 * 86_400) } }))
  ).QueueUrl!;
  const queueUrl = (
    await sqs.send(
      new CreateQueueCommand({
        QueueName: opts.name,
        Attributes: {
          VisibilityTimeout: String(opts.visibilityTimeoutSeconds ?? 960),
          MessageRetentionPeriod: String(14 * 86_400),
          RedrivePolicy: JSON.stringify({ deadLetterTargetArn: await arnOf(deadLetterQueueUrl), maxReceiveCount: opts.maxReceiveCount ?? 10 }),
        },
      }),
    )
  ).QueueUrl!;
  const prefix = opts.prefix.replace(/^\/+|\/+$/g, '');
  await s3.send(
    new PutBucketNotificationConfigurationCommand({
      Bucket: opts.bucket,
      NotificationConfiguration: {
        QueueConfigurations: [
          {
            Id: 'sluice-landing',
            QueueArn: await arnOf(queueUrl),
            Events: ['s3:ObjectCreated:*'],
            ...(prefix ? { Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: `${prefix}/` }] } } } : {}),
          },
        ],
      },
    }),
  );
  return { queueUrl, deadLetterQueueUrl };
}
