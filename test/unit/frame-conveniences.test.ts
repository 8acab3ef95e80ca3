/**
 * Spark's DataFrame shorthands on a stream (query/frame.ts, query/grouped.ts): distinct, agg on
 * the frame, toDF, transform, columns, and GroupedData's sum / avg / mean / max / min. Each is a
 * plan the longer calls build; expectations worked by hand from the rows.
 */
import { outputColumns } from '../../lib/engine/plan/chain';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { avg, count, readStream, sum, window } from '../../lib/api/query';
import { runPlanOnce } from '../helpers/run-plan';
import { at } from './engine-factories';

const events = () => readStream.format('json').schema('k STRING, t TIMESTAMP, a INT, b DOUBLE').load();
const ROWS = [
  { k: 'x', t: at('12:01'), a: 1, b: 0.5 },
  { k: 'x', t: at('12:02'), a: 3, b: 1.5 },
  { k: 'y', t: at('12:03'), a: 2, b: null },
];

describe('GroupedData shorthands', () => {
  it('sum / avg / mean / max / min name their columns as Spark does, over the named columns', async () => {
    const plan = (f: { writeStream: { outputMode(m: string): { plan(): QueryPlan } } }) => f.writeStream.outputMode('update').plan();
    const sums = plan(events().groupBy('k').sum('a', 'b'));
    expect(outputColumns(sums).map((c) => `${c.name} ${c.type}`)).toEqual(['k STRING', 'sum(a) LONG', 'sum(b) DOUBLE']);
    expect((await runPlanOnce(sums, ROWS)).rows).toEqual([
      { k: 'x', 'sum(a)': 4, 'sum(b)': 2 },
      { k: 'y', 'sum(a)': 2, 'sum(b)': null },
    ]);
    expect(outputColumns(plan(events().groupBy('k').mean('a'))).map((c) => c.name)).toEqual(['k', 'avg(a)']);
    expect((await runPlanOnce(plan(events().groupBy('k').max('a')), ROWS)).rows).toEqual([
      { k: 'x', 'max(a)': 3 },
      { k: 'y', 'max(a)': 2 },
    ]);
  });

  it('take every numeric column when none is named, and refuse a column that is not numeric', () => {
    const all = events().groupBy('k').min().writeStream.outputMode('update').plan();
    expect(outputColumns(all).map((c) => c.name)).toEqual(['k', 'min(a)', 'min(b)']);
    expect(() => events().groupBy('a').avg('k')).toThrow(/"k" is not a numeric column\. Aggregation function can only be applied on a numeric column\./);
    expect(() =>
      events()
        .groupBy('k')
        .sum('nope' as never),
    ).toThrow(/nope/);
  });
});

describe('frame shorthands', () => {
  it('agg on the frame is a global aggregation; distinct is dropDuplicates over every column', async () => {
    const total = events().agg(sum('a').as('total'), count().as('n')).writeStream.outputMode('complete').plan();
    expect((await runPlanOnce(total, ROWS)).rows).toEqual([{ total: 6, n: 3 }]);
    const distinct = events().select('k').distinct().writeStream.plan();
    expect(distinct.operators.map((o) => o.spec)).toEqual([{ kind: 'dedup', columns: null, withinWatermark: false }]);
    expect((await runPlanOnce(distinct, ROWS)).rows).toEqual([{ k: 'x' }, { k: 'y' }]);
  });

  it('toDF renames every column in order, keeping the watermark; transform applies a function; columns lists the names', async () => {
    const frame = events().withWatermark('t', '0 seconds').toDF('key', 'at', 'amount', 'weight');
    expect(frame.columns).toEqual(['key', 'at', 'amount', 'weight']);
    const onlyPositive = (f: typeof frame) => f.filter('amount > 1');
    const plan = frame.transform(onlyPositive).groupBy(window('at', '10 minutes')).agg(count().as('n')).writeStream.outputMode('append').plan();
    // at is still the event-time column: the append-mode window aggregation is allowed, and the no-data batch does not close 12:00-12:10
    expect((await runPlanOnce(plan, ROWS)).rows).toEqual([]);
    expect(() => events().toDF('a', 'b')).toThrow(/the number of columns doesn't match: old column names \(4\)/);
    expect(() => events().toDF('a', 'A', 'c', 'd')).toThrow(/given twice/);
  });
});

describe('dtypes and na', () => {
  it("dtypes gives each column's type as Spark's simpleString writes it", () => {
    const frame = readStream
      .format('json')
      .schema(
        'k STRING, n TINYINT, big BIGINT, f FLOAT, d DECIMAL(10,2), day DATE, t TIMESTAMP, tags ARRAY<STRING>, m MAP<STRING, INT>, s STRUCT<a: INT, b: ARRAY<DOUBLE>>',
      )
      .load();
    expect(frame.dtypes).toEqual([
      ['k', 'string'],
      ['n', 'tinyint'],
      ['big', 'bigint'],
      ['f', 'float'],
      ['d', 'decimal(10,2)'],
      ['day', 'date'],
      ['t', 'timestamp'],
      ['tags', 'array<string>'],
      ['m', 'map<string,int>'],
      ['s', 'struct<a:int,b:array<double>>'],
    ]);
    // after an aggregation: the window's struct, count's bigint, avg's double
    const agg = events().withWatermark('t', '1 minute').groupBy(window('t', '10 minutes'), 'k').agg(count().as('n'), avg('a').as('mean'));
    expect(agg.dtypes).toEqual([
      ['window', 'struct<start:timestamp,end:timestamp>'],
      ['k', 'string'],
      ['n', 'bigint'],
      ['mean', 'double'],
    ]);
  });

  it('na.drop, na.fill and na.replace are dropna, fillna and replace', async () => {
    const rows = [
      { k: 'x', t: at('12:01'), a: null, b: 0.5 },
      { k: null, t: at('12:02'), a: 3, b: null },
      { k: 'y', t: at('12:03'), a: 2, b: 2.5 },
    ];
    const run = async (f: { writeStream: { plan(): QueryPlan } }) => (await runPlanOnce(f.writeStream.plan(), rows)).rows;
    expect(await run(events().na.drop('any', undefined, ['a']).select('k', 'a'))).toEqual([
      { k: null, a: 3 },
      { k: 'y', a: 2 },
    ]);
    expect(await run(events().na.fill(0).select('a', 'b'))).toEqual(await run(events().fillna(0).select('a', 'b')));
    expect(await run(events().na.fill(0).select('a', 'b'))).toEqual([
      { a: 0, b: 0.5 },
      { a: 3, b: 0 },
      { a: 2, b: 2.5 },
    ]);
    expect(await run(events().na.replace('x', 'z', ['k']).select('k'))).toEqual([{ k: 'z' }, { k: null }, { k: 'y' }]);
  });
});

describe('unpivot and melt', () => {
  it('give the ids, then a row per value column with its name and its value, nulls kept, the values in their common type', async () => {
    const plan = events().unpivot('k', ['a', 'b'], 'metric', 'value').writeStream.plan();
    expect(outputColumns(plan).map((c) => `${c.name} ${c.type}`)).toEqual(['k STRING', 'metric STRING', 'value DOUBLE']);
    expect((await runPlanOnce(plan, ROWS.slice(1))).rows).toEqual([
      { k: 'x', metric: 'a', value: 3 },
      { k: 'x', metric: 'b', value: 1.5 },
      { k: 'y', metric: 'a', value: 2 },
      { k: 'y', metric: 'b', value: null },
    ]);
    // melt is its other name; values null: every column but the ids
    expect(events().select('k', 'a').melt(['k'], null, 'm', 'v').columns).toEqual(['k', 'm', 'v']);
  });

  it('refuse value columns with no common type, and no value column, as Spark does', () => {
    expect(() => events().unpivot('k', null, 'm', 'v')).toThrow(/UNPIVOT_VALUE_DATA_TYPE_MISMATCH.*`t` TIMESTAMP, `a` INT, `b` DOUBLE/);
    expect(() => events().unpivot(['k', 't', 'a', 'b'], null, 'm', 'v')).toThrow(/UNPIVOT_REQUIRES_VALUE_COLUMNS/);
    expect(() => events().unpivot('k', ['nope'], 'm', 'v')).toThrow(/UNRESOLVED_COLUMN.*"nope"/);
  });
});
