/**
 * A query that sorts its output (orderBy after a complete-mode aggregation) on the emulators: the
 * S3 sink writes each batch's rows in the query's order (SinkContext.ordered), where an unsorted
 * query's rows are in the sink's own order (by their JSON text).
 */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { runPipeline, type PipelineConfig } from '../../lib/aws/pipeline';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { count, desc } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { testClients, testConnection, uniqueName } from '../helpers/stack';

const { s3, dynamodb } = testClients();

async function linesOf(bucket: string, prefix: string): Promise<string[]> {
  const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}/` }));
  const keys = (page.Contents ?? []).map((o) => o.Key!).filter((k) => /\/batch-\d+\.jsonl$/.test(k));
  expect(keys).toHaveLength(1);
  const text = await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: keys[0] }))).Body!.transformToString();
  return text.split('\n').filter((l) => l !== '');
}

describe('when a complete-mode aggregation sorts its output', () => {
  it("the S3 sink keeps the query's order; without orderBy it writes the rows in its own order", async () => {
    const bucket = uniqueName('sluice-ordered');
    const stateTable = uniqueName('ordered-state');
    await ensureBucket(s3, bucket);
    await ensureStateTable(dynamodb, stateTable);
    const body = ['a', 'b', 'b', 'c', 'c', 'c'].map((k) => JSON.stringify({ k })).join('\n');
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'in/00.json', Body: `${body}\n` }));
    const counts = () => readStream.format('json').schema('k STRING').load().groupBy('k').agg(count().as('n'));
    const run = async (name: string, sorted: boolean) => {
      const frame = sorted ? counts().orderBy(desc('n')) : counts();
      const cfg: PipelineConfig = {
        source: { kind: 's3', bucket, prefix: 'in' },
        checkpoint: { bucket, prefix: `state/${name}` },
        sink: { kind: 's3', bucket, prefix: `out/${name}` },
        stateTable,
      };
      await runPipeline(testConnection(), frame.writeStream.outputMode('complete').queryName(name).plan(), cfg);
      return linesOf(bucket, `out/${name}`);
    };
    expect(await run('top', true)).toEqual(['{"k":"c","n":3}', '{"k":"b","n":2}', '{"k":"a","n":1}']);
    expect(await run('plain', false)).toEqual(['{"k":"a","n":1}', '{"k":"b","n":2}', '{"k":"c","n":3}']);
  });
});
