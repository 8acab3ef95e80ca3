/**
 * An aggregate without AS is named as Spark names it (toPrettySQL of the aggregate). Expected
 * names worked by hand from Spark's sql-expression-schema.md and the sql-tests golden files:
 * `count(*)` is `count(1)`, an expression argument is printed as a non-aggregate expression is
 * (`sum((amount * 2))`, `1L` as `1`, a string literal as its value, a nested field by its path),
 * `mean` and `first_value`/`last_value` keep the name they were called by, and first/last print
 * their ignoreNulls flag: `first(amount, false)`; a STRING input of sum and avg shows the cast
 * to DOUBLE that Spark's analysis adds before it names the aggregate.
 */
import { expr } from '../../lib/engine/query/column';
import { approxCountDistinct, avg, count, first, last, sum } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { compileSql } from '../../lib/engine/sql';

const COLS = 'k STRING, amount INT, x DOUBLE, name STRING, s STRUCT<b: INT>';

/** The names of the aggregation's aggregates in a compiled query. */
function aggNames(plan: unknown): string[] {
  const ops = (plan as { operators: Array<{ spec: { kind: string; aggs?: Array<{ as: string }> } }> }).operators;
  return ops.find((o) => o.spec.kind === 'aggregate')!.spec.aggs!.map((a) => a.as);
}

describe('an aggregate without AS in SQL', () => {
  it('is named as Spark names it', () => {
    const plan = compileSql(`SET outputMode = update;
SELECT k, sum(amount), SUM(amount * 2), count(*), avg(x), mean(x), max(upper(name)), min(amount + 1L), approx_count_distinct(name),
  first(amount), first_value(x), last(amount), last_value(x), count('a'), sum(s.b), sum(name), avg(upper(name)), max(name)
FROM STREAM read_files(schema => '${COLS}') GROUP BY k`);
    expect(aggNames(plan)).toEqual([
      'sum(amount)',
      'sum((amount * 2))',
      'count(1)',
      'avg(x)',
      'mean(x)',
      'max(upper(name))',
      'min((amount + 1))',
      'approx_count_distinct(name)',
      'first(amount, false)',
      'first_value(x, false)',
      'last(amount, false)',
      'last_value(x, false)',
      'count(a)',
      'sum(s.b)',
      // a STRING input of sum and avg under the cast Spark's analysis adds before naming (as kurtosis(CAST(col AS DOUBLE)))
      'sum(CAST(name AS DOUBLE))',
      'avg(CAST(upper(name) AS DOUBLE))',
      'max(name)',
    ]);
  });

  it('keeps its alias', () => {
    const plan = compileSql(`SET outputMode = update;
SELECT k, sum(amount * 2) AS doubled, first_value(x) fv FROM STREAM read_files(schema => '${COLS}') GROUP BY k`);
    expect(aggNames(plan)).toEqual(['doubled', 'fv']);
  });
});

describe('an aggregate without alias in the query API', () => {
  it('is named as Spark names it, of a column or of an expression', () => {
    const frame = readStream
      .format('json')
      .schema(COLS)
      .load()
      .groupBy('k')
      .agg(
        sum(expr('amount * 2')),
        sum(expr('amount + 1L')),
        approxCountDistinct('name'),
        first('amount'),
        last(expr("concat(name, 'x')")),
        count(),
        sum('name' as never),
        avg('amount'),
      );
    expect(frame.columnsNow_().map((c) => c.name)).toEqual([
      'k',
      'sum((amount * 2))',
      'sum((amount + 1))',
      'approx_count_distinct(name)',
      'first(amount, false)',
      'last(concat(name, x), false)',
      'count(1)',
      'sum(CAST(name AS DOUBLE))',
      'avg(amount)',
    ]);
  });
});
