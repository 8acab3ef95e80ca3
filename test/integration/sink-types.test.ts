/**
 * Issue 29's types at the sinks, on the local stack: JSON lines with DECIMALs (38 digits), DATEs
 * at both ends of the calendar, TINYINT/SMALLINT/FLOAT and nested ARRAY<STRUCT<...>> and
 * MAP<STRING, BIGINT> values (a BIGINT beyond 2^53, nulls at every level) land in S3, a stateless
 * query runs through the pipeline, and the rows reach each real sink:
 *
 *   - the Parquet sink, read back with DuckDB (a reader nobody here wrote): its column types
 *     (DECIMAL(10,2), DATE, STRUCT(...)[], MAP(VARCHAR, BIGINT)) and its values as text;
 *   - the JSON sink, read with lossless-json (which keeps each number's text): a DECIMAL is a
 *     JSON number with its scale, a BIGINT beyond 2^53 a number with its digits;
 *   - the DynamoDB sink on DynamoDB Local: exact N attributes, DATE as S, nested M/L with NULLs,
 *     and its read-back with the plan's types gives the output rows of FORMAT-3.
 *
 * Expectations are written by hand from the input text and FORMAT-3's output rules.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type AttributeValue, ScanCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { withDuckDb } from '../../lib/conformance/parquet-file';
import { isLosslessNumber, parse as parseLossless } from 'lossless-json';
import { DynamoDbSink } from '../../lib/aws/dynamodb/sink';
import { buildExecutor, parseSinkUri, type PipelineConfig } from '../../lib/aws/pipeline';
import { S3JsonSink } from '../../lib/aws/s3/json-sink';
import { S3ParquetSink } from '../../lib/aws/s3/parquet-sink';
import { parseDdlType } from '../../lib/engine/ddl';
import type { OutputRow, SinkContext } from '../../lib/engine/ports';
import { readStream } from '../../lib/engine/query/reader';
import { outputColumnTypes } from '../../lib/engine/run/runtime';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { testClients, testConnection, uniqueName } from '../helpers/stack';

const { s3, dynamodb } = testClients();
const bucket = uniqueName('sink-types');
const table = uniqueName('sink-types-state');
const sinkTable = uniqueName('sink-types-sink');
let tmp: string;

beforeAll(async () => {
  await Promise.all([ensureBucket(s3, bucket), ensureStateTable(dynamodb, table), ensureStateTable(dynamodb, sinkTable)]);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-sink-types-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const DDL =
  'id INT, price DECIMAL(10,2), rate DECIMAL(5,4), big DECIMAL(38,10), day DATE, tiny TINYINT, small SMALLINT, ratio FLOAT, ' +
  'items ARRAY<STRUCT<sku: STRING, qty: INT, price: DECIMAL(10,2)>>, counts MAP<STRING, BIGINT>';

/** Written as text: no number here passes through a double on its way in. */
const LINES = [
  '{"id":1,"price":12.3,"rate":1.5,"big":1234567890123456789012345678.1234567890,"day":"0001-01-01","tiny":-128,"small":32767,"ratio":0.5,' +
    '"items":[{"sku":"a-1","qty":2,"price":9.99},{"sku":null,"qty":null,"price":null},null],"counts":{"x":9007199254740993,"y":null}}',
  '{"id":2,"price":-0.05,"rate":-9.9999,"big":-0.0000000001,"day":"9999-12-31","tiny":127,"small":-32768,"ratio":-2.25,"items":[],"counts":{}}',
  '{"id":3,"price":null,"rate":null,"big":null,"day":null,"tiny":null,"small":null,"ratio":null,"items":null,"counts":null}',
  '{"id":4,"price":7,"rate":0,"big":-9999999999999999999999999999.9999999999,"day":"1970-01-01","tiny":0,"small":0,"ratio":0,' +
    '"items":[{"sku":"b","qty":-1,"price":0.005}],"counts":{"min":-9223372036854775808,"max":9223372036854775807}}',
].join('\n');

/**
 * The output rows, by hand (FORMAT-3): a DECIMAL as text with exactly its scale (12.3 at scale 2
 * is "12.30", 0.005 rounds HALF_UP to "0.01"), a DATE as its text, a BIGINT beyond 2^53 as its
 * digits, a STRUCT with every field, null kept at every level.
 */
const EXPECTED = [
  {
    id: 1,
    price: '12.30',
    rate: '1.5000',
    big: '1234567890123456789012345678.1234567890',
    day: '0001-01-01',
    tiny: -128,
    small: 32767,
    ratio: 0.5,
    items: [{ sku: 'a-1', qty: 2, price: '9.99' }, { sku: null, qty: null, price: null }, null],
    counts: { x: '9007199254740993', y: null },
  },
  { id: 2, price: '-0.05', rate: '-9.9999', big: '-0.0000000001', day: '9999-12-31', tiny: 127, small: -32768, ratio: -2.25, items: [], counts: {} },
  { id: 3, price: null, rate: null, big: null, day: null, tiny: null, small: null, ratio: null, items: null, counts: null },
  {
    id: 4,
    price: '7.00',
    rate: '0.0000',
    big: '-9999999999999999999999999999.9999999999',
    day: '1970-01-01',
    tiny: 0,
    small: 0,
    ratio: 0,
    items: [{ sku: 'b', qty: -1, price: '0.01' }],
    counts: { min: '-9223372036854775808', max: '9223372036854775807' },
  },
];

function plan(name: string) {
  return readStream.format('json').schema(DDL).load().writeStream.outputMode('append').trigger({ availableNow: true }).queryName(name).plan();
}

async function run(base: string, sinkUri: string, name: string) {
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${base}/landing/001.json`, Body: LINES }));
  const config: PipelineConfig = {
    checkpoint: { bucket, prefix: `${base}/checkpoint` },
    stateTable: table,
    source: { kind: 's3', bucket, prefix: `${base}/landing` },
    sink: parseSinkUri(sinkUri),
  };
  const report = await buildExecutor(testConnection(), plan(name), config).executor.run();
  expect(report.batches.map((b) => b.batchId)).toEqual([0]);
}

/** The keys under `prefix/`, sorted. */
async function keysUnder(prefix: string): Promise<string[]> {
  const res = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}/` }));
  return (res.Contents ?? []).map((c) => c.Key!).sort();
}

async function getText(key: string): Promise<string> {
  return (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToString();
}

/** Runs `sql` in DuckDB over one local file (`{file}`); bigints as their digits. */
async function duck(sql: string, file: string): Promise<Array<Record<string, unknown>>> {
  const reader = await withDuckDb((conn) => conn.runAndReadAll(sql.replace(/\{file\}/g, `'${file}'`)));
  return reader.getRowObjectsJS().map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' ? String(v) : v])));
}

describe('when a query with decimals, dates and nested types writes Parquet', () => {
  const base = uniqueName('parquet');
  let file: string;

  beforeAll(async () => {
    await run(base, `s3://${bucket}/${base}/sink?format=parquet`, 'types-parquet');
    const parts = (await keysUnder(`${base}/sink`)).filter((k) => k.endsWith('.parquet'));
    expect(parts).toHaveLength(1);
    file = path.join(tmp, 'part.parquet');
    fs.writeFileSync(file, await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: parts[0] }))).Body!.transformToByteArray());
  });

  it("DuckDB reads each column with Spark's type: DECIMAL(p,s), DATE, TINYINT, SMALLINT, FLOAT, a list of structs, a map", async () => {
    const [types] = await duck(
      'SELECT typeof(price) AS price, typeof(rate) AS rate, typeof(big) AS big, typeof(day) AS day, typeof(tiny) AS tiny, typeof(small) AS small, typeof(ratio) AS ratio, ' +
        'typeof(items) AS items, typeof(counts) AS counts, typeof(batch_id) AS batch_id FROM read_parquet({file}) LIMIT 1',
      file,
    );
    expect(types).toEqual({
      price: 'DECIMAL(10,2)',
      rate: 'DECIMAL(5,4)',
      big: 'DECIMAL(38,10)',
      day: 'DATE',
      tiny: 'TINYINT',
      small: 'SMALLINT',
      ratio: 'FLOAT',
      items: 'STRUCT(sku VARCHAR, qty INTEGER, price DECIMAL(10,2))[]',
      counts: 'MAP(VARCHAR, BIGINT)',
      batch_id: 'BIGINT',
    });
  });

  it('holds every value exactly: 38-digit decimals with their scale, the first and last day, nulls at every level', async () => {
    const rows = await duck(
      'SELECT id, CAST(price AS VARCHAR) AS price, CAST(rate AS VARCHAR) AS rate, CAST(big AS VARCHAR) AS big, CAST(day AS VARCHAR) AS day, tiny, small, ratio ' +
        'FROM read_parquet({file}) ORDER BY id',
      file,
    );
    expect(rows).toEqual(EXPECTED.map(({ id, price, rate, big, day, tiny, small, ratio }) => ({ id, price, rate, big, day, tiny, small, ratio })));
    // the days as DuckDB counts them: 0001-01-01 is 719162 days before 1970-01-01, 9999-12-31 is 2932896 after
    expect(await duck("SELECT id, CAST(day - DATE '1970-01-01' AS VARCHAR) AS days FROM read_parquet({file}) WHERE day IS NOT NULL ORDER BY id", file)).toEqual(
      [
        { id: 1, days: '-719162' },
        { id: 2, days: '2932896' },
        { id: 4, days: '0' },
      ],
    );
  });

  it('holds the nested values exactly, element by element: a null struct, a struct of nulls, an empty list, a BIGINT beyond 2^53 in a map', async () => {
    const items = await duck(
      "SELECT id, len(items) AS n, [CASE WHEN x IS NULL THEN NULL ELSE concat_ws('|', coalesce(x.sku, '∅'), coalesce(CAST(x.qty AS VARCHAR), '∅'), coalesce(CAST(x.price AS VARCHAR), '∅')) END FOR x IN items] AS items " +
        'FROM read_parquet({file}) ORDER BY id',
      file,
    );
    expect(items).toEqual([
      { id: 1, n: '3', items: ['a-1|2|9.99', '∅|∅|∅', null] },
      { id: 2, n: '0', items: [] },
      { id: 3, n: null, items: null },
      { id: 4, n: '1', items: ['b|-1|0.01'] },
    ]);
    const counts = await duck(
      "SELECT id, cardinality(counts) AS n, CAST(counts['x'] AS VARCHAR) AS x, counts['y'] IS NULL AS y_null, CAST(counts['min'] AS VARCHAR) AS min, CAST(counts['max'] AS VARCHAR) AS max " +
        'FROM read_parquet({file}) ORDER BY id',
      file,
    );
    expect(counts).toEqual([
      { id: 1, n: '2', x: '9007199254740993', y_null: true, min: null, max: null },
      { id: 2, n: '0', x: null, y_null: true, min: null, max: null },
      { id: 3, n: null, x: null, y_null: true, min: null, max: null },
      { id: 4, n: '2', x: null, y_null: true, min: '-9223372036854775808', max: '9223372036854775807' },
    ]);
  });

  it('writes DECIMAL by precision as Spark does: INT32 up to 9 digits, INT64 for 10 to 18, FIXED_LEN_BYTE_ARRAY of 16 bytes for 38', async () => {
    const schema = await duck(
      "SELECT name, type, type_length, converted_type, scale, precision FROM parquet_schema({file}) WHERE name IN ('price', 'rate', 'big', 'day', 'tiny', 'small', 'ratio')",
      file,
    );
    const byName = Object.fromEntries(schema.map((s) => [s.name, s]));
    expect(byName.price).toMatchObject({ type: 'INT64', converted_type: 'DECIMAL', scale: '2', precision: '10' });
    expect(byName.rate).toMatchObject({ type: 'INT32', converted_type: 'DECIMAL', scale: '4', precision: '5' });
    expect(byName.big).toMatchObject({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: '16', converted_type: 'DECIMAL', scale: '10', precision: '38' });
    expect(byName.day).toMatchObject({ type: 'INT32', converted_type: 'DATE' });
    expect(byName.tiny).toMatchObject({ type: 'INT32', converted_type: 'INT_8' });
    expect(byName.small).toMatchObject({ type: 'INT32', converted_type: 'INT_16' });
    expect(byName.ratio).toMatchObject({ type: 'FLOAT' });
  });
});

describe('when the query writes JSON lines', () => {
  const base = uniqueName('json');

  beforeAll(async () => {
    await run(base, `s3://${bucket}/${base}/sink`, 'types-json');
  });

  it('writes a DECIMAL as a JSON number with its scale and a BIGINT beyond 2^53 as a number with its digits', async () => {
    const text = await getText(`${base}/sink/batch-0000000000.jsonl`);
    const lines = text.trim().split('\n');
    expect(lines).toHaveLength(4);
    const byId = new Map(lines.map((l) => [Number((parseLossless(l) as { id: { value: string } }).id.value), l]));
    expect(byId.get(1)).toContain('"price":12.30,');
    expect(byId.get(1)).toContain('"big":1234567890123456789012345678.1234567890,');
    expect(byId.get(1)).toContain('"counts":{"x":9007199254740993,"y":null}');
    expect(byId.get(4)).toContain('"price":7.00,"rate":0.0000,');
    expect(byId.get(2)).toContain('"rate":-9.9999,');
    // each number's text, as a parser that keeps it reads it
    const first = parseLossless(byId.get(1)!) as Record<string, unknown>;
    const numberText = (v: unknown) => (isLosslessNumber(v) ? v.value : v === null ? null : `not a number: ${JSON.stringify(v)}`);
    expect(numberText(first.price)).toBe('12.30');
    expect(numberText(first.big)).toBe('1234567890123456789012345678.1234567890');
    expect(first.day).toBe('0001-01-01');
    const items = first.items as Array<Record<string, unknown> | null>;
    expect(items.map((i) => (i === null ? null : [i.sku, numberText(i.qty), numberText(i.price)]))).toEqual([['a-1', '2', '9.99'], [null, null, null], null]);
    expect(numberText((first.counts as Record<string, unknown>).x)).toBe('9007199254740993');
    const fourth = parseLossless(byId.get(4)!) as Record<string, unknown>;
    expect(numberText((fourth.counts as Record<string, unknown>).min)).toBe('-9223372036854775808');
    expect(numberText((fourth.items as Array<Record<string, unknown>>)[0].price)).toBe('0.01');
  });

  it("reads back, with the plan's types, the very output rows of FORMAT-3", async () => {
    const sink = new S3JsonSink({ client: s3, bucket, prefix: `${base}/sink` });
    const rows = (await sink.readBatch(0, outputColumnTypes(plan('types-json'))))!;
    expect([...rows].sort((a, b) => (a.id as number) - (b.id as number))).toEqual(EXPECTED);
  });
});

describe('when the query writes to a DynamoDB table', () => {
  const base = uniqueName('ddb');
  const queryKey = uniqueName('types');

  beforeAll(async () => {
    await run(base, `dynamodb://${sinkTable}/${queryKey}`, 'types-dynamodb');
  });

  /** The stored items of the query, as DynamoDB answers them, by id. */
  async function storedItems(): Promise<Map<number, Record<string, AttributeValue>>> {
    const out = new Map<number, Record<string, AttributeValue>>();
    let start: Record<string, AttributeValue> | undefined;
    do {
      const res = await dynamodb.send(new ScanCommand({ TableName: sinkTable, ExclusiveStartKey: start }));
      for (const item of res.Items ?? []) if (item.pk.S!.startsWith(`${queryKey}#`)) out.set(Number(item.id.N), item);
      start = res.LastEvaluatedKey;
    } while (start);
    return out;
  }

  it('stores numbers as exact N (38 digits, a BIGINT beyond 2^53), a DATE as S, nested values as M and L with NULLs', async () => {
    const items = await storedItems();
    expect([...items.keys()].sort()).toEqual([1, 2, 3, 4]);
    const one = items.get(1)!;
    // DynamoDB keeps a number's value, not its trailing zeros (it answers 12.3 for 12.30): every digit, exactly
    expect(one.big.N).toMatch(/^1234567890123456789012345678\.1234567890?$/);
    expect(one.price.N).toMatch(/^12\.30?$/);
    expect(one.day).toEqual({ S: '0001-01-01' });
    expect(one.tiny).toEqual({ N: '-128' });
    expect(one.items.L).toHaveLength(3);
    expect(one.items.L![0].M).toEqual({ sku: { S: 'a-1' }, qty: { N: '2' }, price: { N: '9.99' } });
    expect(one.items.L![1].M).toEqual({ sku: { NULL: true }, qty: { NULL: true }, price: { NULL: true } });
    expect(one.items.L![2]).toEqual({ NULL: true });
    expect(one.counts.M).toEqual({ x: { N: '9007199254740993' }, y: { NULL: true } });
    expect(items.get(2)!.big.N).toBe('-0.0000000001');
    expect(items.get(2)!.items).toEqual({ L: [] });
    expect(items.get(2)!.counts).toEqual({ M: {} });
    expect(items.get(3)!.price).toEqual({ NULL: true });
    expect(items.get(4)!.counts.M).toEqual({ min: { N: '-9223372036854775808' }, max: { N: '9223372036854775807' } });
  });

  it("reads back, with the plan's types, the very output rows of FORMAT-3 (a DECIMAL with its scale again)", async () => {
    const sink = new DynamoDbSink({ client: dynamodb, tableName: sinkTable, queryKey });
    const rows = await sink.readAll(queryKey, outputColumnTypes(plan('types-dynamodb')));
    expect([...rows].sort((a, b) => (a.id as number) - (b.id as number))).toEqual(EXPECTED);
    // without the types, a DECIMAL's scale is lost: the read-back needs them
    const untyped = await sink.readAll(queryKey);
    expect(untyped.find((r) => r.id === 4)!.price).toBe(7);
  });
});

describe('when a value is not of its column type', () => {
  const ctx: SinkContext = {
    queryId: 'qid-types',
    queryName: 'prices',
    outputMode: 'append',
    columns: ['price', 'lines'],
    columnTypes: { price: parseDdlType('DECIMAL(4,2)'), lines: parseDdlType('ARRAY<STRUCT<day: DATE>>') },
    keyColumns: [],
  };
  // 12.345 has three fraction digits, 123.45 five digits in all, "1.5" not the canonical text at scale 2
  const rows: OutputRow[] = [
    { price: '12.345', lines: [] },
    { price: '123.45', lines: [] },
    { price: '1.5', lines: [] },
    { price: '1.50', lines: [{ day: '2026-02-30' }] },
    { price: '-0.05', lines: [{ day: '2026-02-28' }, null] },
  ];

  it.each([
    ['the Parquet sink', () => new S3ParquetSink({ client: s3, bucket, prefix: uniqueName('refuse-pq') })],
    ['the DynamoDB sink', () => new DynamoDbSink({ client: dynamodb, tableName: sinkTable, queryKey: uniqueName('refuse') })],
  ])('%s refuses the row (a dead letter) with the column, the value and the fix, and keeps the others', async (_name, make) => {
    const refused = await make().check!(0, rows, ctx);
    expect(refused.map((r) => r.index)).toEqual([0, 1, 2, 3]);
    expect(refused[0].reason).toMatch(
      /column price \(DECIMAL\(4,2\)\) holds "12\.345", which is not a DECIMAL\(4,2\): make the withColumn function return the type it declares/,
    );
    expect(refused[1].reason).toContain('"123.45"');
    expect(refused[3].reason).toMatch(/column lines\[0\]\.day \(DATE\) holds "2026-02-30", which is not a DATE/);
  });

  it("the DynamoDB sink refuses a DOUBLE outside the magnitudes of DynamoDB's numbers (1E-130 to below 1E+126)", async () => {
    const sink = new DynamoDbSink({ client: dynamodb, tableName: sinkTable, queryKey: uniqueName('refuse') });
    const doubles: SinkContext = { ...ctx, columns: ['x'], columnTypes: { x: parseDdlType('DOUBLE') } };
    const refused = await sink.check(0, [{ x: 1e200 }, { x: 1e-200 }, { x: 1.5e125 }, { x: -2.5e-129 }, { x: 0 }], doubles);
    expect(refused.map((r) => r.index)).toEqual([0, 1]);
    expect(refused[0].reason).toMatch(/column x holds 1e\+200, outside the magnitudes a DynamoDB number holds \(1E-130 to below 1E\+126\): round or clamp/);
  });
});
