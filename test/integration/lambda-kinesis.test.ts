/**
 * A Kinesis pipeline through the scheduled Lambda handler on the embedded stack: records on a
 * two-shard kinesis-mock stream, the S3 checkpoint, DynamoDB state and lease, the DynamoDB sink,
 * dead letters in S3. Three scheduled invocations of the reference example (windowed totals,
 * append mode, 10-minute windows behind a 10-minute watermark), each after new records arrived:
 * each run reads only what is new, closed windows reach the table once, a late record is counted
 * as dropped and a malformed one is kept as a dead letter with its shard and sequence number.
 * The expected windows are the reference article's, worked by hand (see SEED_FILES).
 */
import { randomUUID } from 'node:crypto';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { SEED_FILES, windowedTotals } from '../../examples/windowed-totals';
import { DynamoDbSink } from '../../lib/aws/dynamodb/sink';
import { pipelineConfigFromEnv } from '../../lib/aws/lambda/env';
import { createScheduledHandler, type RunSummary } from '../../lib/aws/lambda/handler';
import { putJsonRecords } from '../../lib/conformance/kinesis';
import { ensureBucket, ensureStateTable, ensureStream } from '../../lib/local/resources';
import { testClients, testConnection, uniqueName } from '../helpers/stack';

jest.setTimeout(90_000);

const bucket = uniqueName('sluice-lk').toLowerCase();
const stateTable = uniqueName('lk-state');
const sinkTable = uniqueName('lk-sink');
const stream = uniqueName('lk-orders');

beforeAll(async () => {
  const c = testClients();
  await Promise.all([
    ensureBucket(c.s3, bucket),
    ensureStateTable(c.dynamodb, stateTable),
    ensureStateTable(c.dynamodb, sinkTable),
    ensureStream(c.kinesis, stream, 2),
  ]);
});

const put = (rows: ReadonlyArray<Record<string, unknown>>) =>
  putJsonRecords(
    testClients().kinesis,
    stream,
    rows.map((r) => ({ data: r as never, partitionKey: String(r.user) })),
  );

const invoke = (handler: ReturnType<typeof createScheduledHandler>, time: string): Promise<RunSummary> =>
  handler({ version: '0', id: randomUUID(), 'detail-type': 'Scheduled Event', source: 'aws.events', time, detail: {} } as never, {
    awsRequestId: randomUUID(),
    getRemainingTimeInMillis: () => 60_000,
  });

const w = (start: string, end: string) => ({ start: `2026-10-01T${start}:00.000Z`, end: `2026-10-01T${end}:00.000Z` });

describe('when a Kinesis pipeline runs on schedule through the Lambda handler', () => {
  it('reads each run only the new records and leaves the closed windows in the DynamoDB table once', async () => {
    const name = uniqueName('orders');
    const cfg = pipelineConfigFromEnv({
      SLUICE_CHECKPOINT_URI: `s3://${bucket}/checkpoints/${name}`,
      SLUICE_STATE_TABLE: stateTable,
      SLUICE_SOURCE_URI: `kinesis://${stream}`,
      SLUICE_SINK_URI: `dynamodb://${sinkTable}`,
      SLUICE_DEAD_LETTER_URI: `s3://${bucket}/dead/${name}`,
      SLUICE_LEASE_SECONDS: '120',
    });
    const lines: Array<Record<string, unknown>> = [];
    const handler = createScheduledHandler(windowedTotals({ source: 'kinesis', name }), cfg, testConnection(), {
      pipelineName: name,
      writeLine: (l) => lines.push(JSON.parse(l)),
    });

    await put(SEED_FILES[0].rows);
    const first = await invoke(handler, '2026-10-01T12:15:00Z');
    // Max event time 12:12: the watermark is 12:02, no window has closed.
    expect(first).toMatchObject({ stoppedBy: 'done', rowsIn: 3, rowsOut: 0, watermark: '2026-10-01T12:02:00.000Z' });

    await put(SEED_FILES[1].rows);
    const second = await invoke(handler, '2026-10-01T12:30:00Z');
    // 12:25 moves the watermark to 12:15: [12:00, 12:10) closes with a 10 + b 5 + b 4.
    expect(second).toMatchObject({ stoppedBy: 'done', rowsIn: 2, rowsOut: 1, watermark: '2026-10-01T12:15:00.000Z' });

    await put([...SEED_FILES[2].rows, { user: 'e', event_time: 'not a time', amount: 1 }]);
    const third = await invoke(handler, '2026-10-01T12:45:00Z');
    // d at 12:03 is behind the 12:15 watermark (dropped); 12:41 closes [12:10, 12:20) and [12:20, 12:30).
    expect(third).toMatchObject({ stoppedBy: 'done', rowsIn: 2, rowsOut: 2, droppedByWatermark: 1, deadLetters: 1, watermark: '2026-10-01T12:31:00.000Z' });

    const table = new DynamoDbSink({ client: testClients().dynamodb, tableName: sinkTable, queryKey: first.queryId });
    const rows = (await table.readAll()).map(({ window, total, events }) => ({ window, total, events }));
    expect(rows.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual([
      { window: w('12:00', '12:10'), total: 19, events: 3 },
      { window: w('12:10', '12:20'), total: 7, events: 1 },
      { window: w('12:20', '12:30'), total: 3, events: 1 },
    ]);

    // The malformed record is kept with where it came from.
    const { s3 } = testClients();
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `dead/${name}/malformed/` }));
    expect(listed.Contents?.length).toBe(1);
    const body = await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: listed.Contents![0].Key! }))).Body!.transformToString();
    const dead = body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(dead).toHaveLength(1);
    expect(JSON.stringify(dead[0])).toMatch(/shardId-\d+/);
    expect(JSON.stringify(dead[0])).toMatch(/not a time/);

    // A fourth tick with nothing new reads no record and writes nothing.
    const fourth = await invoke(handler, '2026-10-01T13:00:00Z');
    expect(fourth).toMatchObject({ stoppedBy: 'done', rowsIn: 0, rowsOut: 0 });
    expect(await table.readAll()).toHaveLength(3);
    expect(lines.filter((l) => l.event === 'run-failed')).toEqual([]);
  });
});
