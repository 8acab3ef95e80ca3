/**
 * An aggregate without AS is named as Spark names it (toPrettySQL of the aggregate). Expected
 * names worked by hand from Spark's sql-expression-schema.md and the sql-tests golden files:
 * `count(*)` is `count(1)`, an expression argument is printed as a non-aggregate expression is
 * (`sum((amount * 2))`, `1L` as `1`, a string literal as its value, a nested field by its path),
 * `mean` and `first_value`/`last_value` keep the name they were called by, and first/last print
 * their ignoreNulls flag: `first(amount, false)`. The casts Spark's analysis adds to an input (a
 * STRING summed, an INT of stddev) are not shown: Spark 3.4+'s toPrettySQL drops every cast the
 * user did not write, as the linear-regression golden file prints `corr(y, x)` for INT columns.
 */
import { expr } from '../../lib/engine/query/column';
import { approxCountDistinct, avg, boolOr, collectList, collectSet, count, countIf, first, last, stddev, sum, varPop } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { compileSql } from '../../lib/engine/sql';
import { SQL_AGGREGATE_NAMES } from '../../lib/engine/sql/aggregate-calls';
import { AGGREGATES } from '../../lib/engine/expr/functions';

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
  first(amount), first_value(x), last(amount), last_value(x), count('a'), sum(s.b), sum(name), avg(upper(name)), max(name), sum(CAST(name AS DOUBLE))
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
      // a STRING input of sum and avg: the implicit cast to DOUBLE is not shown
      'sum(name)',
      'avg(upper(name))',
      'max(name)',
      // a cast the query writes is shown
      'sum(CAST(name AS DOUBLE))',
    ]);
  });

  it('is named by the name it was called by for the second-moment, boolean and collecting aggregates', () => {
    const plan = compileSql(`SET outputMode = update;
SELECT k, stddev(x), stddev_samp(x), std(x), stddev_pop(x), variance(x), var_samp(x), var_pop(amount), count_if(x > 0), bool_and(x > 0),
  every(x > 0), bool_or(x > 0), some(x > 0), any(x > 0), collect_list(name), collect_set(amount), array_agg(name)
FROM STREAM read_files(schema => '${COLS}') GROUP BY k`);
    expect(aggNames(plan)).toEqual([
      'stddev(x)',
      'stddev_samp(x)',
      'std(x)',
      'stddev_pop(x)',
      'variance(x)',
      'var_samp(x)',
      // an INT input: the implicit cast to DOUBLE is not shown
      'var_pop(amount)',
      'count_if((x > 0))',
      'bool_and((x > 0))',
      'every((x > 0))',
      'bool_or((x > 0))',
      'some((x > 0))',
      'any((x > 0))',
      'collect_list(name)',
      'collect_set(amount)',
      // Spark's array_agg is collect_list under its own name
      'array_agg(name)',
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
      'sum(name)',
      'avg(amount)',
    ]);
  });

  it('names a second-moment aggregate of an INT without the implicit cast, and the others by their function', () => {
    const frame = readStream
      .format('json')
      .schema(COLS)
      .load()
      .groupBy('k')
      .agg(stddev('x'), stddev('amount'), varPop(expr('amount * 2')), countIf(expr('x > 0')), boolOr(expr('amount = 1')), collectList('name'), collectSet('s'));
    expect(frame.columnsNow_().map((c) => [c.name, c.type])).toEqual([
      ['k', 'STRING'],
      ['stddev(x)', 'DOUBLE'],
      ['stddev(amount)', 'DOUBLE'],
      ['var_pop((amount * 2))', 'DOUBLE'],
      ['count_if((x > 0))', 'LONG'],
      ['bool_or((amount = 1))', 'BOOLEAN'],
      ['collect_list(name)', 'ARRAY'],
      ['collect_set(s)', 'ARRAY'],
    ]);
  });
});

describe('the two lists of aggregate names', () => {
  // lib/engine/expr/functions.ts AGGREGATES (what a row expression refuses as an aggregate) and
  // the SQL front end's (the builders of lib/engine/query/functions.ts): the expression layer
  // cannot import the query layer, so a name added to one must be added to the other
  it('hold the same names, but count_distinct, which SQL spells count(DISTINCT x) and refuses', () => {
    expect([...SQL_AGGREGATE_NAMES].filter((n) => !AGGREGATES.has(n))).toEqual([]);
    expect([...AGGREGATES].filter((n) => !SQL_AGGREGATE_NAMES.has(n))).toEqual(['count_distinct']);
  });

  it('so an aggregate in a row expression is refused as one, first_value and last_value too', () => {
    for (const fn of ['first_value', 'last_value', 'mode', 'try_sum']) {
      expect(() =>
        readStream
          .format('json')
          .schema(COLS)
          .load()
          .select(expr(`${fn}(amount) + 1`)),
      ).toThrow(/aggregate/i);
    }
  });
});
