/**
 * A union of two S3 landing prefixes end to end on the emulators (s3rver, DynamoDB Local): the
 * pipeline opens the other stream from the config's `inputs`, as for a join's, and the run
 * writes both streams' rows, each input read from its own offsets.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { runPipeline, type PipelineConfig } from '../../lib/aws/pipeline';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { readStream } from '../../lib/engine/query/reader';
import { sinkRows } from '../helpers/s3-sink-rows';
import { testClients, testConnection, uniqueName } from '../helpers/stack';

const { s3, dynamodb } = testClients();

async function put(bucket: string, key: string, rows: object[]): Promise<void> {
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: `${rows.map((r) => JSON.stringify(r)).join('\n')}\n` }));
}

describe('when a query unions two landing prefixes', () => {
  it("reads both from their own offsets and writes both streams' rows under the first one's columns", async () => {
    const bucket = uniqueName('sluice-union');
    const stateTable = uniqueName('union-state');
    await ensureBucket(s3, bucket);
    await ensureStateTable(dynamodb, stateTable);
    const refunds = readStream.format('json').schema('ref STRING, value BIGINT').load();
    const plan = readStream.format('json').schema('id STRING, amount INT').load().union(refunds).writeStream.queryName('ledger').plan();
    const cfg: PipelineConfig = {
      source: { kind: 's3', bucket, prefix: 'orders' },
      inputs: [{ kind: 's3', bucket, prefix: 'refunds' }],
      checkpoint: { bucket, prefix: 'state/checkpoint' },
      sink: { kind: 's3', bucket, prefix: 'out' },
      stateTable,
    };
    await put(bucket, 'orders/00.json', [{ id: 'o1', amount: 5 }]);
    await put(bucket, 'refunds/00.json', [{ ref: 'r1', value: 7 }]);
    expect((await runPipeline(testConnection(), plan, cfg)).rowsIn).toBe(2);
    await put(bucket, 'refunds/01.json', [{ ref: 'r2', value: 9 }]);
    expect((await runPipeline(testConnection(), plan, cfg)).rowsIn).toBe(1);
    expect(await sinkRows(bucket, 'out')).toEqual([
      { id: 'o1', amount: 5 },
      { id: 'r1', amount: 7 },
      { id: 'r2', amount: 9 },
    ]);
  });
});
