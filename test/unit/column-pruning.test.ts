/**
 * Spark's ColumnPruning for expression columns (plan/column-pruning.ts): a column computed by a
 * selectExpr item or withColumn(name, expr) that nothing after it reads is never computed, so its
 * ANSI errors never happen. Each query below computes `bad`, whose expression fails on the row
 * given (a division by zero, a cast of 'x'); the tests look at what the plan's stages do with it.
 */
import { count, readStream, sum } from '../../lib/api/query';
import type { Row } from '../../lib/engine/ports';
import type { QueryPlan, StatelessStage } from '../../lib/engine/plan/types';
import { applyStages } from '../../lib/engine/rows';
import { staticTable } from '../../lib/engine/query/static-table';

const ROW = { k: 'a', total: 10, qty: 0, s: 'x' };
const source = () => readStream.format('json').schema('k STRING, total INT, qty INT, s STRING').load('s3://b/in/');

/** The value each stage gives the row's column `name`, or the error it raises. */
function computed(stage: StatelessStage | undefined, name: string): unknown {
  try {
    if (stage?.kind === 'withColumnExpr') return stage.compiled.evaluate(ROW);
    if (stage?.kind === 'selectExpr') return stage.compiled.project(ROW)[name];
  } catch (e) {
    return (e as Error).message.slice(0, (e as Error).message.indexOf(']') + 1);
  }
  throw new Error(`no expression stage: ${stage?.kind}`);
}

const stagesOf = (p: QueryPlan) => p.stages;

/** The row through the stages (applyStages; a row error thrown). */
function runStages(stages: readonly StatelessStage[], row: Row): Row {
  const { rows } = applyStages(stages, [row]);
  return rows[0];
}

describe('an expression column nothing reads', () => {
  it('is not computed when an aggregation reads other columns only (withColumn and selectExpr items)', () => {
    const plan = source()
      .withColumn('bad', 'total / qty')
      .selectExpr('k', 'total', 'CAST(s AS INT) AS bad2')
      .groupBy('k')
      .agg(sum('total').as('t'))
      .writeStream.outputMode('update')
      .plan();
    const [withColumn, select] = stagesOf(plan);
    expect(computed(withColumn, 'bad')).toBeNull();
    expect(computed(select, 'bad2')).toBeNull();
    expect(computed(select, 'total')).toBe(10);
    // its type stays: the stage's columns are as written
    expect(select.kind === 'selectExpr' && select.compiled.columns.map((c) => [c.name, c.type])).toEqual([
      ['k', 'STRING'],
      ['total', 'INT'],
      ['bad2', 'INT'],
    ]);
  });

  it('is not computed when a later selectExpr drops it, nor is what only it read', () => {
    const plan = source().withColumn('bad', 'total / qty').selectExpr('k', 'bad * 2 AS twice').selectExpr('k').writeStream.plan();
    const [withColumn, select] = stagesOf(plan);
    expect(computed(select, 'twice')).toBeNull();
    expect(computed(withColumn, 'bad')).toBeNull();
  });
});

describe('a DataFrame column nothing reads', () => {
  const LINES = { k: 'a', lines: [1, 2], n: 3 };
  const linesSource = () => readStream.format('json').schema('k STRING, lines ARRAY<INT>, n INT').load('s3://b/in/');
  const errorOf = (f: () => unknown): string => {
    try {
      return JSON.stringify(f());
    } catch (e) {
      return (e as Error).message.slice(0, (e as Error).message.indexOf(']') + 1);
    }
  };

  it('is not followed when it is a select of a path out of bounds, and is when something reads it', () => {
    const unread = linesSource().select('k', 'lines[5]').groupBy('k').agg(count().as('c')).writeStream.outputMode('update').plan();
    expect(errorOf(() => runStages(unread.stages, LINES))).toBe('{"k":"a","lines[5]":null}');
    const read = linesSource().select('k', 'lines[5]').writeStream.plan();
    expect(errorOf(() => runStages(read.stages, LINES))).toBe('[INVALID_ARRAY_INDEX]');
    const inBounds = linesSource().select('k', 'lines[1]').writeStream.plan();
    expect(errorOf(() => runStages(inBounds.stages, LINES))).toBe('{"k":"a","lines[1]":2}');
  });

  it('is not computed when it is a withColumn function, and what only it read is not kept either', () => {
    let calls = 0;
    const fn = (r: Row) => {
      calls++;
      return (r.n as number) * 2;
    };
    const plan = linesSource()
      .withColumn('bad', 'n DIV 0')
      .withColumn('twice', 'INT', fn)
      .select('k', 'n')
      .groupBy('k')
      .agg(sum('n').as('t'))
      .writeStream.outputMode('update')
      .plan();
    expect(errorOf(() => runStages(plan.stages, LINES))).toBe('{"k":"a","n":3}');
    expect(calls).toBe(0);
    const read = linesSource().withColumn('bad', 'n DIV 0').withColumn('twice', 'INT', fn).select('k', 'twice').writeStream.plan();
    // the function is opaque: it may read bad, which is computed and fails first
    expect(errorOf(() => runStages(read.stages, LINES))).toBe('[DIVIDE_BY_ZERO]');
    const fine = linesSource().withColumn('twice', 'INT', fn).select('k', 'twice').writeStream.plan();
    expect(errorOf(() => runStages(fine.stages, LINES))).toBe('{"k":"a","twice":6}');
    expect(calls).toBe(1);
  });
});

describe('an expression column something reads', () => {
  it('is computed, and raises its error, when it is output', () => {
    const [withColumn] = stagesOf(source().withColumn('bad', 'total / qty').writeStream.plan());
    expect(computed(withColumn, 'bad')).toBe('[DIVIDE_BY_ZERO]');
  });

  it('is computed when a later filter, aggregate or selectExpr item reads it (whatever the case of the name)', () => {
    const filtered = source()
      .withColumn('bad', 'total / qty')
      .selectExpr('k', 'bad')
      .filter('BAD > 1')
      .groupBy('k')
      .agg(count().as('n'))
      .writeStream.outputMode('update')
      .plan();
    // a copy of the filter moves below both projections, as (total / qty) > 1, and raises first; the
    // filter stays where it was written too, so bad is read there
    const moved = filtered.stages[0];
    expect(moved.kind === 'filterExpr' && moved.text).toBe('((total / qty) > 1)');
    expect(() => moved.kind === 'filterExpr' && moved.test(ROW)).toThrow(/DIVIDE_BY_ZERO/);
    expect(computed(filtered.stages[1], 'bad')).toBe('[DIVIDE_BY_ZERO]');
    const kept = source()
      .withColumn('bad', 'total / qty')
      .filter((r) => r.k !== 'z')
      .filter('BAD > 1')
      .groupBy('k')
      .agg(count().as('n'))
      .writeStream.outputMode('update')
      .plan();
    expect(
      computed(
        kept.stages.find((st) => st.kind === 'withColumnExpr'),
        'bad',
      ),
    ).toBe('[DIVIDE_BY_ZERO]');
    const summed = source().withColumn('bad', 'total / qty').groupBy('k').agg(sum('bad').as('t')).writeStream.outputMode('update').plan();
    expect(computed(summed.stages[0], 'bad')).toBe('[DIVIDE_BY_ZERO]');
    const selected = source().withColumn('bad', 'total / qty').selectExpr('k', 'bad + 1 AS b1').writeStream.plan();
    expect(computed(selected.stages[0], 'bad')).toBe('[DIVIDE_BY_ZERO]');
  });

  it('is computed when a TypeScript function comes after it (it may read any column)', () => {
    const plan = source()
      .withColumn('bad', 'total / qty')
      .filter((r) => r.k !== 'z')
      .groupBy('k')
      .agg(count().as('n'))
      .writeStream.outputMode('update')
      .plan();
    expect(computed(plan.stages[0], 'bad')).toBe('[DIVIDE_BY_ZERO]');
  });

  it('is computed when a static join or dropDuplicatesWithinWatermark comes after it (they count as reading every column)', () => {
    const users = staticTable.rows('uk STRING, name STRING', [{ uk: 'a', name: 'A' }]);
    const joined = source()
      .withColumn('bad', 'total / qty')
      .join(users, [{ left: 'k', right: 'uk' }])
      .selectExpr('k')
      .writeStream.plan();
    expect(computed(joined.stages[0], 'bad')).toBe('[DIVIDE_BY_ZERO]');
    const deduped = readStream
      .format('json')
      .schema('k STRING, total INT, qty INT, ts TIMESTAMP')
      .load('s3://b/in/')
      .withColumn('bad', 'total / qty')
      .withWatermark('ts', '1 minute')
      .dropDuplicatesWithinWatermark(['k'])
      .groupBy('k')
      .agg(count().as('n'))
      .writeStream.outputMode('update')
      .plan();
    expect(computed(deduped.stages[0], 'bad')).toBe('[DIVIDE_BY_ZERO]');
  });

  it('is computed when a generator in a later selectExpr makes rows from it', () => {
    const plan = source().selectExpr('k', 'array(total DIV qty) AS xs').selectExpr('k', 'explode(xs) AS x').selectExpr('k').writeStream.plan();
    expect(computed(plan.stages[0], 'xs')).toBe('[DIVIDE_BY_ZERO]');
  });
});
