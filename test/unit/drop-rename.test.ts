/**
 * Spark's drop and withColumnRenamed on a frame (query/frame.ts): names matched in any case, a
 * name the frame does not have ignored, a renamed column in its place with its watermark.
 * Expectations worked by hand from the rows below.
 */
import { outputColumns } from '../../lib/engine/plan/chain';
import { count, readStream, window } from '../../lib/api/query';
import { runPlanOnce } from '../helpers/run-plan';

const input = () => readStream.format('json').schema('k STRING, t TIMESTAMP, a INT, debug STRING').load();
const ROWS = [
  { k: 'x', t: '2026-10-01 12:01:00', a: 1, debug: 'd1' },
  { k: 'x', t: '2026-10-01 12:12:00', a: 2, debug: 'd2' },
];

describe('drop', () => {
  it('leaves the named columns out, in any case, and ignores a name the frame does not have', async () => {
    const plan = input().drop('DEBUG', 'nothing').writeStream.plan();
    expect(outputColumns(plan).map((c) => c.name)).toEqual(['k', 't', 'a']);
    expect((await runPlanOnce(plan, ROWS.slice(0, 1))).rows).toEqual([{ k: 'x', t: '2026-10-01T12:01:00.000Z', a: 1 }]);
  });

  it('keeps a watermark, and drops an aggregation output column', async () => {
    const plan = input()
      .withWatermark('t', '1 minute')
      .drop('debug')
      .groupBy(window('t', '10 minutes'), 'k')
      .agg(count().as('n'))
      .drop('k')
      .writeStream.outputMode('append')
      .plan();
    // the watermark (12:11) closes the first window only
    expect((await runPlanOnce(plan, ROWS)).rows).toEqual([{ window: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' }, n: 1 }]);
  });

  it('refuses to leave no column, and a name that is not a string', () => {
    expect(() => input().drop('k', 't', 'a', 'debug')).toThrow(/leaves no column/);
    // @ts-expect-error a number is no column name
    expect(() => input().drop(1)).toThrow(/1 is not a column name/);
  });
});

describe('withColumnRenamed', () => {
  it('renames a column in its place, matched in any case; a frame without it is unchanged', async () => {
    const plan = input().withColumnRenamed('A', 'amount').withColumnRenamed('missing', 'x').writeStream.plan();
    expect(outputColumns(plan).map((c) => c.name)).toEqual(['k', 't', 'amount', 'debug']);
    expect((await runPlanOnce(plan, ROWS.slice(0, 1))).rows).toEqual([{ k: 'x', t: '2026-10-01T12:01:00.000Z', amount: 1, debug: 'd1' }]);
  });

  it('keeps the watermark of a renamed event-time column', async () => {
    const plan = input()
      .withWatermark('t', '1 minute')
      .withColumnRenamed('t', 'at')
      .groupBy(window('at', '10 minutes'))
      .agg(count().as('n'))
      .writeStream.outputMode('append')
      .plan();
    expect((await runPlanOnce(plan, ROWS)).rows).toEqual([{ window: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' }, n: 1 }]);
  });

  it("refuses another column's name: a row holds one column of a name", () => {
    expect(() => input().withColumnRenamed('a', 'K')).toThrow(/already has a column "k".*drop\('k'\) first/);
  });
});

describe('withColumns', () => {
  it('adds and replaces columns at once, each reading the columns as they were (a swap swaps)', async () => {
    const plan = input().withColumns({ A: 'a * 10', k: 'upper(k)', twice: 'a + a', debug: 'k' }).writeStream.plan();
    expect(outputColumns(plan).map((c) => c.name)).toEqual(['k', 't', 'A', 'debug', 'twice']);
    expect((await runPlanOnce(plan, ROWS.slice(0, 1))).rows).toEqual([{ k: 'X', t: '2026-10-01T12:01:00.000Z', A: 10, debug: 'x', twice: 2 }]);
  });

  it('keeps the watermark of a column it does not touch', async () => {
    const plan = input()
      .withWatermark('t', '1 minute')
      .withColumns({ a: 'a + 1' })
      .groupBy(window('t', '10 minutes'))
      .agg(count().as('n'))
      .writeStream.outputMode('append')
      .plan();
    expect((await runPlanOnce(plan, ROWS)).rows).toEqual([{ window: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' }, n: 1 }]);
  });

  it('refuses a name given twice, a generator and an empty object', () => {
    expect(() => input().withColumns({ x: 'a', X: 'k' })).toThrow(/COLUMN_ALREADY_EXISTS/);
    expect(() => input().withColumns({ x: 'explode(array(1, 2))' })).toThrow(/UNSUPPORTED_GENERATOR.OUTSIDE_SELECT/);
    expect(() => input().withColumns({})).toThrow(/pass an object of column names to expressions/);
  });
});

describe('withColumnsRenamed', () => {
  it('renames several columns, each as withColumnRenamed does', async () => {
    const plan = input().withColumnsRenamed({ a: 'amount', DEBUG: 'note', missing: 'x' }).writeStream.plan();
    expect(outputColumns(plan).map((c) => c.name)).toEqual(['k', 't', 'amount', 'note']);
  });
});

describe('dropna and fillna', () => {
  const wide = () => readStream.format('json').schema('k STRING, n INT, d DOUBLE, m DECIMAL(6,2), ok BOOLEAN').load();
  const ROWS2 = [
    { k: 'a', n: 1, d: 1.5, m: 1, ok: true },
    { k: null, n: null, d: 'NaN', m: null, ok: null },
    { k: 'c', n: null, d: 2.5, m: 3, ok: false },
  ];

  it('dropna drops a row with a null or a NaN (how any), or only when all are (how all), or keeps thresh values', async () => {
    const ks = async (frame: ReturnType<typeof wide>) => (await runPlanOnce(frame.writeStream.plan(), ROWS2)).rows.map((r) => r.k);
    expect(await ks(wide().dropna())).toEqual(['a']);
    expect(await ks(wide().dropna('all'))).toEqual(['a', 'c']); // k is null in the second, but not all are
    expect(await ks(wide().dropna('all', undefined, ['n', 'd', 'm']))).toEqual(['a', 'c']); // the NaN counts as missing
    expect(await ks(wide().dropna('any', 4))).toEqual(['a', 'c']);
    // @ts-expect-error the types know the exact spelling; the query matches a name in any case, as Spark does
    expect(await ks(wide().dropna('any', undefined, ['D']))).toEqual(['a', 'c']);
  });

  it("fillna fills the columns of its value's kind, a number cast to each numeric type and over a NaN", async () => {
    const rows = async (frame: ReturnType<typeof wide>) => (await runPlanOnce(frame.writeStream.plan(), ROWS2.slice(1, 2))).rows;
    expect(await rows(wide().fillna(7.5))).toEqual([{ k: null, n: 7, d: 7.5, m: '7.50', ok: null }]);
    expect(await rows(wide().fillna('?'))).toEqual([{ k: '?', n: null, d: 'NaN', m: null, ok: null }]);
    expect(await rows(wide().fillna(true, ['ok']))).toEqual([{ k: null, n: null, d: 'NaN', m: null, ok: true }]);
    expect(await rows(wide().fillna({ N: 0, k: 'none' }))).toEqual([{ k: 'none', n: 0, d: 'NaN', m: null, ok: null }]);
  });

  it('refuses a subset column that does not exist and a value of another kind', () => {
    // @ts-expect-error not a column
    expect(() => wide().dropna('any', undefined, ['zz'])).toThrow(/subset names "zz", which is no column/);
    // @ts-expect-error not a value fillna takes
    expect(() => wide().fillna(null)).toThrow(/a finite number, a string or a boolean/);
  });
});
