/**
 * How the AWS adapters reach AWS (or an emulator). Built at the edge (CLI, Lambda handler, test
 * setup) and passed down; nothing below reads process.env.
 */
export interface AwsEndpoints {
  readonly s3?: string;
  readonly dynamodb?: string;
  readonly kinesis?: string;
  readonly sqs?: string;
}

export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

export interface AwsConnection {
  readonly region: string;
  /** Per-service endpoints (embedded stack, LocalStack). Absent: real AWS. */
  readonly endpoints?: AwsEndpoints;
  /** Credentials for DynamoDB and Kinesis; absent: the SDK's default chain. */
  readonly credentials?: AwsCredentials;
  /** Credentials for S3 when they differ (s3rver accepts only S3RVER/S3RVER). */
  readonly s3Credentials?: AwsCredentials;
  /** Path-style S3 addressing (s3rver, LocalStack). */
  readonly s3ForcePathStyle?: boolean;
}
