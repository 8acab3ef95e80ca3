/**
 * input_file_name() and a file source's `_metadata` column end to end on the emulators: each row
 * carries the S3 object it was read from (Spark's URI of it, its name, its stored size, its last
 * modification), as S3 itself describes the object (HeadObject), for a key with a space under a
 * partition folder and for a gzipped file.
 */
import { gzipSync } from 'node:zlib';
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { runPipeline, type PipelineConfig } from '../../lib/aws/pipeline';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { readStream } from '../../lib/engine/query/reader';
import { sinkRows } from '../helpers/s3-sink-rows';
import { testClients, testConnection, uniqueName } from '../helpers/stack';

const { s3, dynamodb } = testClients();

describe('when a query reads input_file_name() and _metadata from an S3 landing prefix', () => {
  it("gives each row its object's URI, name, stored size (a gzipped file's compressed bytes) and modification time, over two runs", async () => {
    const bucket = uniqueName('sluice-input-file');
    const stateTable = uniqueName('input-file-state');
    await ensureBucket(s3, bucket);
    await ensureStateTable(dynamodb, stateTable);
    const plan = readStream
      .format('json')
      .schema('id STRING, dt DATE')
      .load()
      .selectExpr(
        'id',
        'dt',
        'input_file_name() AS file',
        '_metadata.file_path AS path',
        '_metadata.file_name AS name',
        '_metadata.file_size AS size',
        '_metadata.file_modification_time AS modified',
      )
      .writeStream.queryName('files')
      .plan();
    const cfg: PipelineConfig = {
      source: { kind: 's3', bucket, prefix: 'in' },
      checkpoint: { bucket, prefix: 'state/checkpoint' },
      sink: { kind: 's3', bucket, prefix: 'out' },
      stateTable,
    };
    const spaced = 'in/dt=2026-12-01/a b.json';
    const zipped = 'in/dt=2026-12-02/c.json.gz';
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: spaced, Body: '{"id":"a1"}\n{"id":"a2"}\n' }));
    expect((await runPipeline(testConnection(), plan, cfg)).rowsIn).toBe(2);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: zipped, Body: gzipSync('{"id":"c1"}\n') }));
    expect((await runPipeline(testConnection(), plan, cfg)).rowsIn).toBe(1);
    const head = async (key: string) => s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    const [a, c] = [await head(spaced), await head(zipped)];
    const rows = await sinkRows(bucket, 'out');
    const spacedUri = `s3://${bucket}/in/dt=2026-12-01/a%20b.json`;
    const zippedUri = `s3://${bucket}/${zipped}`;
    expect(rows.map(({ modified, ...rest }) => rest)).toEqual([
      { id: 'a1', dt: '2026-12-01', file: spacedUri, path: spacedUri, name: 'a b.json', size: a.ContentLength },
      { id: 'a2', dt: '2026-12-01', file: spacedUri, path: spacedUri, name: 'a b.json', size: a.ContentLength },
      { id: 'c1', dt: '2026-12-02', file: zippedUri, path: zippedUri, name: 'c.json.gz', size: c.ContentLength },
    ]);
    // the stored (gzipped) size, not the text's
    expect(c.ContentLength).not.toBe('{"id":"c1"}\n'.length);
    expect(rows.map((r) => Date.parse(String(r.modified)))).toEqual([a.LastModified!.getTime(), a.LastModified!.getTime(), c.LastModified!.getTime()]);
  });
});
