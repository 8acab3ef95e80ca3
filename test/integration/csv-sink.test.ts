/**
 * The CSV sink (s3://…?format=csv) on the local stack: a query runs through the pipeline, every
 * object is downloaded from s3rver and read back with DuckDB's CSV reader (a reader nobody here
 * wrote), and compared with the rows the query emitted; a window column is refused before any
 * write, as Spark's CSV source refuses a struct.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { withDuckDb } from '../../lib/conformance/parquet-file';
import { buildExecutor, parseSinkUri, type PipelineConfig } from '../../lib/aws/pipeline';
import { S3CsvSink } from '../../lib/aws/s3/csv-sink';
import type { OutputRow, SinkContext } from '../../lib/engine/ports';
import { count, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { testClients, testConnection, uniqueName } from '../helpers/stack';

const { s3 } = testClients();
const bucket = uniqueName('csv-sink');
const table = uniqueName('csv-state');
let tmp: string;

beforeAll(async () => {
  await Promise.all([ensureBucket(s3, bucket), ensureStateTable(testClients().dynamodb, table)]);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-csv-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const SCHEMA = 'user STRING, event_time TIMESTAMP, amount DOUBLE, price DECIMAL(10,2), qty LONG, flag BOOLEAN, day DATE';

/** Values that need quotes (a comma, a quote, a line end, a leading #), nulls, the empty string, NaN. */
const EVENTS: Array<Record<string, unknown>> = [
  { user: 'alice', event_time: '2026-10-01 12:00:00.250', amount: 10.5, price: 3.1, qty: 9007199254740991, flag: true, day: '2026-10-01' },
  { user: 'bob, jr.', event_time: '2026-10-01T12:04:59.999Z', amount: 'NaN', price: 0, qty: -3, flag: false, day: '2026-10-02' },
  { user: 'say "hi"', event_time: '2026-10-02 00:00:00', amount: -0.25, price: null, qty: null, flag: null, day: null },
  { user: 'two\nlines', event_time: null, amount: null, price: 12345678.9, qty: 0, flag: true, day: '2026-10-03' },
  { user: '', event_time: '2026-10-02 23:59:59.999', amount: 1e21, price: -1, qty: 42, flag: false, day: '2026-10-04' },
  { user: null, event_time: '2026-10-01 13:00:00', amount: 2, price: 5, qty: 7, flag: true, day: '2026-10-05' },
];

function pipeline(base: string, sinkUri: string): PipelineConfig {
  return {
    checkpoint: { bucket, prefix: `${base}/checkpoint` },
    stateTable: table,
    source: { kind: 's3', bucket, prefix: `${base}/landing` },
    sink: parseSinkUri(sinkUri),
  };
}

async function drop(base: string, name: string, rows: Array<Record<string, unknown>>) {
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${base}/landing/${name}`, Body: rows.map((r) => JSON.stringify(r)).join('\n') }));
}

/** Every key under `prefix/` (relative), sorted. */
async function keysUnder(prefix: string): Promise<string[]> {
  const res = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}/` }));
  return (res.Contents ?? []).map((c) => c.Key!.slice(prefix.length + 1)).sort();
}

/** Downloads every CSV object under `prefix/`; returns the local paths and the texts. */
async function download(prefix: string): Promise<Array<{ file: string; text: string }>> {
  const dir = fs.mkdtempSync(path.join(tmp, 'dl-'));
  const out: Array<{ file: string; text: string }> = [];
  for (const key of await keysUnder(prefix)) {
    if (!key.endsWith('.csv')) continue;
    const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: `${prefix}/${key}` }));
    const text = await res.Body!.transformToString();
    const file = path.join(dir, key.replace(/\//g, '__'));
    fs.writeFileSync(file, text);
    out.push({ file, text });
  }
  return out;
}

async function duck(sql: string): Promise<Array<Record<string, unknown>>> {
  const reader = await withDuckDb((conn) => conn.runAndReadAll(sql));
  return reader.getRowObjectsJS().map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])));
}

const sorted = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).sort();

describe('a stateless query written as CSV with a header', () => {
  const base = uniqueName('stateless');
  const sinkPrefix = `${base}/sink`;
  let emitted: OutputRow[];
  let objects: Array<{ file: string; text: string }>;

  beforeAll(async () => {
    await drop(base, '001.json', EVENTS);
    const plan = readStream
      .format('json')
      .schema(SCHEMA)
      .load()
      .writeStream.outputMode('append')
      .trigger({ availableNow: true })
      .queryName('csv-stateless')
      .plan();
    const report = await buildExecutor(testConnection(), plan, pipeline(base, `s3://${bucket}/${sinkPrefix}?format=csv&header=true`)).executor.run({
      collectRows: true,
    });
    emitted = report.batches.flatMap((b) => b.rows ?? []);
    objects = await download(sinkPrefix);
  });

  it('writes one object and the sink log, the header first and each value as Spark writes it', async () => {
    expect(await keysUnder(sinkPrefix)).toEqual(['_sink_log/0000000000', 'part-0000000000-00000.csv']);
    const [{ text }] = objects;
    const lines = text.split('\n');
    expect(lines[0]).toBe('user,event_time,amount,price,qty,flag,day');
    // a comma or a quote is quoted, the quote escaped with \; NaN, a DECIMAL and a null as Spark writes them
    expect(text).toContain('"bob, jr.",2026-10-01T12:04:59.999Z,NaN,0.00,-3,false,2026-10-02\n');
    expect(text).toContain('"say \\"hi\\"",2026-10-02T00:00:00.000Z,-0.25,,,,\n');
    expect(text).toContain('"two\nlines",,,12345678.90,0,true,2026-10-03\n');
    // the empty string is "", a null STRING an empty field; a double past 10^7 in Java's E form
    expect(text).toContain('"",2026-10-02T23:59:59.999Z,1.0E21,-1.00,42,false,2026-10-04\n');
    expect(text).toContain(',2026-10-01T13:00:00.000Z,2.0,5.00,7,true,2026-10-05\n');
  });

  it("DuckDB's CSV reader reads back the rows the query emitted", async () => {
    const list = objects.map((o) => `'${o.file}'`).join(', ');
    const rows = await duck(
      `SELECT "user", strftime(event_time, '%Y-%m-%dT%H:%M:%S.%gZ') AS event_time, amount, price::VARCHAR AS price, qty, flag, day::VARCHAR AS day
       FROM read_csv([${list}], header = true, escape = '\\', quote = '"', nullstr = '',
         columns = {'user': 'VARCHAR', 'event_time': 'TIMESTAMP', 'amount': 'DOUBLE', 'price': 'DECIMAL(10,2)', 'qty': 'BIGINT', 'flag': 'BOOLEAN', 'day': 'DATE'})`,
    );
    const asOutput = rows.map((r) => ({ ...r, amount: typeof r.amount === 'number' && Number.isNaN(r.amount) ? 'NaN' : r.amount }));
    expect(emitted).toHaveLength(EVENTS.length);
    // (DuckDB reads both the empty field and the quoted "" of the empty string as NULL with nullstr '')
    const expected = emitted.map((r) => ({ ...r, user: r.user === '' ? null : r.user }));
    expect(sorted(asOutput)).toEqual(sorted(expected));
  });
});

describe("a CSV sink with Spark's writer options in its URI", () => {
  it('writes with them: another separator, a null text, quoteAll off, a timestamp pattern', async () => {
    const base = uniqueName('options');
    const sinkPrefix = `${base}/sink`;
    await drop(base, '001.json', EVENTS.slice(0, 3));
    const plan = readStream
      .format('json')
      .schema(SCHEMA)
      .load()
      .selectExpr('user', 'event_time', 'qty')
      .writeStream.outputMode('append')
      .trigger({ availableNow: true })
      .queryName('csv-options')
      .plan();
    const uri = `s3://${bucket}/${sinkPrefix}?format=csv&sep=%3B&nullValue=NA&timestampFormat=${encodeURIComponent('yyyy-MM-dd HH:mm')}`;
    await buildExecutor(testConnection(), plan, pipeline(base, uri)).executor.run();
    const [{ text }] = await download(sinkPrefix);
    expect(text.split('\n').sort()).toEqual(
      ['', 'alice;2026-10-01 12:00;9007199254740991', 'bob, jr.;2026-10-01 12:04;-3', '"say \\"hi\\"";2026-10-02 00:00;NA'].sort(),
    );
  });

  it('refuses an option it does not know, or one of another format, before any run', () => {
    expect(() => parseSinkUri(`s3://${bucket}/out?format=csv&quoteAll=maybe`)).toThrow(/option quoteAll="maybe" must be true or false/);
    expect(() => parseSinkUri(`s3://${bucket}/out?format=parquet&sep=%3B`)).toThrow(/sep is a parameter of format=csv/);
  });
});

describe('a query whose output has a window column', () => {
  it('is refused before any write, naming the column and the fix', async () => {
    const base = uniqueName('windowed');
    await drop(base, '001.json', EVENTS.slice(0, 2));
    const plan = readStream
      .format('json')
      .schema(SCHEMA)
      .load()
      .withWatermark('event_time', '10 minutes')
      .groupBy(window('event_time', '10 minutes'))
      .agg(count().as('n'))
      .writeStream.outputMode('update')
      .trigger({ availableNow: true })
      .queryName('csv-windowed')
      .plan();
    await expect(buildExecutor(testConnection(), plan, pipeline(base, `s3://${bucket}/${base}/sink?format=csv`)).executor.run()).rejects.toThrow(
      /\[UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE\] The CSV datasource doesn't support the column `window` of the type "STRUCT<start: TIMESTAMP, end: TIMESTAMP>".*window\.start AS window_start/,
    );
    expect(await keysUnder(`${base}/sink`)).toEqual([]);
  });
});

describe('a CSV sink with lineSep', () => {
  it('ends each record with it, quotes a value holding one of its characters, and DuckDB reads the file back', async () => {
    const prefix = `direct/${uniqueName('csv-linesep')}`;
    const sink = new S3CsvSink({ client: s3, bucket, prefix, header: true, options: { lineSep: '\r\n' } });
    const ctx: SinkContext = {
      queryId: 'qid-1',
      queryName: 'totals',
      outputMode: 'update',
      columns: ['user', 'total'],
      columnTypes: { user: { type: 'STRING' }, total: { type: 'DOUBLE' } },
      keyColumns: ['user'],
    };
    await sink.addBatch(
      0,
      [
        { user: 'a\rb', total: 1.5 },
        { user: 'c', total: 2 },
      ],
      ctx,
    );
    const [{ file, text }] = await download(prefix);
    // rows sorted by their JSON text within the object: "a\rb" before "c"
    expect(text).toBe('user,total\r\n"a\rb",1.5\r\nc,2.0\r\n');
    expect(await duck(`SELECT "user", total FROM read_csv('${file}', header = true) ORDER BY total`)).toEqual([
      { user: 'a\rb', total: 1.5 },
      { user: 'c', total: 2 },
    ]);
    expect(() => parseSinkUri(`s3://${bucket}/out?format=csv&lineSep=`)).toThrow(/option lineSep="" must be one character/);
  });
});

describe('a row the sink cannot write as its column says', () => {
  it('is refused by check, before any write, naming the column, the value and the fix; the other rows pass', () => {
    const sink = new S3CsvSink({ client: s3, bucket, prefix: `direct/${uniqueName('csv')}` });
    const ctx: SinkContext = {
      queryId: 'qid-1',
      queryName: 'totals',
      outputMode: 'update',
      columns: ['user', 'total', 'at'],
      columnTypes: { user: { type: 'STRING' }, total: { type: 'DOUBLE' }, at: { type: 'TIMESTAMP' } },
      keyColumns: ['user'],
    };
    const refused = sink.check(
      0,
      [
        { user: 'a', total: 1.5, at: '2026-10-01T12:00:00.000Z' },
        { user: 'b', total: 'ten', at: null },
        { user: 'c', total: 2, at: 'yesterday' },
      ],
      ctx,
    );
    expect(refused.map((r) => [r.index, r.reason])).toEqual([
      [1, expect.stringMatching(/column total \(DOUBLE\) holds "ten", which is not a DOUBLE: make the withColumn function return/)],
      [2, expect.stringMatching(/column at \(TIMESTAMP\) holds "yesterday", which is not a TIMESTAMP/)],
    ]);
  });
});
