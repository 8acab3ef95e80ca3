/**
 * Spark's ColumnPruning for expression columns (plan/column-pruning.ts): a column computed by a
 * selectExpr item or withColumn(name, expr) that nothing after it reads is never computed, so its
 * ANSI errors never happen. Each query below computes `bad`, whose expression fails on the row
 * given (a division by zero, a cast of 'x'); the tests look at what the plan's stages do with it.
 */
import { count, readStream, sum } from '../../lib/api/query';
import type { QueryPlan, StatelessStage } from '../../lib/engine/plan/types';
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
