/**
 * `sluice example seed`: the reference windowed-totals example as three scheduled availableNow
 * runs (`npm start`), from an S3 landing prefix or a Kinesis stream, on the embedded local stack
 * (or AWS_ENDPOINT_URL, or AWS with --aws). With `--discovery notifications` the S3 source finds
 * the files from S3's event notifications through an SQS queue (notification mode) instead of
 * listing the prefix; the runs and their rows are the same.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { createClients } from '../lib/aws/clients';
import { buildExecutor, type PipelineConfig } from '../lib/aws/pipeline';
import { ensureBucket, ensureNotificationQueue, ensureStateTable } from '../lib/local/resources';
import { SEED_FILES, showTotals, windowedTotals } from '../examples/windowed-totals';
import { connect, type Service } from './commands';
import { EXIT_CODES } from './exit-codes';

/** How the example's S3 source finds new files (the query's `discovery` option). */
export type ExampleDiscovery = 'list' | 'notifications';

export async function exampleSeed(aws: boolean | undefined, dataDir?: string, discovery: ExampleDiscovery = 'list'): Promise<number> {
  const notifications = discovery === 'notifications';
  const services: Service[] = notifications ? ['dynamodb', 's3', 'sqs'] : ['dynamodb', 's3'];
  const { conn, stack } = await connect(aws, services, dataDir);
  try {
    const clients = createClients(conn);
    const bucket = 'sluice-example';
    const table = 'sluice-example-state';
    await Promise.all([ensureBucket(clients.s3, bucket), ensureStateTable(clients.dynamodb, table)]);
    const runId = Date.now().toString(36);
    console.log(
      `sluice: the windowed-totals example (reference/000), three scheduled availableNow runs${notifications ? ', the S3 source in notification mode' : ''}`,
    );
    console.log('query: 10-minute tumbling windows on event_time, sum(amount) as total, count(*) as events, watermark 10 minutes\n');
    for (const mode of ['append', 'update'] as const) {
      const plan = windowedTotals({ outputMode: mode, discovery });
      const base = `${runId}/${mode}`;
      // Notification mode: the queue S3 notifies of the files put under the landing prefix, made before the first file is put.
      const queueUrl = notifications ? await exampleQueue(clients, bucket, base, `sluice-example-${runId}-${mode}`) : undefined;
      const cfg: PipelineConfig = {
        checkpoint: { bucket, prefix: `${base}/checkpoint` },
        stateTable: table,
        source: { kind: 's3', bucket, prefix: `${base}/landing` },
        sink: { kind: 's3', bucket, prefix: `${base}/sink` },
        ...(queueUrl ? { notificationQueueUrl: queueUrl } : {}),
      };
      console.log(
        `${mode} mode  (landing s3://${bucket}/${base}/landing, checkpoint s3://${bucket}/${base}/checkpoint${queueUrl ? `, notifications ${queueUrl}` : ''})`,
      );
      for (let i = 0; i < SEED_FILES.length; i++) {
        const f = SEED_FILES[i];
        await clients.s3.send(
          new PutObjectCommand({ Bucket: bucket, Key: `${base}/landing/${f.name}`, Body: f.rows.map((r) => JSON.stringify(r)).join('\n') }),
        );
        // S3 notifies a moment after the write: the scheduled run comes once the file's message is in
        // the queue (beside S3's test event before the first run, which that run deletes).
        if (queueUrl) await waitForMessages(clients.sqs, queueUrl, i === 0 ? 2 : 1, `the notification of ${f.name}`);
        const report = await buildExecutor(conn, plan, cfg).executor.run({ collectRows: true });
        const shown = showTotals(report.batches.flatMap((b) => b.rows));
        const dropped = report.droppedByWatermark ? `, ${report.droppedByWatermark} late row dropped` : '';
        console.log(
          `  run ${i + 1}: dropped ${f.name} -> batches ${report.batches.map((b) => b.batchId + (b.noData ? ' (no data)' : '')).join(', ')}; emitted [${shown}]; watermark ${report.watermark}${dropped}`,
        );
      }
      console.log('');
    }
    console.log('Expected (Spark): append run 1 [], run 2 [(12:00, 12:10, 19.0)], run 3 [(12:10, 12:20, 7.0), (12:20, 12:30, 3.0)];');
    console.log(
      '                  update run 1 [(12:00, 12:10, 15.0), (12:10, 12:20, 7.0)], run 2 [(12:00, 12:10, 19.0), (12:20, 12:30, 3.0)], run 3 [(12:40, 12:50, 1.0)]',
    );
    // From source (this repository) the CLI is `npm run sluice --`; from the package, `npx sluice`.
    const cli = __filename.endsWith('.ts') ? 'npm run sluice --' : 'npx sluice';
    if (stack && dataDir)
      console.log(
        `\nThe runs, batch by batch: ${cli} status --checkpoint s3://${bucket}/${runId}/append/checkpoint${dataDir === '.sluice/local' ? '' : ` --data-dir ${dataDir}`}`,
      );
    return EXIT_CODES.ok;
  } finally {
    await stack?.stop();
  }
}

/** The example's notification queue, its dead-letter queue and the bucket's notification; S3's test event is in the queue. */
async function exampleQueue(clients: ReturnType<typeof createClients>, bucket: string, base: string, name: string): Promise<string> {
  const { queueUrl } = await ensureNotificationQueue(clients, { bucket, prefix: `${base}/landing`, name });
  // S3's test event, sent when the notification is saved: waited for, so that it cannot land between a file's message and its run.
  await waitForMessages(clients.sqs, queueUrl, 1, "S3's test event");
  return queueUrl;
}

/** Waits (at most 20 s) until the queue holds at least `n` visible messages. */
async function waitForMessages(sqs: SQSClient, queueUrl: string, n: number, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const res = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }));
    if (Number(res.Attributes?.ApproximateNumberOfMessages ?? 0) >= n) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not reach ${queueUrl} within 20 s: check the bucket's event notification to that queue`);
}

export async function exampleSeedKinesis(aws: boolean | undefined, dataDir?: string): Promise<number> {
  const { conn, stack } = await connect(aws, ['dynamodb', 's3', 'kinesis'], dataDir);
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { runKinesisExample }: typeof import('../lib/local/kinesis-demo') = require('../lib/local/kinesis-demo');
    await runKinesisExample(conn);
    return EXIT_CODES.ok;
  } finally {
    await stack?.stop();
  }
}
