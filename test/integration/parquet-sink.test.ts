/**
 * The Parquet sink (s3://…?format=parquet) on the local stack: real queries run through the
 * pipeline, every object is downloaded from s3rver and read back with DuckDB (a reader nobody
 * here wrote), and compared with the rows the query emitted. Replays after a crash add no object;
 * other content under a batch's key fails loudly.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { withDuckDb } from '../../lib/conformance/parquet-file';
import { buildExecutor, parseSinkUri, type PipelineConfig } from '../../lib/aws/pipeline';
import { BATCH_ID_COLUMN, S3ParquetSink } from '../../lib/aws/s3/parquet-sink';
import { InjectedCrash, InvalidOptionError } from '../../lib/engine/errors';
import { formatTimestamp } from '../../lib/engine/timestamps';
import type { OutputRow, SinkContext } from '../../lib/engine/ports';
import type { OutputMode } from '../../lib/engine/plan/types';
import { count, max, sum, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import type { CrashPoint } from '../../lib/engine/testing/crash';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { leaseClock, testClients, testConnection, uniqueName } from '../helpers/stack';

const { s3 } = testClients();
const bucket = uniqueName('parquet-sink');
const table = uniqueName('parquet-state');
let tmp: string;

beforeAll(async () => {
  await Promise.all([ensureBucket(s3, bucket), ensureStateTable(testClients().dynamodb, table)]);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-parquet-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

// ---- factories -------------------------------------------------------------------------------

const SCHEMA = 'user STRING, event_time TIMESTAMP, amount DOUBLE, qty LONG, n INT, flag BOOLEAN';

/** Every column type, a null in each, NaN and both infinities, millisecond and microsecond timestamps. */
const EVENTS: Array<Record<string, unknown>> = [
  { user: 'alice', event_time: '2026-10-01 12:00:00.000001', amount: 10.5, qty: 9007199254740991, n: 7, flag: true },
  { user: 'bob', event_time: '2026-10-01T12:04:59.999Z', amount: 'NaN', qty: -3, n: -2147483648, flag: false },
  { user: 'carol', event_time: '2026-10-02 00:00:00.123', amount: 'Infinity', qty: 0, n: 2147483647, flag: true },
  { user: 'dave', event_time: '2026-10-02 23:59:59.999999', amount: '-Infinity', qty: 1, n: 0, flag: false },
  { user: null, event_time: '2026-10-01 13:00:00', amount: null, qty: null, n: null, flag: null },
  { user: 'éric ✓', event_time: null, amount: -0.25, qty: 42, n: 1, flag: true },
];

function stateless(name: string) {
  return readStream.format('json').schema(SCHEMA).load().writeStream.outputMode('append').trigger({ availableNow: true }).queryName(name).plan();
}

function windowed(name: string, outputMode: OutputMode) {
  return readStream
    .format('json')
    .schema(SCHEMA)
    .load()
    .withWatermark('event_time', '10 minutes')
    .groupBy(window('event_time', '10 minutes'), 'user')
    .agg(sum('amount').as('total'), count().as('events'), max('flag').as('any_flag'))
    .writeStream.outputMode(outputMode)
    .trigger({ availableNow: true })
    .queryName(name)
    .plan();
}

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

/** Every key under `prefix/` (relative), sorted, with its ETag. */
async function objectsUnder(prefix: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let after: string | undefined;
  for (;;) {
    const res = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}/`, StartAfter: after }));
    for (const c of res.Contents ?? []) out.set(c.Key!.slice(prefix.length + 1), c.ETag!);
    if (!res.IsTruncated) break;
    after = res.Contents![res.Contents!.length - 1].Key;
  }
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** Downloads every Parquet object under `prefix/` to a folder of its own; returns the local paths. */
async function download(prefix: string): Promise<string[]> {
  const dir = fs.mkdtempSync(path.join(tmp, 'dl-'));
  const files: string[] = [];
  for (const key of (await objectsUnder(prefix)).keys()) {
    if (!key.endsWith('.parquet')) continue;
    const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: `${prefix}/${key}` }));
    const file = path.join(dir, key.replace(/\//g, '__'));
    fs.writeFileSync(file, await res.Body!.transformToByteArray());
    files.push(file);
  }
  return files;
}

/** Runs `sql` in DuckDB, `{files}` standing for the list of files; values as JavaScript (bigints as numbers). */
async function duck(sql: string, files: string[]): Promise<Array<Record<string, unknown>>> {
  const list = `[${files.map((f) => `'${f}'`).join(', ')}]`;
  const reader = await withDuckDb((conn) => conn.runAndReadAll(sql.replace(/\{files\}/g, list)));
  return reader.getRowObjectsJS().map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])));
}

/** A DuckDB epoch-µs value (epoch_us) as sluice's output spells a timestamp. */
const iso = (us: unknown) => (us === null ? null : formatTimestamp(us as number));
/** A DuckDB double as sluice's output spells it ("NaN", "Infinity", "-Infinity" as strings). */
const dbl = (v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v);

const byJson = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).sort();

/** The rows a run emitted, each with the batch that wrote it (the sink's batch_id column). */
function emitted(report: { batches: Array<{ batchId: number; rows?: OutputRow[] }> }): OutputRow[] {
  return report.batches.flatMap((b) => (b.rows ?? []).map((r) => ({ ...r, [BATCH_ID_COLUMN]: b.batchId })));
}

// ---- scenarios --------------------------------------------------------------------------------

describe('when a stateless query writes every column type, partitioned by the day of a timestamp', () => {
  const base = uniqueName('stateless');
  const sinkPrefix = `${base}/sink`;
  let report: Awaited<ReturnType<ReturnType<typeof buildExecutor>['executor']['run']>>;
  let files: string[];

  beforeAll(async () => {
    await drop(base, '001.json', EVENTS);
    const uri = `s3://${bucket}/${sinkPrefix}?format=parquet&partitionBy=event_time&granularity=day`;
    report = await buildExecutor(testConnection(), stateless('pq-stateless'), pipeline(base, uri)).executor.run({ collectRows: true });
    files = await download(sinkPrefix);
  });

  it('lays the objects out Hive-style, one folder per day (nulls in __HIVE_DEFAULT_PARTITION__), then the log', async () => {
    expect([...(await objectsUnder(sinkPrefix)).keys()]).toEqual([
      '_sink_log/0000000000',
      'event_time=2026-10-01/part-0000000000-00001.parquet',
      'event_time=2026-10-02/part-0000000000-00002.parquet',
      'event_time=__HIVE_DEFAULT_PARTITION__/part-0000000000-00000.parquet',
    ]);
  });

  it('DuckDB reads back exactly the rows the query emitted, nulls, NaN, ±Infinity and microseconds included', async () => {
    const rows = await duck(`SELECT "user", epoch_us(event_time) AS event_time, amount, qty, n, flag, batch_id FROM read_parquet({files})`, files);
    const asOutput = rows.map((r) => ({ ...r, event_time: iso(r.event_time), amount: dbl(r.amount) }));
    const expected = emitted(report);
    expect(expected).toHaveLength(EVENTS.length);
    expect(byJson(asOutput)).toEqual(byJson(expected));
    // the microsecond survives the file: 2026-10-01T12:00:00.000001Z is INT64 1790856000000001
    expect(await duck(`SELECT epoch_us(event_time) AS us FROM read_parquet({files}) WHERE "user" = 'alice'`, files)).toEqual([{ us: 1790856000000001 }]);
    expect(asOutput.find((r) => (r as Record<string, unknown>).user === 'alice')?.event_time).toBe('2026-10-01T12:00:00.000001Z');
    // NaN stays NaN (not a null or a string) in the file: DuckDB's isnan sees it.
    expect(await duck(`SELECT count(*) AS c FROM read_parquet({files}) WHERE isnan(amount)`, files)).toEqual([{ c: 1 }]);
    expect(await duck(`SELECT count(*) AS c FROM read_parquet({files}) WHERE isinf(amount)`, files)).toEqual([{ c: 2 }]);
  });

  it('types the columns as Spark does: UTC timestamps in INT64, LONG as INT64, INT as INT32, SNAPPY', async () => {
    const schema = await duck(`SELECT name, type, converted_type, logical_type FROM parquet_schema('${files[0]}') WHERE name <> 'schema'`, [files[0]]);
    const byName = Object.fromEntries(schema.map((s) => [s.name, s]));
    expect(byName.user).toMatchObject({ type: 'BYTE_ARRAY', converted_type: 'UTF8' });
    expect(byName.event_time).toMatchObject({ type: 'INT64', converted_type: 'TIMESTAMP_MICROS' });
    expect(String(byName.event_time.logical_type)).toMatch(/TimestampType\(isAdjustedToUTC=1, unit=TimeUnit\(MILLIS=<null>, MICROS=MicroSeconds\(\)/);
    expect(byName.amount).toMatchObject({ type: 'DOUBLE' });
    expect(byName.qty).toMatchObject({ type: 'INT64', converted_type: null });
    expect(byName.n).toMatchObject({ type: 'INT32' });
    expect(byName.flag).toMatchObject({ type: 'BOOLEAN' });
    expect(byName.batch_id).toMatchObject({ type: 'INT64' });
    const types = await duck(`SELECT typeof(event_time) AS t FROM read_parquet({files}) LIMIT 1`, files);
    expect(types).toEqual([{ t: 'TIMESTAMP WITH TIME ZONE' }]);
    const codecs = await duck(`SELECT DISTINCT compression FROM parquet_metadata({files})`, files);
    expect(codecs).toEqual([{ compression: 'SNAPPY' }]);
  });
});

describe('when a windowed aggregation writes in update mode over two runs', () => {
  const base = uniqueName('update');
  const sinkPrefix = `${base}/sink`;

  it('writes window as a struct of two UTC timestamps, and a reader gets the latest row per key by batch_id', async () => {
    const uri = `s3://${bucket}/${sinkPrefix}?format=parquet&partitionBy=window.start&granularity=hour`;
    const plan = windowed('pq-update', 'update');
    await drop(base, '001.json', EVENTS.slice(0, 2));
    const first = await buildExecutor(testConnection(), plan, pipeline(base, uri)).executor.run({ collectRows: true });
    await drop(base, '002.json', [{ user: 'alice', event_time: '2026-10-01 12:05:00', amount: 1, qty: 1, n: 1, flag: false }]);
    const second = await buildExecutor(testConnection(), plan, pipeline(base, uri)).executor.run({ collectRows: true });
    const all = [...emitted(first), ...emitted(second)];
    // alice's 12:00 window is emitted by both runs: two rows for one key.
    expect(all.filter((r) => r.user === 'alice').length).toBe(2);

    const files = await download(sinkPrefix);
    const select = `SELECT epoch_us("window"."start") AS ws, epoch_us("window"."end") AS we, "user", total, events, any_flag, batch_id`;
    const toOutput = (r: Record<string, unknown>) => {
      const { ws, we, ...rest } = r;
      return { window: { start: iso(ws), end: iso(we) }, ...rest, total: dbl(r.total) };
    };
    const read = (await duck(`${select} FROM read_parquet({files})`, files)).map(toOutput);
    expect(byJson(read)).toEqual(byJson(all));

    // The README's query for the latest value per key: the row of the highest batch_id.
    const latestSql = `SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY "window"."start", "window"."end", "user" ORDER BY batch_id DESC) AS rn FROM read_parquet({files})) WHERE rn = 1`;
    const latest = (await duck(`${select} FROM (${latestSql})`, files)).map(toOutput);
    const lastPerKey = new Map<string, OutputRow>();
    for (const r of all) lastPerKey.set(JSON.stringify([r.window, r.user]), r);
    expect(byJson(latest)).toEqual(byJson([...lastPerKey.values()]));
    expect(latest.find((r) => (r as { user?: unknown }).user === 'alice')).toMatchObject({ total: 11.5, events: 2 });

    const types = await duck(`SELECT typeof("window") AS t FROM read_parquet({files}) LIMIT 1`, files);
    expect(types).toEqual([{ t: 'STRUCT("start" TIMESTAMP WITH TIME ZONE, "end" TIMESTAMP WITH TIME ZONE)' }]);
  });
});

describe('when a windowed aggregation writes in complete mode over two runs', () => {
  it('the rows of the highest batch_id are the whole result table', async () => {
    const base = uniqueName('complete');
    const uri = `s3://${bucket}/${base}/sink?format=parquet`;
    const plan = windowed('pq-complete', 'complete');
    await drop(base, '001.json', EVENTS.slice(0, 4));
    await buildExecutor(testConnection(), plan, pipeline(base, uri)).executor.run();
    await drop(base, '002.json', [{ user: 'alice', event_time: '2026-10-01 12:05:00', amount: 1, qty: 1, n: 1, flag: false }]);
    const second = await buildExecutor(testConnection(), plan, pipeline(base, uri)).executor.run({ collectRows: true });
    const files = await download(`${base}/sink`);
    const rows = await duck(
      `SELECT "user", total, events FROM read_parquet({files}) WHERE batch_id = (SELECT max(batch_id) FROM read_parquet({files}))`,
      files,
    );
    const last = emitted(second).map((r) => ({ user: r.user, total: r.total, events: r.events }));
    expect(last).toHaveLength(4);
    expect(byJson(rows.map((r) => ({ ...r, total: dbl(r.total) })))).toEqual(byJson(last));
    expect(rows.find((r) => r.user === 'alice')).toMatchObject({ total: 11.5, events: 2 });
  });
});

describe.each<CrashPoint>(['mid-sink', 'after-sink'])('when a run crashes at %s and the next run replays the batch', (point) => {
  it('the replay adds no object and rewrites none: the prefix holds what a run that never failed writes', async () => {
    const base = uniqueName(`crash-${point}`);
    const uri = (p: string) => `s3://${bucket}/${p}?format=parquet&partitionBy=event_time&granularity=day`;
    const plan = stateless(`pq-crash-${point}`);
    await drop(base, '001.json', EVENTS);
    const time = leaseClock();
    const crashed = buildExecutor(testConnection(), plan, pipeline(base, uri(`${base}/sink`)), { crash: { point }, clock: time.clock });
    await expect(crashed.executor.run()).rejects.toBeInstanceOf(InjectedCrash);
    const afterCrash = await objectsUnder(`${base}/sink`);
    expect([...afterCrash.keys()].filter((k) => k.endsWith('.parquet')).length).toBeGreaterThan(0);
    if (point === 'mid-sink') expect(afterCrash.has('_sink_log/0000000000')).toBe(false);

    time.waitOutLease();
    const report = await buildExecutor(testConnection(), plan, pipeline(base, uri(`${base}/sink`)), { clock: time.clock }).executor.run();
    expect(report.batches[0]).toMatchObject({ batchId: 0, replay: true });
    const afterReplay = await objectsUnder(`${base}/sink`);
    // The objects the crashed attempt wrote are still the same objects (same ETags: not rewritten).
    for (const [key, etag] of afterCrash) expect(afterReplay.get(key)).toBe(etag);

    // A run that never failed, of the same input on a prefix of its own, writes the same keys and bytes.
    const clean = uniqueName(`clean-${point}`);
    await drop(clean, '001.json', EVENTS);
    await buildExecutor(testConnection(), stateless(`pq-clean-${point}`), pipeline(clean, uri(`${clean}/sink`))).executor.run();
    const reference = await objectsUnder(`${clean}/sink`);
    expect([...afterReplay.keys()]).toEqual([...reference.keys()]);
    for (const [key, etag] of reference) if (key.endsWith('.parquet')) expect(afterReplay.get(key)).toBe(etag);
    // And every object is listed by the log.
    const sink = new S3ParquetSink({ client: s3, bucket, prefix: `${base}/sink` });
    expect((await sink.readLog(0))!.objects.map((o) => o.key).sort()).toEqual([...afterReplay.keys()].filter((k) => k.endsWith('.parquet')));
  });
});

// ---- the sink on its own -------------------------------------------------------------------------

const ctx: SinkContext = {
  queryId: 'qid-1',
  queryName: 'totals',
  outputMode: 'update',
  columns: ['window', 'user', 'total'],
  columnTypes: { window: 'WINDOW', user: { type: 'STRING' }, total: { type: 'DOUBLE' } },
  keyColumns: ['window', 'user'],
};

function windowRow(
  user: string | null,
  total: number | string | null,
  window: OutputRow['window'] = { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' },
): OutputRow {
  return { window, user, total };
}

function newSink(over: Partial<ConstructorParameters<typeof S3ParquetSink>[0]> = {}) {
  const prefix = `direct/${uniqueName('pq')}`;
  return { prefix, sink: new S3ParquetSink({ client: s3, bucket, prefix, ...over }) };
}

describe('when the sink is handed rows directly', () => {
  it('writes a null window, and a window with null bounds, as DuckDB reads them', async () => {
    const { prefix, sink } = newSink();
    await sink.addBatch(2, [windowRow('a', 1), windowRow('b', null, null), windowRow(null, 'NaN', { start: '2026-10-01T12:00:00.000Z', end: null })], ctx);
    const files = await download(prefix);
    expect(files).toHaveLength(1);
    const rows = await duck(
      `SELECT epoch_us("window"."start") AS ws, epoch_us("window"."end") AS we, "window" IS NULL AS wnull, "user", total, batch_id FROM read_parquet({files}) ORDER BY "user" NULLS LAST`,
      files,
    );
    expect(rows.map((r) => ({ ...r, total: dbl(r.total) }))).toEqual([
      { ws: Date.UTC(2026, 9, 1, 12) * 1000, we: Date.UTC(2026, 9, 1, 12, 10) * 1000, wnull: false, user: 'a', total: 1, batch_id: 2 },
      { ws: null, we: null, wnull: true, user: 'b', total: null, batch_id: 2 },
      { ws: Date.UTC(2026, 9, 1, 12) * 1000, we: null, wnull: false, user: null, total: 'NaN', batch_id: 2 },
    ]);
  });

  it('without partitionBy, writes part-<N>-<n>.parquet and the log; an empty batch writes the log alone', async () => {
    const { prefix, sink } = newSink();
    await sink.addBatch(0, [windowRow('a', 1)], ctx);
    await sink.addBatch(1, [], ctx);
    expect([...(await objectsUnder(prefix)).keys()]).toEqual(['_sink_log/0000000000', '_sink_log/0000000001', 'part-0000000000-00000.parquet']);
    expect(await sink.committedBatches()).toEqual([0, 1]);
    expect((await sink.readLog(1))!.objects).toEqual([]);
  });

  it('a replay of the same rows in another order passes and adds nothing; other rows under the same key fail loudly', async () => {
    const { prefix, sink } = newSink({ partitionBy: 'user' });
    const rows = [windowRow('a', 1), windowRow('a', 2, { start: '2026-10-01T12:10:00.000Z', end: '2026-10-01T12:20:00.000Z' }), windowRow('b', 3)];
    await sink.addBatch(5, rows, ctx);
    const before = await objectsUnder(prefix);
    await sink.addBatch(5, [...rows].reverse(), ctx);
    expect(await objectsUnder(prefix)).toEqual(before);
    await expect(sink.addBatch(5, [windowRow('a', 1), windowRow('a', 99), windowRow('b', 3)], ctx)).rejects.toThrow(
      /object user=a\/part-0000000005-00000\.parquet of batch 5, s3:\/\/\S+ already holds other content \(\d+ bytes, this write \d+\), and it is write-once/,
    );
    expect(await objectsUnder(prefix)).toEqual(before);
  });

  it('refuses a context without column types, and a query with its own batch_id column', async () => {
    const { sink } = newSink();
    const { columnTypes: _dropped, ...untyped } = ctx;
    await expect(sink.addBatch(0, [windowRow('a', 1)], untyped)).rejects.toThrow(InvalidOptionError);
    await expect(
      sink.addBatch(0, [], { ...ctx, columns: [...ctx.columns, 'batch_id'], columnTypes: { ...ctx.columnTypes, batch_id: { type: 'LONG' } } }),
    ).rejects.toThrow(/appends a column batch_id/);
  });

  it('refuses a value of another type than its column with the column, the value and the fix', async () => {
    const { sink } = newSink();
    await expect(sink.addBatch(0, [windowRow('a', 'ten')], ctx)).rejects.toThrow(
      /column total \(DOUBLE\) holds "ten", which is not a DOUBLE: make the withColumn function return/,
    );
  });
});

describe('when the sink URI names a format', () => {
  it('accepts format=parquet and format=json, and refuses another with the value and the choices', () => {
    expect(parseSinkUri('s3://b-1/out?format=parquet&partitionBy=window.start&granularity=day')).toEqual({
      kind: 's3-files',
      bucket: 'b-1',
      prefix: 'out',
      format: 'parquet',
      partitionBy: 'window.start',
      partitionGranularity: 'day',
    });
    expect(parseSinkUri('s3://b-1/out?format=json')).toEqual({ kind: 's3-files', bucket: 'b-1', prefix: 'out', format: 'json' });
    expect(() => parseSinkUri('s3://b-1/out?format=orc')).toThrow(InvalidOptionError);
    expect(() => parseSinkUri('s3://b-1/out?format=orc')).toThrow(/format "orc" is not one the S3 file sink writes: write format=json or format=parquet/);
  });
});

describe('when a stateless batch is streamed to the sink (addBatchChunks)', () => {
  it('writes an object each time one holds maxRowsPerObject rows, before the next chunk; DuckDB reads every row once', async () => {
    const { prefix, sink } = newSink({ maxRowsPerObject: 2 });
    const rows = ['a', 'b', 'c', 'd', 'e'].map((u, i) => windowRow(u, i));
    const seen: number[] = [];
    async function* chunks() {
      for (const c of [rows.slice(0, 3), rows.slice(3)]) {
        seen.push((await objectsUnder(prefix)).size);
        yield c;
      }
    }
    await sink.addBatchChunks(4, chunks(), { ...ctx, keyColumns: [] });
    expect(seen).toEqual([0, 1]); // the first object (a, b) was written while chunk 0 was at hand
    expect([...(await objectsUnder(prefix)).keys()]).toEqual([
      '_sink_log/0000000004',
      'part-0000000004-00000.parquet',
      'part-0000000004-00001.parquet',
      'part-0000000004-00002.parquet',
    ]);
    const files = await download(prefix);
    const read = await duck(`SELECT "user", total, batch_id FROM read_parquet({files}) ORDER BY "user"`, files);
    expect(read).toEqual(rows.map((r) => ({ user: r.user, total: r.total, batch_id: 4 })));
  });
});
