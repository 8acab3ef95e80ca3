/**
 * `sluice example seed`: the reference windowed-totals example as three scheduled availableNow
 * runs (`npm start`), from an S3 landing prefix or a Kinesis stream, on the embedded local stack
 * (or AWS_ENDPOINT_URL, or AWS with --aws).
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { createClients } from '../lib/aws/clients';
import { buildExecutor, type PipelineConfig } from '../lib/aws/pipeline';
import { ensureBucket, ensureStateTable } from '../lib/local/resources';
import { SEED_FILES, showTotals, windowedTotals } from '../examples/windowed-totals';
import { connect } from './commands';
import { EXIT_CODES } from './exit-codes';

export async function exampleSeed(aws: boolean | undefined, dataDir?: string): Promise<number> {
  const { conn, stack } = await connect(aws, ['dynamodb', 's3'], dataDir);
  try {
    const clients = createClients(conn);
    const bucket = 'sluice-example';
    const table = 'sluice-example-state';
    await Promise.all([ensureBucket(clients.s3, bucket), ensureStateTable(clients.dynamodb, table)]);
    const runId = Date.now().toString(36);
    console.log('sluice: the windowed-totals example (reference/000), three scheduled availableNow runs');
    console.log('query: 10-minute tumbling windows on event_time, sum(amount) as total, count(*) as events, watermark 10 minutes\n');
    for (const mode of ['append', 'update'] as const) {
      const plan = windowedTotals({ outputMode: mode });
      const base = `${runId}/${mode}`;
      const cfg: PipelineConfig = {
        checkpoint: { bucket, prefix: `${base}/checkpoint` },
        stateTable: table,
        source: { kind: 's3', bucket, prefix: `${base}/landing` },
        sink: { kind: 's3', bucket, prefix: `${base}/sink` },
      };
      console.log(`${mode} mode  (landing s3://${bucket}/${base}/landing, checkpoint s3://${bucket}/${base}/checkpoint)`);
      for (let i = 0; i < SEED_FILES.length; i++) {
        const f = SEED_FILES[i];
        await clients.s3.send(
          new PutObjectCommand({ Bucket: bucket, Key: `${base}/landing/${f.name}`, Body: f.rows.map((r) => JSON.stringify(r)).join('\n') }),
        );
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
