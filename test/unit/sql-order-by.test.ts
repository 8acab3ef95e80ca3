/**
 * ORDER BY of an aggregating SELECT (sql/aggregate.ts): keys over the select list's columns, and
 * keys Spark resolves against the aggregation (an aggregate the select list leaves out, a grouping
 * column selected under another name, grouping() / grouping_id()), computed beside the select list
 * and dropped after the sort; ORDER BY ALL. Expected rows worked by hand from the rows below.
 */
import { compileSql } from '../../lib/engine/sql';
import { runPlanOnce } from '../helpers/run-plan';

const FROM = "FROM STREAM read_files(schema => 'country STRING, city STRING, n INT')";
const ROWS = [
  { country: 'FR', city: 'Paris', n: 1 },
  { country: 'FR', city: 'Lyon', n: 2 },
  { country: 'DE', city: 'Berlin', n: 4 },
  { country: null, city: 'Oslo', n: 8 },
];
// (complete mode: each batch's rows are the whole result table, in the ORDER BY's order)
const run = async (q: string) => (await runPlanOnce(compileSql(`SET outputMode = complete; ${q}`), ROWS)).rows;

describe('ORDER BY over an aggregation', () => {
  it('sorts by an aggregate the select list leaves out, and the output has only the select list', async () => {
    // counts: FR 2, DE 1, null 1; ties by country, nulls first (ascending)
    expect(await run(`SELECT country, sum(n) AS total ${FROM} GROUP BY country ORDER BY count(*) DESC, country`)).toEqual([
      { country: 'FR', total: 3 },
      { country: null, total: 8 },
      { country: 'DE', total: 4 },
    ]);
    // min(city): DE Berlin, FR Lyon, null Oslo
    expect(await run(`SELECT upper(country) AS c ${FROM} GROUP BY country ORDER BY min(city) DESC`)).toEqual([{ c: null }, { c: 'FR' }, { c: 'DE' }]);
  });

  it('takes an aggregate the select list has, an alias and an expression mixing both, and LIMIT after it', async () => {
    expect(await run(`SELECT country, sum(n) AS total ${FROM} GROUP BY country ORDER BY sum(n) DESC LIMIT 2`)).toEqual([
      { country: null, total: 8 },
      { country: 'DE', total: 4 },
    ]);
    // total - count(*): FR 3 - 2 = 1, DE 4 - 1 = 3, null 8 - 1 = 7
    expect(await run(`SELECT country, sum(n) AS total ${FROM} GROUP BY country ORDER BY total - count(*)`)).toEqual([
      { country: 'FR', total: 3 },
      { country: 'DE', total: 4 },
      { country: null, total: 8 },
    ]);
  });

  it('reads a grouping column selected under another name; the select list wins for a name both have', async () => {
    expect(await run(`SELECT country AS c, sum(n) AS total ${FROM} GROUP BY country ORDER BY country DESC NULLS LAST`)).toEqual([
      { c: 'FR', total: 3 },
      { c: 'DE', total: 4 },
      { c: null, total: 8 },
    ]);
    // `country` is the select list's lower(country): = 'fr' is true for fr first (the input's 'FR' would make it false for every
    // row), then false for de, then null last (DESC puts nulls last)
    expect(await run(`SELECT lower(country) AS country ${FROM} GROUP BY country ORDER BY country = 'fr' DESC`)).toEqual([
      { country: 'fr' },
      { country: 'de' },
      { country: null },
    ]);
  });

  it('reads the window the select list takes only a field of, or leaves out', async () => {
    const events = "FROM STREAM read_files(schema => 'k STRING, t TIMESTAMP')";
    const rows = [
      { k: 'a', t: '2026-10-01 12:01:00' },
      { k: 'a', t: '2026-10-01 12:11:00' },
      { k: 'b', t: '2026-10-01 12:12:00' },
    ];
    const sorted = async (q: string) => (await runPlanOnce(compileSql(`SET outputMode = complete; ${q}`), rows)).rows;
    expect(await sorted(`SELECT window.start AS ws, count(*) AS n ${events} GROUP BY window(t, '10 minutes') ORDER BY window.end DESC`)).toEqual([
      { ws: '2026-10-01T12:10:00.000Z', n: 2 },
      { ws: '2026-10-01T12:00:00.000Z', n: 1 },
    ]);
    expect(await sorted(`SELECT k, count(*) AS n ${events} GROUP BY k, window(t, '10 minutes') ORDER BY window.start DESC, k`)).toEqual([
      { k: 'a', n: 1 },
      { k: 'b', n: 1 },
      { k: 'a', n: 1 },
    ]);
  });

  it('takes grouping() and grouping_id() over ROLLUP', async () => {
    expect(await run(`SELECT country, city, sum(n) AS t ${FROM} GROUP BY ROLLUP(country, city) ORDER BY grouping_id() DESC, t DESC`)).toEqual([
      { country: null, city: null, t: 15 },
      { country: null, city: null, t: 8 },
      { country: 'DE', city: null, t: 4 },
      { country: 'FR', city: null, t: 3 },
      { country: null, city: 'Oslo', t: 8 },
      { country: 'DE', city: 'Berlin', t: 4 },
      { country: 'FR', city: 'Lyon', t: 2 },
      { country: 'FR', city: 'Paris', t: 1 },
    ]);
    expect(await run(`SELECT country, sum(n) AS t ${FROM} GROUP BY ROLLUP(country) ORDER BY grouping(country), t`)).toEqual([
      { country: 'FR', t: 3 },
      { country: 'DE', t: 4 },
      { country: null, t: 8 },
      { country: null, t: 15 },
    ]);
  });

  it('ORDER BY ALL sorts by every select column, unless a column is named all', async () => {
    expect(await run(`SELECT city, country ${FROM} GROUP BY country, city ORDER BY ALL DESC`)).toEqual([
      { city: 'Paris', country: 'FR' },
      { city: 'Oslo', country: null },
      { city: 'Lyon', country: 'FR' },
      { city: 'Berlin', country: 'DE' },
    ]);
    // SELECT *: every column of the subquery, the second breaking the first's ties
    expect(await run(`SELECT * FROM (SELECT country, sum(n) AS t ${FROM} GROUP BY country, city) ORDER BY ALL NULLS LAST`)).toEqual([
      { country: 'DE', t: 4 },
      { country: 'FR', t: 1 },
      { country: 'FR', t: 2 },
      { country: null, t: 8 },
    ]);
    expect(await run(`SELECT country AS all, sum(n) AS t ${FROM} GROUP BY country ORDER BY all DESC`)).toEqual([
      { all: 'FR', t: 3 },
      { all: 'DE', t: 4 },
      { all: null, t: 8 },
    ]);
  });

  it('over a subquery, a plain select list is sorted by columns it leaves out, carried to the sort and dropped after it', async () => {
    // per country: FR 2 rows, 3; DE 1 row, 4; null 1 row, 8
    const sub = `(SELECT country, count(*) AS c, sum(n) AS t ${FROM} GROUP BY country)`;
    expect(await run(`SELECT country FROM ${sub} ORDER BY c DESC, t`)).toEqual([{ country: 'FR' }, { country: 'DE' }, { country: null }]);
    // -c: FR -2 first, then DE and null at -1, by u ascending, nulls first
    expect(await run(`SELECT upper(country) AS u FROM ${sub} ORDER BY c * -1, u LIMIT 2`)).toEqual([{ u: 'FR' }, { u: null }]);
    expect(() => compileSql(`SET outputMode = complete; SELECT country FROM ${sub} ORDER BY nope`)).toThrow(/^\[UNRESOLVED_COLUMN\.WITH_SUGGESTION\] .*`nope`/);
  });

  it("takes Spark's CLUSTER BY and DISTRIBUTE BY ... SORT BY (a batch's output is one partition, so SORT BY sorts it), and refuses other combinations", async () => {
    expect(await run(`SELECT country, sum(n) AS total ${FROM} GROUP BY country CLUSTER BY country`)).toEqual([
      { country: null, total: 8 },
      { country: 'DE', total: 4 },
      { country: 'FR', total: 3 },
    ]);
    expect(await run(`SELECT country, sum(n) AS total ${FROM} GROUP BY country DISTRIBUTE BY country SORT BY total DESC`)).toEqual([
      { country: null, total: 8 },
      { country: 'DE', total: 4 },
      { country: 'FR', total: 3 },
    ]);
    expect(await run(`SELECT country, sum(n) AS total ${FROM} GROUP BY country SORT BY count(*) DESC, country`)).toEqual([
      { country: 'FR', total: 3 },
      { country: null, total: 8 },
      { country: 'DE', total: 4 },
    ]);
    for (const tail of ['ORDER BY country DISTRIBUTE BY country', 'CLUSTER BY country SORT BY country', 'ORDER BY country SORT BY total'])
      expect(() => compileSql(`SET outputMode = complete; SELECT country, sum(n) AS total ${FROM} GROUP BY country ${tail}`)).toThrow(
        /^\[UNSUPPORTED_FEATURE\.COMBINATION_QUERY_RESULT_CLAUSES\] The feature is not supported: Combination of ORDER BY\/SORT BY\/DISTRIBUTE BY\/CLUSTER BY/,
      );
    // outside complete mode a sort is refused as ORDER BY's is
    expect(() => compileSql(`SELECT country, n ${FROM} SORT BY n`)).toThrow(/^Sorting is not supported on streaming DataFrames\/Datasets/);
  });

  it('refuses what Spark refuses: a column neither grouped nor aggregated, an unknown name, an ordinal past the list, grouping() without ROLLUP', () => {
    expect(() => compileSql(`SET outputMode = complete; SELECT country, sum(n) ${FROM} GROUP BY country ORDER BY city`)).toThrow(
      /^\[MISSING_AGGREGATION\] The non-aggregating expression "city" .* \(line 1, column \d+\)$/,
    );
    expect(() => compileSql(`SET outputMode = complete; SELECT country, sum(n) ${FROM} GROUP BY country ORDER BY nope`)).toThrow(
      /^\[UNRESOLVED_COLUMN\.WITH_SUGGESTION\] .*`nope`/,
    );
    expect(() => compileSql(`SET outputMode = complete; SELECT country, sum(n) ${FROM} GROUP BY country ORDER BY 3`)).toThrow(
      /^\[ORDER_BY_POS_OUT_OF_RANGE\] ORDER BY position 3 is not in select list \(valid range is \[1, 2\]\)/,
    );
    expect(() => compileSql(`SET outputMode = complete; SELECT country, sum(n) ${FROM} GROUP BY country ORDER BY grouping(country)`)).toThrow(
      /^\[UNSUPPORTED_GROUPING_EXPRESSION\]/,
    );
  });
});
