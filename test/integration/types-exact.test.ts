/**
 * Issue 29's exact BIGINT on the local stack: JSON lines with integers beyond 2^53 land in S3, a
 * keyed sum runs with its state in DynamoDB, and the rows reach real sinks exactly: the Parquet
 * sink's INT64 (read back with DuckDB, a reader nobody here wrote) and the DynamoDB sink's N
 * attribute (its digits). Expectations from Spark's rules (sum of BIGINT is BIGINT, exact), by hand.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { withDuckDb } from '../../lib/conformance/parquet-file';
import { buildExecutor, parseSinkUri, type PipelineConfig } from '../../lib/aws/pipeline';
import { max, sum } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { testClients, testConnection, uniqueName } from '../helpers/stack';

const { s3, dynamodb } = testClients();
const bucket = uniqueName('types-exact');
const table = uniqueName('types-exact-state');
const sinkTable = uniqueName('types-exact-sink');

beforeAll(async () => {
  await Promise.all([ensureBucket(s3, bucket), ensureStateTable(dynamodb, table), ensureStateTable(dynamodb, sinkTable)]);
});

/** Written as text: these lines never pass through a double. */
const LINES = [
  '{"k":"a","n":9007199254740993}',
  '{"k":"a","n":9007199254740993}',
  '{"k":"b","n":-9223372036854775807}',
  '{"k":"b","n":-1}',
  '{"k":"c","n":1}',
].join('\n');
/** By hand: a: 2 × (2^53 + 1) = 18014398509481986; b: −2^63 + 1 − 1 = −2^63; c: 1. */
const EXPECTED = [
  { k: 'a', total: '18014398509481986', high: '9007199254740993' },
  { k: 'b', total: '-9223372036854775808', high: -1 },
  { k: 'c', total: 1, high: 1 },
];

function plan(name: string) {
  return readStream
    .format('json')
    .schema('k STRING, n BIGINT')
    .load()
    .groupBy('k')
    .agg(sum('n').as('total'), max('n').as('high'))
    .writeStream.outputMode('update')
    .trigger({ availableNow: true })
    .queryName(name)
    .plan();
}

async function run(base: string, sinkUri: string) {
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${base}/landing/001.json`, Body: LINES }));
  const config: PipelineConfig = {
    checkpoint: { bucket, prefix: `${base}/checkpoint` },
    stateTable: table,
    source: { kind: 's3', bucket, prefix: `${base}/landing` },
    sink: parseSinkUri(sinkUri),
  };
  return buildExecutor(testConnection(), plan(base), config).executor.run({ collectRows: true });
}

const byKey = (rows: Array<Record<string, unknown>>) => [...rows].sort((x, y) => String(x.k).localeCompare(String(y.k)));

it('the Parquet sink writes BIGINT beyond 2^53 as INT64 that DuckDB reads back exactly', async () => {
  const base = uniqueName('pq');
  const report = await run(base, `s3://${bucket}/${base}/sink?format=parquet`);
  expect(byKey(report.batches.flatMap((b) => b.rows ?? []))).toEqual(EXPECTED);
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${base}/sink/` }));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-types-'));
  const files: string[] = [];
  for (const o of listed.Contents ?? []) {
    if (!o.Key!.endsWith('.parquet')) continue;
    const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: o.Key! }));
    const file = path.join(dir, `${files.length}.parquet`);
    fs.writeFileSync(file, await res.Body!.transformToByteArray());
    files.push(file);
  }
  try {
    const list = `[${files.map((f) => `'${f}'`).join(', ')}]`;
    const reader = await withDuckDb((conn) =>
      conn.runAndReadAll(`SELECT k, typeof(total) AS t, CAST(total AS VARCHAR) AS total, CAST(high AS VARCHAR) AS high FROM read_parquet(${list}) ORDER BY k`),
    );
    expect(reader.getRowObjectsJS()).toEqual([
      { k: 'a', t: 'BIGINT', total: '18014398509481986', high: '9007199254740993' },
      { k: 'b', t: 'BIGINT', total: '-9223372036854775808', high: '-1' },
      { k: 'c', t: 'BIGINT', total: '1', high: '1' },
    ]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

it('the DynamoDB sink writes BIGINT beyond 2^53 as an N attribute with the exact digits', async () => {
  const base = uniqueName('ddb');
  const report = await run(base, `dynamodb://${sinkTable}/${base}`);
  expect(byKey(report.batches.flatMap((b) => b.rows ?? []))).toEqual(EXPECTED);
  const scan = await dynamodb.send(new ScanCommand({ TableName: sinkTable }));
  const items = (scan.Items ?? []).filter((i) => i.k !== undefined && i.pk?.S?.includes(base));
  const byK = Object.fromEntries(items.map((i) => [i.k.S, { total: i.total, high: i.high }]));
  expect(byK).toEqual({
    a: { total: { N: '18014398509481986' }, high: { N: '9007199254740993' } },
    b: { total: { N: '-9223372036854775808' }, high: { N: '-1' } },
    c: { total: { N: '1' }, high: { N: '1' } },
  });
});
