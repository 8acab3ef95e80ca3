/**
 * Nested data in the query API (issue 29): paths into STRUCT, ARRAY and MAP values, `struct.*`,
 * the explode family and nested grouping keys, run on the in-memory ports; and Spark's analysis
 * errors when the query is built. Expected rows are worked out from Spark's rules by hand.
 */
import type { QueryPlan } from '../../lib/engine/plan/types';
import { runPlanOnce } from '../helpers/run-plan';
import { count, explode, explodeOuter, posexplode, readStream, window } from '../../lib/api/query';
import { outputColumns } from '../../lib/engine/plan/chain';

const SCHEMA =
  'id STRING, ts TIMESTAMP, customer STRUCT<name: STRING, address: STRUCT<country: STRING, zip: INT>>, tags ARRAY<STRING>, attrs MAP<STRING, BIGINT>';
const input = () => readStream.format('json').schema(SCHEMA).load();
/** The same frame with a schema the types cannot read, as a query built from configuration has: the analysis alone checks it. */
const loose = () =>
  readStream
    .format('json')
    .schema(SCHEMA as string)
    .load();

const RECORDS = [
  { id: 'a', ts: '2026-10-01 12:01:00', customer: { name: 'Ann', address: { country: 'FR', zip: 75001 } }, tags: ['x', 'y'], attrs: { n: 1, m: 2 } },
  { id: 'b', ts: '2026-10-01 12:02:00', customer: { name: 'Bob', address: null }, tags: [], attrs: null },
  { id: 'c', ts: '2026-10-01 12:03:00', customer: null, tags: null, attrs: {} },
];

async function run(plan: QueryPlan, records: Record<string, unknown>[] = RECORDS) {
  return runPlanOnce(plan, records);
}

describe('paths in select', () => {
  it('takes a field (named by its last part), an element and a map value (named by the path); a null on the way is null', async () => {
    const plan = input().select('id', 'customer.address.country', 'tags[1]', "attrs['m']").writeStream.plan();
    expect(outputColumns(plan).map((c) => [c.name, c.type])).toEqual([
      ['id', 'STRING'],
      ['country', 'STRING'],
      ['tags[1]', 'STRING'],
      ['attrs[m]', 'LONG'],
    ]);
    // b: tags is empty, so tags[1] is out of bounds: a dead letter (FORMAT-3 departure 2); c: nulls all the way
    const { rows, report } = await run(plan);
    expect(rows).toEqual([
      { id: 'a', country: 'FR', 'tags[1]': 'y', 'attrs[m]': 2 },
      { id: 'c', country: null, 'tags[1]': null, 'attrs[m]': null },
    ]);
    expect(report.deadLetters).toBe(1);
  });

  it("writes the out-of-bounds row to the dead letters with Spark's [INVALID_ARRAY_INDEX]", async () => {
    const plan = input().select('id', 'tags[1]').writeStream.plan();
    const { deadLetters } = await run(plan);
    const written = JSON.stringify([...deadLetters.records.values()]);
    expect(written).toContain('[INVALID_ARRAY_INDEX] The index 1 is out of bounds. The array has 0 elements.');
    expect(written).toContain('\\"id\\":\\"b\\"');
  });

  it('expands struct.* into its fields', async () => {
    const plan = input().select('id', 'customer.*').writeStream.plan();
    expect(outputColumns(plan).map((c) => c.name)).toEqual(['id', 'name', 'address']);
    const { rows } = await run(plan);
    expect(rows[0]).toEqual({ id: 'a', name: 'Ann', address: { country: 'FR', zip: 75001 } });
    expect(rows[2]).toEqual({ id: 'c', name: null, address: null });
  });
});

describe("paths into an aggregation's window column", () => {
  it("take its start and end, as Spark's STRUCT<start, end>, in select, filter and withColumn", async () => {
    const agg = () => readStream.format('json').schema('k STRING, t TIMESTAMP').load().groupBy(window('t', '10 minutes'), 'k').agg(count('*').as('n'));
    const records = [{ k: 'x', t: '2026-10-01 12:03:00' }];
    const selected = await runPlanOnce(agg().select('window.start', 'window.end', 'k').writeStream.outputMode('update').plan(), records);
    expect(selected.rows).toEqual([{ start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z', k: 'x' }]);
    const plan = agg().filter("window.start < '2026-10-01 12:00:00'").withColumn('s', 'window.start').writeStream.outputMode('update').plan();
    expect((await runPlanOnce(plan, records)).rows).toEqual([]);
    const starred = await runPlanOnce(agg().select('window.*', 'n').writeStream.outputMode('update').plan(), records);
    expect(starred.rows).toEqual([{ start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z', n: 1 }]);
    // @ts-expect-error the types refuse it too
    expect(() => agg().select('window.middle')).toThrow(/FIELD_NOT_FOUND.*"middle".*its fields are start, end/);
  });
});

describe('explode', () => {
  it('gives one row per element (col), none for an empty or null array', async () => {
    const { rows } = await run(input().select('id', explode('tags')).writeStream.plan());
    expect(rows).toEqual([
      { id: 'a', col: 'x' },
      { id: 'a', col: 'y' },
    ]);
  });
  it('explode_outer gives one row of nulls for an empty or null array', async () => {
    const { rows } = await run(input().select('id', explodeOuter('tags').as('tag')).writeStream.plan());
    expect(rows).toEqual([
      { id: 'a', tag: 'x' },
      { id: 'a', tag: 'y' },
      { id: 'b', tag: null },
      { id: 'c', tag: null },
    ]);
  });
  it('posexplode of a map gives pos, key, value', async () => {
    const plan = input().select('id', posexplode('attrs')).writeStream.plan();
    expect(outputColumns(plan).map((c) => [c.name, c.type])).toEqual([
      ['id', 'STRING'],
      ['pos', 'INT'],
      ['key', 'STRING'],
      ['value', 'LONG'],
    ]);
    const { rows } = await run(plan);
    expect(rows).toEqual([
      { id: 'a', pos: 0, key: 'n', value: 1 },
      { id: 'a', pos: 1, key: 'm', value: 2 },
    ]);
  });
  it('a watermark before explode sees each record once; the aggregate counts each element', async () => {
    const plan = input()
      .withWatermark('ts', '1 minute')
      .select('ts', explode('tags').as('tag'))
      .groupBy(window('ts', '10 minutes'), 'tag')
      .agg(count().as('n'))
      .writeStream.outputMode('update')
      .plan();
    const { report } = await run(plan);
    // max event time 12:03 (record c, which has no element) − 1 minute
    expect(report.watermark).toBe('2026-10-01T12:02:00.000Z');
    expect(report.batches[0].rows.map((r) => [r.tag, r.n]).sort()).toEqual([
      ['x', 1],
      ['y', 1],
    ]);
  });
});

describe('grouping on a nested field', () => {
  it('names the key by its last part', async () => {
    const plan = input().groupBy('customer.address.country').agg(count().as('n')).writeStream.outputMode('complete').plan();
    expect(outputColumns(plan).map((c) => c.name)).toEqual(['country', 'n']);
    const { rows } = await run(plan);
    expect([...rows].sort((a, b) => String(a.country).localeCompare(String(b.country)))).toEqual([
      { country: 'FR', n: 1 },
      { country: null, n: 2 },
    ]);
  });
});

describe("Spark's analysis errors, when the query is built", () => {
  it('an unknown nested field names the field and the struct’s fields', () => {
    expect(() => loose().select('customer.address.contry')).toThrow(
      /\[FIELD_NOT_FOUND\] no such struct field "contry" in customer\.address \(STRUCT<country: STRING, zip: INT>\); its fields are country, zip/,
    );
    expect(() => loose().groupBy('customer.nme')).toThrow(/\[FIELD_NOT_FOUND\].*its fields are name, address/);
  });
  it('a path into a value without parts, or an index into a map', () => {
    expect(() => loose().select('id.x')).toThrow(/\[INVALID_EXTRACT_BASE_FIELD_TYPE\].*id.*STRING/);
    expect(() => loose().select('attrs[0]')).toThrow(/attrs is a MAP.*quote the key/);
  });
  it('explode of something that is neither an ARRAY nor a MAP; two generators in one select', () => {
    expect(() => loose().select(explode('customer'))).toThrow(/\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\].*explode\(customer\).*STRUCT/);
    expect(() => loose().select(explode('tags'), explode('attrs'))).toThrow(/UNSUPPORTED_GENERATOR\.MULTI_GENERATOR/);
  });
  it('an unknown column of a path', () => {
    expect(() => loose().select('cust.name')).toThrow(/\[UNRESOLVED_COLUMN\] column "cust" of "cust.name" does not exist/);
  });
});

describe('a field of an ARRAY of STRUCTs (Spark: the field of every element)', () => {
  const orders = () => readStream.format('json').schema('id STRING, lines ARRAY<STRUCT<sku: STRING, qty: INT>>').load();
  const RECS = [
    { id: 'o1', lines: [{ sku: 'A', qty: 2 }, null, { sku: 'B' }] },
    { id: 'o2', lines: [] },
    { id: 'o3', lines: null },
  ];

  it('select(lines.sku) is an ARRAY<STRING> named sku; a null element or field is null, a null array null', async () => {
    const plan = orders().select('id', 'lines.sku', 'lines.qty').writeStream.plan();
    expect(outputColumns(plan).map((c) => [c.name, c.type, c.element?.type])).toEqual([
      ['id', 'STRING', undefined],
      ['sku', 'ARRAY', 'STRING'],
      ['qty', 'ARRAY', 'INT'],
    ]);
    const { rows } = await run(plan, RECS);
    expect(rows).toEqual([
      { id: 'o1', sku: ['A', null, 'B'], qty: [2, null, null] },
      { id: 'o2', sku: [], qty: [] },
      { id: 'o3', sku: null, qty: null },
    ]);
  });

  it('the same in an expression, and an element of it by index', async () => {
    const plan = orders()
      .selectExpr('id', 'lines.sku AS skus', 'size(lines.qty) AS n')
      .filter('n > 0')
      .selectExpr('id', 'skus[0] AS first_sku')
      .writeStream.plan();
    const { rows } = await run(plan, RECS);
    expect(rows).toEqual([{ id: 'o1', first_sku: 'A' }]);
  });

  it('an unknown field of the elements is refused when built', () => {
    // @ts-expect-error the types refuse it too
    expect(() => orders().select('id', 'lines.skuu')).toThrow(/FIELD_NOT_FOUND.*skuu.*sku, qty/);
  });
});
