/**
 * No record can wedge a query: an output row the sink could never write (a partition value that
 * makes an S3 key over 1,024 bytes, which AWS refuses with 400 KeyTooLongError and the local S3
 * now refuses too; a row over DynamoDB's 400 KB item limit) becomes a dead letter of kind
 * `unwritable` with the reason, and the rest of the batch is written. Through buildExecutor on the
 * local stack, on both of the committer's paths (a stateless batch streamed to the sink, a
 * stateful one handed over whole), and a replay refuses the same rows.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { DynamoDbSink } from '../../lib/aws/dynamodb/sink';
import { buildExecutor, type PipelineConfig } from '../../lib/aws/pipeline';
import { S3DeadLetterSink } from '../../lib/aws/s3/dead-letters';
import { S3FileSink } from '../../lib/aws/s3/file-sink';
import { InjectedCrash } from '../../lib/engine/errors';
import type { Json, OutputRow } from '../../lib/engine/ports';
import { count } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { CrashInjector } from '../../lib/engine/testing/crash';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { leaseClock, testClients, testConnection, uniqueName } from '../helpers/stack';

const { dynamodb, s3 } = testClients();
const bucket = uniqueName('unwritable');
const table = uniqueName('unwritable-state');
const sinkTable = uniqueName('unwritable-sink');

beforeAll(async () => {
  await Promise.all([ensureBucket(s3, bucket), ensureStateTable(dynamodb, table), ensureStateTable(dynamodb, sinkTable)]);
});

/** 1,100 bytes: as a partition folder, the object's key passes S3's 1,024 bytes. */
const LONG_PAGE = `p-${'x'.repeat(1098)}`;

async function drop(base: string, events: Json[]): Promise<void> {
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${base}/landing/part-0001.json`, Body: events.map((e) => JSON.stringify(e)).join('\n') }));
}

function config(base: string, sink: PipelineConfig['sink']): PipelineConfig {
  return { checkpoint: { bucket, prefix: `${base}/checkpoint` }, stateTable: table, source: { kind: 's3', bucket, prefix: `${base}/landing` }, sink };
}

const deadLetters = (base: string) => new S3DeadLetterSink({ client: s3, bucket, prefix: `${base}/checkpoint-dead-letter` });
const sortRows = (rows: OutputRow[]) => [...rows].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));

describe('a partition value that makes an S3 key over 1,024 bytes (S3 file sink, partitionBy)', () => {
  it('a streamed stateless batch: the row is a dead letter with the reason, the others are committed', async () => {
    const base = uniqueName('files-streamed');
    const plan = readStream
      .format('json')
      .schema('page STRING, n LONG')
      .load()
      .writeStream.outputMode('append')
      .trigger({ availableNow: true })
      .queryName('pages')
      .plan();
    const cfg = config(base, { kind: 's3-files', bucket, prefix: `${base}/out`, partitionBy: 'page' });
    await drop(base, [
      { page: 'home', n: 1 },
      { page: LONG_PAGE, n: 2 },
      { page: 'about', n: 3 },
    ]);
    const report = await buildExecutor(testConnection(), plan, cfg).executor.run();
    expect(report.batches).toHaveLength(1);
    const files = new S3FileSink({ client: s3, bucket, prefix: `${base}/out`, partitionBy: 'page' });
    expect(sortRows(await files.readCommitted())).toEqual([
      { page: 'about', n: 3 },
      { page: 'home', n: 1 },
    ]);
    const letters = await deadLetters(base).read(0, 'unwritable');
    expect(letters).toEqual([
      { row: { page: LONG_PAGE, n: 2 }, reason: expect.stringMatching(/1,?024 bytes/), batchId: 0, sink: expect.stringContaining(`${base}/out`) },
    ]);
  });

  it('a stateful batch (update mode), crashed after the sink and replayed: the same row refused again, every other row once', async () => {
    const base = uniqueName('files-stateful');
    const plan = readStream
      .format('json')
      .schema('page STRING, n LONG')
      .load()
      .groupBy('page')
      .agg(count().as('views'))
      .writeStream.outputMode('update')
      .trigger({ availableNow: true })
      .queryName('views')
      .plan();
    const cfg = config(base, { kind: 's3-files', bucket, prefix: `${base}/out`, partitionBy: 'page' });
    await drop(base, [
      { page: 'home', n: 1 },
      { page: LONG_PAGE, n: 2 },
      { page: 'home', n: 3 },
      { page: LONG_PAGE, n: 4 },
    ]);
    const time = leaseClock();
    await expect(
      buildExecutor(testConnection(), plan, cfg, { crash: new CrashInjector({ point: 'after-sink' }), clock: time.clock }).executor.run(),
    ).rejects.toBeInstanceOf(InjectedCrash);
    time.waitOutLease();
    const report = await buildExecutor(testConnection(), plan, cfg, { clock: time.clock }).executor.run();
    expect(report.batches[0]).toMatchObject({ batchId: 0 });
    const files = new S3FileSink({ client: s3, bucket, prefix: `${base}/out`, partitionBy: 'page' });
    expect(await files.readCommitted()).toEqual([{ page: 'home', views: 2 }]);
    const letters = await deadLetters(base).read(0, 'unwritable');
    expect(letters).toEqual([{ row: { page: LONG_PAGE, views: 2 }, reason: expect.stringContaining('KeyTooLongError'), batchId: 0, sink: expect.any(String) }]);
  });
});

describe("a row over DynamoDB's 400 KB item limit (DynamoDB sink)", () => {
  it('is a dead letter with the reason; the other rows of the batch are in the table', async () => {
    const base = uniqueName('dynamo');
    const plan = readStream
      .format('json')
      .schema('id LONG, note STRING')
      .load()
      .writeStream.outputMode('append')
      .trigger({ availableNow: true })
      .queryName('notes')
      .plan();
    const cfg = config(base, { kind: 'dynamodb', table: sinkTable, queryKey: base });
    const big = 'y'.repeat(450 * 1024);
    await drop(base, [
      { id: 1, note: 'a' },
      { id: 2, note: big },
      { id: 3, note: 'c' },
    ]);
    await buildExecutor(testConnection(), plan, cfg).executor.run();
    const held = await new DynamoDbSink({ client: dynamodb, tableName: sinkTable, queryKey: base }).readAll();
    expect(sortRows(held)).toEqual([
      { id: 1, note: 'a' },
      { id: 3, note: 'c' },
    ]);
    const letters = await deadLetters(base).read(0, 'unwritable');
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({
      row: { id: 2 },
      reason: expect.stringMatching(/bytes as a DynamoDB item; DynamoDB items hold at most 409600 bytes/),
      batchId: 0,
    });
  });
});
