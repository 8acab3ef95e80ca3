/**
 * A checkpoint belongs to the inputs it was created for: its offsets are positions in them (a
 * landing prefix's last key), so a run of the same query on another prefix with the same
 * checkpoint (the CLI's default checkpoint does not depend on --source) would start the new
 * prefix after the old one's last key and skip whatever sorts before it, without a word. It is
 * refused, naming both inputs and the remedy, before anything is read or written.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { buildExecutor, type PipelineConfig } from '../../lib/aws/pipeline';
import { S3JsonSink } from '../../lib/aws/s3/json-sink';
import { CheckpointMismatchError } from '../../lib/engine/errors';
import { readStream } from '../../lib/engine/query/reader';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { testClients, testConnection, uniqueName } from '../helpers/stack';

const bucket = uniqueName('ckpt-src');
const table = uniqueName('ckpt-src-state');
const plan = readStream.format('json').schema('id STRING').load().writeStream.queryName('copy').plan();

beforeAll(async () => {
  const c = testClients();
  await Promise.all([ensureBucket(c.s3, bucket), ensureStateTable(c.dynamodb, table)]);
});

describe('when a query runs again on another landing prefix with the same checkpoint', () => {
  it('refuses the run, names both prefixes and the remedy, and reads nothing of the new one', async () => {
    const base = uniqueName('q');
    const s3 = testClients().s3;
    const put = (key: string, ids: string[]) =>
      s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: ids.map((id) => JSON.stringify({ id })).join('\n') }));
    const cfg = (prefix: string): PipelineConfig => ({
      checkpoint: { bucket, prefix: `${base}/checkpoint` },
      stateTable: table,
      source: { kind: 's3', bucket, prefix: `${base}/${prefix}` },
      sink: { kind: 's3', bucket, prefix: `${base}/sink` },
    });
    await put(`${base}/landing-b/f1.json`, ['b1']);
    const first = await buildExecutor(testConnection(), plan, cfg('landing-b')).executor.run();
    expect(first.rowsIn).toBe(1);
    // the new prefix's files were never seen by this checkpoint's source: run on it, the checkpoint would mix two inputs
    await put(`${base}/landing-a/f1.json`, ['a1']);
    const again = buildExecutor(testConnection(), plan, cfg('landing-a')).executor.run();
    await expect(again).rejects.toThrow(CheckpointMismatchError);
    await expect(buildExecutor(testConnection(), plan, cfg('landing-a')).executor.run()).rejects.toThrow(
      new RegExp(`reads s3://${bucket}/${base}/landing-a.*created for s3://${bucket}/${base}/landing-b.*new checkpoint location`),
    );
    // nothing of the refused runs reached the sink
    const sink = new S3JsonSink({ client: s3, bucket, prefix: `${base}/sink` });
    expect(await sink.listBatches()).toEqual([0]);
    // the old prefix still runs on it
    await put(`${base}/landing-b/f2.json`, ['b2']);
    expect((await buildExecutor(testConnection(), plan, cfg('landing-b')).executor.run()).rowsIn).toBe(1);
  });
});
