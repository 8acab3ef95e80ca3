/**
 * AWS SDK clients for a connection (real AWS, LocalStack, or the embedded local stack), and the
 * one function that turns environment variables into a connection.
 *
 * Nothing here reads process.env: `connectionFromEnv` receives the environment as an argument
 * from an edge (CLI, Lambda handler, test setup).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KinesisClient } from '@aws-sdk/client-kinesis';
import { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { AwsConnection, AwsCredentials, AwsEndpoints } from './config';
import { attachDynamoDbMeter, attachS3Meter, RequestMeter } from './request/meter';

/**
 * Attempts per request the SDK makes itself: one. `withRetry` (lib/aws/request/retry.ts) is the
 * project's only retry layer, with one retriable-error decision per service; an SDK retrying
 * underneath it would multiply the attempts (the SDK's old 5 under each of ours: up to 50 HTTP
 * requests for one call) and hide them from the request counters, which count one per `send`.
 */
const MAX_ATTEMPTS = 1;

export interface AwsClients {
  readonly s3: S3Client;
  readonly dynamodb: DynamoDBClient;
  readonly kinesis: KinesisClient;
  /** For notification mode's queue (lib/aws/sqs/). */
  readonly sqs: SQSClient;
  /**
   * What the S3 and DynamoDB clients consumed since they were built: DynamoDB read/write units
   * and requests, S3 requests by price class (lib/aws/request/meter.ts). A run's figures are
   * `meter.since(snapshotAtItsStart)`.
   */
  readonly meter: RequestMeter;
  /** Closes the clients created so far (their sockets); the object must not be used afterwards. */
  destroy(): void;
}

/**
 * Clients for `conn`. Each client is built on first access, so creating the object is cheap and
 * a caller that only touches S3 never builds the DynamoDB or Kinesis client.
 */
export function createClients(conn: AwsConnection): AwsClients {
  let s3: S3Client | undefined;
  let dynamodb: DynamoDBClient | undefined;
  let kinesis: KinesisClient | undefined;
  let sqs: SQSClient | undefined;
  const meter = new RequestMeter();
  return {
    meter,
    get s3() {
      return (s3 ??= createS3Client(conn, meter));
    },
    get dynamodb() {
      return (dynamodb ??= createDynamoDbClient(conn, meter));
    },
    get kinesis() {
      return (kinesis ??= createKinesisClient(conn));
    },
    get sqs() {
      return (sqs ??= createSqsClient(conn));
    },
    destroy() {
      s3?.destroy();
      dynamodb?.destroy();
      kinesis?.destroy();
      sqs?.destroy();
    },
  };
}

/** An S3 client for `conn`; its requests are counted by price class in `meter`. */
export function createS3Client(conn: AwsConnection, meter: RequestMeter = new RequestMeter()): S3Client {
  const endpoint = conn.endpoints?.s3;
  const client = new S3Client({
    ...commonConfig(conn, endpoint, conn.s3Credentials ?? conn.credentials),
    forcePathStyle: conn.s3ForcePathStyle ?? false,
    // Emulators (s3rver in particular) predate S3's flexible checksums: the SDK's default since
    // 2025 (a CRC32 on every upload, sent as an aws-chunked trailer) is not understood there.
    // Only compute checksums where the operation requires one.
    ...(endpoint ? { requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' } : {}),
  });
  attachS3Meter(client, meter);
  return client;
}

/**
 * A DynamoDB client for `conn`. Every command that accepts it is sent with
 * `ReturnConsumedCapacity: 'TOTAL'` (free; the response then says what it was billed), and the
 * units go to `meter`.
 */
export function createDynamoDbClient(conn: AwsConnection, meter: RequestMeter = new RequestMeter()): DynamoDBClient {
  const client = new DynamoDBClient(commonConfig(conn, conn.endpoints?.dynamodb, conn.credentials));
  attachDynamoDbMeter(client, meter);
  return client;
}

function createKinesisClient(conn: AwsConnection): KinesisClient {
  const endpoint = conn.endpoints?.kinesis;
  return new KinesisClient({
    ...commonConfig(conn, endpoint, conn.credentials),
    // The Kinesis client speaks HTTP/2 by default (for SubscribeToShard). Over a plain-http
    // emulator endpoint that means cleartext HTTP/2, which kinesis-mock answers with protocol
    // errors (PutRecord fails with ERR_HTTP2_ERROR): use HTTP/1.1 there, as the other clients do.
    // Loaded only for an emulator endpoint, so the Lambda bundle (real AWS) does not carry it.
    ...(endpoint ? { requestHandler: http1Handler() } : {}),
  });
}

/** Loaded on first use: only notification mode talks to SQS, and a cold start need not load its client. */
function createSqsClient(conn: AwsConnection): SQSClient {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { SQSClient: Client } = require('@aws-sdk/client-sqs') as typeof import('@aws-sdk/client-sqs');
  return new Client(commonConfig(conn, conn.endpoints?.sqs, conn.credentials));
}

/** What every client shares: the region, one SDK attempt, the endpoint when one is set, the credentials when given. */
function commonConfig(conn: AwsConnection, endpoint: string | undefined, creds: AwsCredentials | undefined) {
  return {
    region: conn.region,
    maxAttempts: MAX_ATTEMPTS,
    ...(endpoint ? { endpoint } : {}),
    // Absent: the SDK's default provider chain (Lambda role, profile, SSO, ...).
    ...(creds ? { credentials: { accessKeyId: creds.accessKeyId, secretAccessKey: creds.secretAccessKey } } : {}),
  };
}

function http1Handler(): import('@smithy/node-http-handler').NodeHttpHandler {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { NodeHttpHandler } = require('@smithy/node-http-handler') as typeof import('@smithy/node-http-handler');
  return new NodeHttpHandler();
}

/** Credentials LocalStack accepts when the environment sets none. */
const LOCALSTACK_CREDENTIALS: AwsCredentials = { accessKeyId: 'test', secretAccessKey: 'test' };

/**
 * The connection the environment asks for, or null when it names no endpoint (meaning: real AWS
 * through the SDK's default chain, or the caller starts the embedded local stack).
 *
 * Honoured variables (the AWS SDKs' own names):
 * - `AWS_ENDPOINT_URL`: one endpoint for every service (LocalStack: http://localhost:4566);
 * - `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL_DYNAMODB`, `AWS_ENDPOINT_URL_KINESIS`,
 *   `AWS_ENDPOINT_URL_SQS`: per service, overriding the former;
 * - `AWS_REGION` / `AWS_DEFAULT_REGION` (default us-east-1);
 * - `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY`; when absent: test/test (which LocalStack
 *   accepts) if every service has an endpoint, else the SDK's default chain (a service left on
 *   real AWS needs real credentials).
 *
 * S3 is addressed path-style: LocalStack's virtual-host style needs wildcard DNS that a plain
 * `localhost` endpoint does not have.
 */
export function connectionFromEnv(env: NodeJS.ProcessEnv): AwsConnection | null {
  const shared = nonEmpty(env.AWS_ENDPOINT_URL);
  const endpoints: AwsEndpoints = {
    s3: nonEmpty(env.AWS_ENDPOINT_URL_S3) ?? shared,
    dynamodb: nonEmpty(env.AWS_ENDPOINT_URL_DYNAMODB) ?? shared,
    kinesis: nonEmpty(env.AWS_ENDPOINT_URL_KINESIS) ?? shared,
    sqs: nonEmpty(env.AWS_ENDPOINT_URL_SQS) ?? shared,
  };
  if (!endpoints.s3 && !endpoints.dynamodb && !endpoints.kinesis) return null;
  const accessKeyId = nonEmpty(env.AWS_ACCESS_KEY_ID);
  const secretAccessKey = nonEmpty(env.AWS_SECRET_ACCESS_KEY);
  return {
    region: nonEmpty(env.AWS_REGION) ?? nonEmpty(env.AWS_DEFAULT_REGION) ?? 'us-east-1',
    endpoints,
    credentials:
      accessKeyId && secretAccessKey
        ? { accessKeyId, secretAccessKey }
        : endpoints.s3 && endpoints.dynamodb && endpoints.kinesis
          ? { ...LOCALSTACK_CREDENTIALS }
          : undefined,
    s3ForcePathStyle: true,
  };
}

function nonEmpty(v: string | undefined): string | undefined {
  const t = v?.trim();
  return t ? t : undefined;
}
