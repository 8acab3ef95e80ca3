/**
 * Stream-static joins on the in-memory ports: the output rows and columns of each join type, the
 * refusals (Spark's texts for rightOuter/fullOuter), a join after an aggregation, and how often a
 * run reads its tables (once per run, whole or by the keys a chunk holds).
 */
import { InvalidOptionError, InvalidQueryError } from '../../lib/engine/errors';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { count, window } from '../../lib/engine/query/functions';
import { staticTable } from '../../lib/engine/query/static-table';
import { readStream } from '../../lib/engine/query/reader';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';
import { InMemoryStaticTables } from '../../lib/engine/testing/memory-static-tables';
import { csvRecords } from '../../lib/aws/s3/static-table';

const orders = () => readStream.format('json').schema('orderId INT, sku STRING, qty LONG, at TIMESTAMP').option('maxFilesPerTrigger', 1).load();
const catalog = staticTable.rows('sku STRING, name STRING, price DOUBLE', [
  { sku: 'a', name: 'apple', price: 1.5 },
  { sku: 'a', name: 'apricot', price: 2.5 },
  { sku: 'b', name: 'banana', price: 0.5 },
  { sku: null, name: 'nothing', price: 0 },
]);

async function runOnce(plan: QueryPlan, files: Array<Array<Record<string, unknown>>>, tables?: InMemoryStaticTables) {
  const source = new InMemoryFileSource(plan.source.schema);
  files.forEach((rows, i) => source.add(`f${i}.json`, rows));
  const sink = new InMemorySink();
  const executor = new MicroBatchExecutor({ plan, source, checkpoint: new InMemoryCheckpoint(), state: new InMemoryStateStore(), sink, staticTables: tables });
  const report = await executor.run({ collectRows: true });
  return { report, executor, sink, rows: report.batches.flatMap((b) => b.rows) };
}

const o = (orderId: number, sku: string | null, qty = 1, at = '2026-01-01 00:00:00') => ({ orderId, sku, qty, at });

describe('a stream-static join', () => {
  it('inner: a row per match, the string key first, then the stream columns, then the table columns', async () => {
    const plan = orders().join(catalog, 'sku').writeStream.plan();
    const { rows, executor } = await runOnce(plan, [[o(1, 'a'), o(2, 'c'), o(3, null), o(4, 'b')]]);
    expect(executor.sinkContext.columns).toEqual(['sku', 'orderId', 'qty', 'at', 'name', 'price']);
    // a has two partners, c none, null never matches (not even the table's null key)
    expect(rows.map((r) => [r.orderId, r.name])).toEqual([
      [1, 'apple'],
      [1, 'apricot'],
      [4, 'banana'],
    ]);
    expect(rows[0]).toEqual({ sku: 'a', orderId: 1, qty: 1, at: '2026-01-01T00:00:00.000Z', name: 'apple', price: 1.5 });
  });

  it('leftOuter: an unmatched row at once with nulls; leftSemi: a matched row once, unchanged', async () => {
    const outer = await runOnce(orders().join(catalog, 'sku', 'left_outer').writeStream.plan(), [[o(2, 'c'), o(3, null)]]);
    expect(outer.rows).toEqual([
      { sku: 'c', orderId: 2, qty: 1, at: '2026-01-01T00:00:00.000Z', name: null, price: null },
      { sku: null, orderId: 3, qty: 1, at: '2026-01-01T00:00:00.000Z', name: null, price: null },
    ]);
    const semi = await runOnce(orders().join(catalog, 'sku', 'leftSemi').writeStream.plan(), [[o(1, 'a'), o(2, 'c'), o(4, 'b')]]);
    expect(semi.executor.sinkContext.columns).toEqual(['orderId', 'sku', 'qty', 'at']);
    expect(semi.rows.map((r) => r.orderId)).toEqual([1, 4]);
  });

  it('leftAnti: the rows without a match, unchanged, a null key among them (it matches nothing, not even the null key of the table)', async () => {
    const anti = await runOnce(orders().join(catalog, 'sku', 'left_anti').writeStream.plan(), [[o(1, 'a'), o(2, 'c'), o(3, null), o(4, 'b'), o(5, 'c')]]);
    expect(anti.executor.sinkContext.columns).toEqual(['orderId', 'sku', 'qty', 'at']);
    expect(anti.rows.map((r) => r.orderId)).toEqual([2, 3, 5]);
    expect(anti.rows[0]).toEqual({ orderId: 2, sku: 'c', qty: 1, at: '2026-01-01T00:00:00.000Z' });
    // with a condition: a key match that fails it is no match
    const cheap = await runOnce(orders().join(catalog, 'sku', 'leftAnti', { condition: 'price < 1' }).writeStream.plan(), [[o(1, 'a'), o(4, 'b')]]);
    expect(cheap.rows.map((r) => r.orderId)).toEqual([1]);
  });

  it('a {left, right} key outputs both columns and matches INT with LONG', async () => {
    const names = staticTable.rows('id LONG, label STRING', [
      { id: 1, label: 'one' },
      { id: 3, label: 'three' },
    ]);
    const { rows } = await runOnce(
      orders()
        .join(names, [{ left: 'orderId', right: 'id' }])
        .select('orderId', 'id', 'label')
        .writeStream.plan(),
      [[o(1, 'a'), o(2, 'b'), o(3, 'c')]],
    );
    expect(rows).toEqual([
      { orderId: 1, id: 1, label: 'one' },
      { orderId: 3, id: 3, label: 'three' },
    ]);
  });

  it('a condition item on the table side: a pair that fails it is no match (leftOuter emits nulls)', async () => {
    const plan = orders()
      .join(catalog, 'sku', 'leftOuter', { condition: [{ column: 'price', op: '>', value: 2 }] })
      .select('orderId', 'name')
      .writeStream.plan();
    const { rows } = await runOnce(plan, [[o(1, 'a'), o(4, 'b')]]);
    expect(rows).toEqual([
      { orderId: 1, name: 'apricot' },
      { orderId: 4, name: null },
    ]);
  });

  it('after an aggregation: the closed windows joined with the table', async () => {
    const plan = orders()
      .withWatermark('at', '0 seconds')
      .groupBy(window('at', '1 minute'), 'sku')
      .agg(count().as('orders'))
      .join(catalog, 'sku', 'leftSemi')
      .writeStream.outputMode('append')
      .plan();
    const { rows } = await runOnce(plan, [
      [o(1, 'a', 1, '2026-01-01 00:00:10'), o(2, 'c', 1, '2026-01-01 00:00:20'), o(3, 'a', 1, '2026-01-01 00:00:30')],
      [o(4, 'b', 1, '2026-01-01 00:05:00')],
    ]);
    // the minute 00:00 closes when 00:05 arrives: a (2 orders) is in the table, c is not
    expect(rows).toEqual([{ window: { start: '2026-01-01T00:00:00.000Z', end: '2026-01-01T00:01:00.000Z' }, sku: 'a', orders: 2 }]);
  });

  it('between two stateful operators: deduplicated orders enriched, then counted per product name', async () => {
    // dropDuplicates(orderId) keeps 1 and 4 of the first file, 5 of the second; the join gives a
    // row per catalog partner (a: apple and apricot; b: banana), which the count then groups.
    const plan = orders().dropDuplicates(['orderId']).join(catalog, 'sku').groupBy('name').agg(count().as('n')).writeStream.outputMode('update').plan();
    const source = new InMemoryFileSource(plan.source.schema);
    const checkpoint = new InMemoryCheckpoint();
    const state = new InMemoryStateStore();
    const sink = new InMemorySink();
    const run = async (rows: Array<Record<string, unknown>>, name: string) => {
      source.add(name, rows);
      const report = await new MicroBatchExecutor({ plan, source, checkpoint, state, sink }).run({ collectRows: true });
      return report.batches
        .flatMap((b) => b.rows)
        .map((r) => [r.name, r.n])
        .sort();
    };
    expect(await run([o(1, 'a'), o(1, 'a'), o(4, 'b')], 'f1.json')).toEqual([
      ['apple', 1],
      ['apricot', 1],
      ['banana', 1],
    ]);
    expect(await run([o(5, 'b'), o(4, 'b')], 'f2.json')).toEqual([['banana', 2]]);
  });

  it("refuses rightOuter and fullOuter with Spark's messages, and join types sluice does not run", () => {
    expect(() => orders().join(catalog, 'sku', 'rightOuter')).toThrow(
      /RightOuter join with a streaming DataFrame\/Dataset on the left and a static DataFrame\/DataSet on the right not supported/,
    );
    expect(() => orders().join(catalog, 'sku', 'full_outer')).toThrow(
      /FullOuter joins with streaming DataFrames\/Datasets on the left and a static DataFrame\/Dataset on the right is not supported/,
    );
    expect(() => orders().join(catalog, 'sku', 'cross')).toThrow(
      /"cross" is not supported by sluice: a stream-static join is inner, leftOuter, leftSemi or leftAnti/,
    );
  });

  it('refuses a column name on both sides, an unknown key, keys of different types and a DynamoDB join off its key', () => {
    const clash = staticTable.rows('sku STRING, qty LONG', []);
    expect(() => orders().join(clash, 'sku')).toThrow(InvalidQueryError);
    expect(() => orders().join(clash, 'sku')).toThrow(/column qty is on both sides: rename it/);
    expect(() => orders().join(catalog, [{ left: 'nope' as 'sku', right: 'sku' }])).toThrow(/column "nope" does not exist/);
    expect(() => orders().join(catalog, [{ left: 'orderId', right: 'sku' }])).toThrow(/key orderId is INT on the stream side but sku is STRING in the table/);
    const users = staticTable.dynamodb('users', { key: 'sku', schema: 'sku STRING, name STRING' });
    expect(() => orders().join(users, [{ left: 'sku', right: 'name' }])).toThrow(/looked up by its key \(sku\), so `on` must name exactly those columns/);
  });

  it('refuses bad table options and bad rows with the value and the fix', () => {
    expect(() => staticTable.s3('bucket/key', { format: 'json', schema: 'a STRING' })).toThrow(InvalidOptionError);
    expect(() => staticTable.s3('s3://b/k', { format: 'parquet' as 'json', schema: 'a STRING' })).toThrow(/format "parquet" is not 'json'/);
    expect(() => staticTable.dynamodb('users', { key: 'since', schema: 'since TIMESTAMP' })).toThrow(/must be a STRING, INT or LONG column/);
    expect(() => staticTable.rows('n INT', [{ n: 1 }, { n: 'x' }])).toThrow(/row 2 .*column n \(INT\)/);
  });

  it('refuses a plan joining an S3 table when the executor has no staticTables port', () => {
    const plan = orders()
      .join(staticTable.s3('s3://bucket/ref/', { format: 'json', schema: 'sku STRING, name STRING' }), 'sku')
      .writeStream.plan();
    const build = () =>
      new MicroBatchExecutor({
        plan,
        source: new InMemoryFileSource(plan.source.schema),
        checkpoint: new InMemoryCheckpoint(),
        state: new InMemoryStateStore(),
        sink: new InMemorySink(),
      });
    expect(build).toThrow(/joins the static table s3:\/\/bucket\/ref\/, but the executor has no staticTables port/);
  });
});

describe('how a run reads its static tables', () => {
  const s3Table = staticTable.s3('s3://bucket/ref/', { format: 'json', schema: 'sku STRING, name STRING' });
  const ddbTable = staticTable.dynamodb('catalog', { key: 'sku', schema: 'sku STRING, name STRING' });
  const tableRows = [
    { sku: 'a', name: 'apple' },
    { sku: 'b', name: 'banana' },
  ];
  const files = [[o(1, 'a'), o(2, 'a'), o(3, 'z')], [o(4, 'b')], [o(5, 'a'), o(6, null)]];

  it('a table read whole is loaded once per run, however many batches the run has', async () => {
    const tables = new InMemoryStaticTables().put('s3://bucket/ref/', tableRows);
    const { report, rows } = await runOnce(orders().join(s3Table, 'sku').writeStream.plan(), files, tables);
    expect(report.batches.length).toBe(files.length);
    expect(rows.map((r) => r.orderId)).toEqual([1, 2, 4, 5]);
    expect(tables.counts.loads).toBe(1);
  });

  it('a new run reads the table again and sees it as it is then', async () => {
    const tables = new InMemoryStaticTables().put('s3://bucket/ref/', tableRows);
    const plan = orders().join(s3Table, 'sku').writeStream.plan();
    const source = new InMemoryFileSource(plan.source.schema);
    source.add('f0.json', [o(1, 'a')]);
    const executor = new MicroBatchExecutor({
      plan,
      source,
      checkpoint: new InMemoryCheckpoint(),
      state: new InMemoryStateStore(),
      sink: new InMemorySink(),
      staticTables: tables,
    });
    const first = await executor.run({ collectRows: true });
    tables.put('s3://bucket/ref/', [{ sku: 'a', name: 'avocado' }]);
    source.add('f1.json', [o(2, 'a')]);
    const second = await executor.run({ collectRows: true });
    expect([...first.batches, ...second.batches].flatMap((b) => b.rows.map((r) => r.name))).toEqual(['apple', 'avocado']);
    expect(tables.counts.loads).toBe(2);
  });

  it("a table looked up by key is asked for each chunk's distinct non-null keys only", async () => {
    const tables = new InMemoryStaticTables().put('dynamodb://catalog', tableRows);
    const { rows } = await runOnce(orders().join(ddbTable, 'sku', 'leftOuter').writeStream.plan(), files, tables);
    expect(rows.map((r) => [r.orderId, r.name])).toEqual([
      [1, 'apple'],
      [2, 'apple'],
      [3, null],
      [4, 'banana'],
      [5, 'apple'],
      [6, null],
    ]);
    // batch 0: a, z; batch 1: b; batch 2: a (the null key is never looked up)
    expect(tables.counts).toMatchObject({ lookups: 3, keysLookedUp: 4 });
  });
});

describe('the CSV records of an S3 static table', () => {
  it('splits on commas, keeps quoted commas, quotes and line breaks, and tells an empty quoted field from an empty one', () => {
    const recs = csvRecords('a,b,c\r\n1,"x, ""y""",\n\n2,"two\nlines",""\n');
    expect(recs.map((r) => r.line)).toEqual([1, 2, 4]);
    expect(recs[1].fields).toEqual([
      { text: '1', quoted: false },
      { text: 'x, "y"', quoted: true },
      { text: '', quoted: false },
    ]);
    expect(recs[2].fields.map((f) => f.text)).toEqual(['2', 'two\nlines', '']);
    expect(recs[2].fields[2].quoted).toBe(true);
  });
});

describe('when a stream-static join has a null key and a watermark', () => {
  // Spark infers isnotnull(sku) on the stream side of an inner (or semi) equi-join and pushes it
  // below withWatermark: a null-key row never reaches the watermark; in a left outer join it does
  const run = (type: string) =>
    runOnce(orders().withWatermark('at', '0 seconds').join(catalog, 'sku', type).writeStream.plan(), [
      [o(1, 'a', 1, '2026-01-01 00:00:05'), o(2, null, 1, '2026-01-01 00:00:50')],
    ]);
  it('leaves the null-key row out of an inner join, and of its watermark', async () => {
    const { report, rows } = await run('inner');
    // (the catalog has two rows for sku a)
    expect(rows.map((r) => r.orderId)).toEqual([1, 1]);
    expect(report.watermark).toBe('2026-01-01T00:00:05.000Z');
  });
  it('keeps it in a left outer join, which emits it with nulls and counts its time', async () => {
    const { report, rows } = await run('leftOuter');
    expect(rows.map((r) => r.orderId).sort()).toEqual([1, 1, 2]);
    expect(report.watermark).toBe('2026-01-01T00:00:50.000Z');
  });
});
