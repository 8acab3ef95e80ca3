/**
 * The windowed-totals example (reference/000) read from a Kinesis stream: the same three
 * scheduled runs as `sluice example seed`, with each seed file put as records into a stream
 * (two shards, partition key = user) instead of dropped under a landing prefix. The output
 * lines are those of the S3 demo, so the two can be compared line by line.
 *
 * Each run builds a new executor and a new KinesisSource, as a new Lambda invocation would:
 * nothing is carried in memory from one run to the next.
 */
import type { RunReport } from '../engine/run/types';
import type { AwsConnection } from '../aws/config';
import { createClients } from '../aws/clients';
import { KinesisSource } from '../aws/kinesis/source';
import { buildExecutor, type PipelineConfig } from '../aws/pipeline';
import { SEED_FILES, showTotals, windowedTotals } from '../../examples/windowed-totals';
import { putJsonRecords } from '../conformance/kinesis';
import { ensureBucket, ensureStateTable, ensureStream } from './resources';

export interface KinesisExampleOptions {
  /** Where the lines go. @default console.log */
  readonly print?: (line: string) => void;
  /** Names the run's stream and S3 prefixes. @default base-36 time */
  readonly runId?: string;
  /** @default 'sluice-example' */
  readonly bucket?: string;
  /** @default 'sluice-example-state' */
  readonly stateTable?: string;
}

export type KinesisExampleResult = Record<'append' | 'update', RunReport[]>;

export async function runKinesisExample(conn: AwsConnection, opts: KinesisExampleOptions = {}): Promise<KinesisExampleResult> {
  const print = opts.print ?? ((line: string) => console.log(line));
  const bucket = opts.bucket ?? 'sluice-example';
  const table = opts.stateTable ?? 'sluice-example-state';
  const runId = opts.runId ?? Date.now().toString(36);
  const clients = createClients(conn);
  try {
    await Promise.all([ensureBucket(clients.s3, bucket), ensureStateTable(clients.dynamodb, table)]);
    print('sluice: the windowed-totals example (reference/000), three scheduled availableNow runs, read from Kinesis');
    print('query: 10-minute tumbling windows on event_time, sum(amount) as total, count(*) as events, watermark 10 minutes\n');
    const result: KinesisExampleResult = { append: [], update: [] };
    for (const mode of ['append', 'update'] as const) {
      const plan = windowedTotals({ outputMode: mode, source: 'kinesis' });
      const streamName = `sluice-example-${runId}-${mode}`;
      await ensureStream(clients.kinesis, streamName, 2);
      const base = `${runId}/kinesis-${mode}`;
      const cfg: PipelineConfig = {
        checkpoint: { bucket, prefix: `${base}/checkpoint` },
        stateTable: table,
        source: { kind: 'kinesis', streamName },
        sink: { kind: 's3', bucket, prefix: `${base}/sink` },
      };
      print(`${mode} mode  (stream kinesis://${streamName}, checkpoint s3://${bucket}/${base}/checkpoint)`);
      for (let i = 0; i < SEED_FILES.length; i++) {
        const f = SEED_FILES[i];
        await putJsonRecords(
          clients.kinesis,
          streamName,
          f.rows.map((row) => ({ data: row, partitionKey: String(row.user) })),
        );
        const source = new KinesisSource({ client: clients.kinesis, streamName, schema: plan.source.schema });
        const report = await buildExecutor(conn, plan, cfg, { source }).executor.run({ collectRows: true });
        result[mode].push(report);
        const shown = showTotals(report.batches.flatMap((b) => b.rows));
        const dropped = report.droppedByWatermark ? `, ${report.droppedByWatermark} late row dropped` : '';
        print(
          `  run ${i + 1}: put ${f.name} (${f.rows.length} records) -> batches ${report.batches.map((b) => b.batchId + (b.noData ? ' (no data)' : '')).join(', ')}; emitted [${shown}]; watermark ${report.watermark}${dropped}`,
        );
      }
      print('');
    }
    print('Expected (Spark): append run 1 [], run 2 [(12:00, 12:10, 19.0)], run 3 [(12:10, 12:20, 7.0), (12:20, 12:30, 3.0)];');
    print(
      '                  update run 1 [(12:00, 12:10, 15.0), (12:10, 12:20, 7.0)], run 2 [(12:00, 12:10, 19.0), (12:20, 12:30, 3.0)], run 3 [(12:40, 12:50, 1.0)]',
    );
    return result;
  } finally {
    clients.destroy();
  }
}
