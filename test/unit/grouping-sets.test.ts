/**
 * rollup and cube (lib/engine/query/grouping-sets.ts): each grouping set's groups, a left-out key
 * null, a subtotal kept apart from a group whose key is null in the data, as Spark's Expand +
 * Aggregate gives them. Expected rows are written out by hand from the input below.
 */
import { ddlOf } from '../../lib/engine/ddl';
import { columnsAfter } from '../../lib/engine/plan/columns';
import { outputColumns } from '../../lib/engine/plan/chain';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { grouping, groupingId, readStream, sum } from '../../lib/api/query';
import { compileSql } from '../../lib/engine/sql';
import { runPlanOnce } from '../helpers/run-plan';

const input = () => readStream.format('json').schema('country STRING, city STRING, n INT').load();
const RECORDS = [
  { country: 'FR', city: 'Paris', n: 1 },
  { country: 'FR', city: 'Lyon', n: 2 },
  { country: 'DE', city: 'Berlin', n: 4 },
  { country: null, city: 'Oslo', n: 8 },
];

const key = (r: Record<string, unknown>) => JSON.stringify(r);
async function rows(plan: QueryPlan) {
  const { rows: out, deadLetters } = await runPlanOnce(plan, RECORDS);
  expect(deadLetters.all('malformed')).toEqual([]);
  return out.map((r) => ({ ...r })).sort((a, b) => key(a).localeCompare(key(b)));
}
const sorted = (rs: Array<Record<string, unknown>>) => [...rs].sort((a, b) => key(a).localeCompare(key(b)));

describe('rollup', () => {
  it('aggregates by the columns, each prefix of them and all rows; a null country of the data is its own group', async () => {
    const plan = input().rollup('country', 'city').agg(sum('n')).writeStream.outputMode('complete').plan();
    expect(columnsAfter(outputColumns(plan), plan.post).map((c) => [c.name, c.type])).toEqual([
      ['country', 'STRING'],
      ['city', 'STRING'],
      ['sum(n)', 'LONG'],
    ]);
    expect(await rows(plan)).toEqual(
      sorted([
        { country: 'FR', city: 'Paris', 'sum(n)': 1 },
        { country: 'FR', city: 'Lyon', 'sum(n)': 2 },
        { country: 'DE', city: 'Berlin', 'sum(n)': 4 },
        { country: null, city: 'Oslo', 'sum(n)': 8 },
        { country: 'FR', city: null, 'sum(n)': 3 },
        { country: 'DE', city: null, 'sum(n)': 4 },
        // the subtotal of the rows whose country is null, apart from the grand total
        { country: null, city: null, 'sum(n)': 8 },
        { country: null, city: null, 'sum(n)': 15 },
      ]),
    );
  });

  it('of no column is one group of every row', async () => {
    expect(await rows(input().rollup().agg(sum('n').alias('total')).writeStream.outputMode('complete').plan())).toEqual([{ total: 15 }]);
  });

  it('refuses a column the frame does not have', () => {
    expect(() => input().rollup('country', 'town' as never)).toThrow(/town/);
  });
});

describe('cube', () => {
  it('aggregates by every subset of the columns', async () => {
    const plan = input().cube('country', 'city').count().writeStream.outputMode('complete').plan();
    const byCity = { Paris: 1, Lyon: 1, Berlin: 1, Oslo: 1 };
    expect(await rows(plan)).toEqual(
      sorted([
        { country: 'FR', city: 'Paris', count: 1 },
        { country: 'FR', city: 'Lyon', count: 1 },
        { country: 'DE', city: 'Berlin', count: 1 },
        { country: null, city: 'Oslo', count: 1 },
        { country: 'FR', city: null, count: 2 },
        { country: 'DE', city: null, count: 1 },
        { country: null, city: null, count: 1 },
        ...Object.entries(byCity).map(([city, count]) => ({ country: null, city, count })),
        { country: null, city: null, count: 4 },
      ]),
    );
  });
});

describe('groupingSets, grouping and groupingId', () => {
  it('aggregates by each listed set; grouping() and groupingId() columns sit where agg lists them', async () => {
    const plan = input()
      .groupingSets([['country'], ['city'], []], 'country', 'city')
      .agg(grouping('country'), sum('n').alias('total'), groupingId().alias('gid'))
      .writeStream.outputMode('complete')
      .plan();
    expect(columnsAfter(outputColumns(plan), plan.post).map((c) => [c.name, ddlOf(c)])).toEqual([
      ['country', 'STRING'],
      ['city', 'STRING'],
      ['grouping(country)', 'TINYINT'],
      ['total', 'BIGINT'],
      ['gid', 'BIGINT'],
    ]);
    expect(await rows(plan)).toEqual(
      sorted([
        { country: 'FR', city: null, 'grouping(country)': 0, total: 3, gid: 1 },
        { country: 'DE', city: null, 'grouping(country)': 0, total: 4, gid: 1 },
        { country: null, city: null, 'grouping(country)': 0, total: 8, gid: 1 },
        { country: null, city: 'Paris', 'grouping(country)': 1, total: 1, gid: 2 },
        { country: null, city: 'Lyon', 'grouping(country)': 1, total: 2, gid: 2 },
        { country: null, city: 'Berlin', 'grouping(country)': 1, total: 4, gid: 2 },
        { country: null, city: 'Oslo', 'grouping(country)': 1, total: 8, gid: 2 },
        { country: null, city: null, 'grouping(country)': 1, total: 15, gid: 3 },
      ]),
    );
  });

  it("refuses a set naming another column, and grouping calls Spark's analyzer refuses", () => {
    expect(() => input().groupingSets([['n']], 'country')).toThrow(/names n, which is not one of the grouping columns \(country\)/);
    expect(() => input().cube('country', 'city').agg(grouping('n'))).toThrow(
      /\[GROUPING_COLUMN_MISMATCH\] Column of grouping \(n\) can't be found in grouping columns country,city/,
    );
    expect(() => input().cube('country', 'city').agg(groupingId('city', 'country'))).toThrow(/\[GROUPING_ID_COLUMN_MISMATCH\]/);
  });
});

describe('in SQL', () => {
  const from = "FROM STREAM read_files(schema => 'country STRING, city STRING, n INT')";
  it('GROUP BY ROLLUP(...) and CUBE(...) are the frame API rollup and cube, under the select list', async () => {
    const rolled = await rows(
      compileSql(`SET outputMode = complete; SELECT city, sum(n) AS total, country ${from} GROUP BY ROLLUP(country, city) HAVING sum(n) > 3`),
    );
    expect(rolled).toEqual(
      sorted([
        { city: 'Berlin', total: 4, country: 'DE' },
        { city: 'Oslo', total: 8, country: null },
        { city: null, total: 4, country: 'DE' },
        { city: null, total: 8, country: null },
        { city: null, total: 15, country: null },
      ]),
    );
    const cubed = await rows(compileSql(`SET outputMode = complete; SELECT country, count(*) AS c ${from} GROUP BY CUBE(country)`));
    expect(cubed).toEqual(
      sorted([
        { country: 'FR', c: 2 },
        { country: 'DE', c: 1 },
        { country: null, c: 1 },
        { country: null, c: 4 },
      ]),
    );
  });

  const sql = (text: string) => compileSql(`SET outputMode = complete; ${text.replace('FROM t', from)}`);

  it('a plain item beside ROLLUP is in every set; grouping() and grouping_id() say which keys a row leaves out', async () => {
    const plan = sql('SELECT country, city, sum(n) AS total, grouping(city) AS gc, grouping_id() AS gid FROM t GROUP BY country, ROLLUP(city)');
    expect(columnsAfter(outputColumns(plan), plan.post).map((c) => [c.name, ddlOf(c)])).toEqual([
      ['country', 'STRING'],
      ['city', 'STRING'],
      ['total', 'BIGINT'],
      ['gc', 'TINYINT'],
      ['gid', 'BIGINT'],
    ]);
    expect(await rows(plan)).toEqual(
      sorted([
        { country: 'FR', city: 'Paris', total: 1, gc: 0, gid: 0 },
        { country: 'FR', city: 'Lyon', total: 2, gc: 0, gid: 0 },
        { country: 'DE', city: 'Berlin', total: 4, gc: 0, gid: 0 },
        { country: null, city: 'Oslo', total: 8, gc: 0, gid: 0 },
        { country: 'FR', city: null, total: 3, gc: 1, gid: 1 },
        { country: 'DE', city: null, total: 4, gc: 1, gid: 1 },
        { country: null, city: null, total: 8, gc: 1, gid: 1 },
      ]),
    );
  });

  it('GROUPING SETS lists the sets; the grouping id has a bit per grouping expression, the first the highest', async () => {
    const plan = sql(
      'SELECT country, city, sum(n) AS total, grouping(country) AS gco, grouping_id(country, city) AS gid FROM t GROUP BY GROUPING SETS ((country), city, ())',
    );
    expect(await rows(plan)).toEqual(
      sorted([
        { country: 'FR', city: null, total: 3, gco: 0, gid: 1 },
        { country: 'DE', city: null, total: 4, gco: 0, gid: 1 },
        { country: null, city: null, total: 8, gco: 0, gid: 1 },
        { country: null, city: 'Paris', total: 1, gco: 1, gid: 2 },
        { country: null, city: 'Lyon', total: 2, gco: 1, gid: 2 },
        { country: null, city: 'Berlin', total: 4, gco: 1, gid: 2 },
        { country: null, city: 'Oslo', total: 8, gco: 1, gid: 2 },
        { country: null, city: null, total: 15, gco: 1, gid: 3 },
      ]),
    );
  });

  it('names grouping calls as Spark does, and reads them inside expressions and HAVING', async () => {
    const named = sql('SELECT country, grouping(country), grouping_id(), sum(n) FROM t GROUP BY CUBE(country)');
    expect(columnsAfter(outputColumns(named), named.post).map((c) => c.name)).toEqual(['country', 'grouping(country)', 'grouping_id()', 'sum(n)']);
    const labelled = sql(
      "SELECT CASE WHEN grouping(country) = 1 THEN 'all' ELSE coalesce(country, '?') END AS label, count(*) AS c FROM t GROUP BY ROLLUP(country) HAVING grouping(country) = 1 OR count(*) > 1",
    );
    expect(await rows(labelled)).toEqual(
      sorted([
        { label: 'FR', c: 2 },
        { label: 'all', c: 4 },
      ]),
    );
  });

  it("WITH ROLLUP, WITH CUBE and Hive's GROUP BY ... GROUPING SETS are the same sets", async () => {
    const rollup = await rows(sql('SELECT country, city, sum(n) AS s FROM t GROUP BY ROLLUP(country, city)'));
    expect(await rows(sql('SELECT country, city, sum(n) AS s FROM t GROUP BY country, city WITH ROLLUP'))).toEqual(rollup);
    expect(await rows(sql('SELECT country, city, sum(n) AS s FROM t GROUP BY country, city GROUPING SETS ((country, city), (country), ())'))).toEqual(rollup);
    const cube = await rows(sql('SELECT country, city, sum(n) AS s FROM t GROUP BY CUBE(country, city)'));
    expect(await rows(sql('SELECT country, city, sum(n) AS s FROM t GROUP BY country, city WITH CUBE'))).toEqual(cube);
    expect(rollup).toHaveLength(8);
    expect(cube).toHaveLength(12);
  });

  it('takes ordinals, select aliases, qualified names and a composite element (rolled up as one)', async () => {
    const two = [
      { country: 'FR', city: 'Paris', n: 1 },
      { country: 'DE', city: 'Berlin', n: 4 },
    ];
    const run = async (text: string) => {
      const { rows: out } = await runPlanOnce(sql(text), two);
      return sorted(out.map((r) => ({ ...r })));
    };
    const byCountry = sorted([
      { country: 'FR', c: 1 },
      { country: 'DE', c: 1 },
      { country: null, c: 2 },
    ]);
    expect(await run('SELECT country, count(*) AS c FROM t GROUP BY ROLLUP(1)')).toEqual(byCountry);
    expect(await run('SELECT country, count(*) AS c FROM t AS x GROUP BY ROLLUP(x.country)')).toEqual(byCountry);
    expect(await run('SELECT country AS k, count(*) AS c FROM t GROUP BY CUBE(k)')).toEqual(byCountry.map(({ country, c }) => ({ k: country, c })));
    expect(await run('SELECT country, city, count(*) AS c FROM t GROUP BY ROLLUP((country, city))')).toEqual(
      sorted([
        { country: 'FR', city: 'Paris', c: 1 },
        { country: 'DE', city: 'Berlin', c: 1 },
        { country: null, city: null, c: 2 },
      ]),
    );
  });

  it('a set written twice gives its rows twice (Spark keeps them apart by position)', async () => {
    expect(await rows(sql('SELECT sum(n) AS s FROM t GROUP BY GROUPING SETS ((), ())'))).toEqual([{ s: 15 }, { s: 15 }]);
    expect(await rows(sql('SELECT country, count(*) AS c FROM t GROUP BY GROUPING SETS ((country), (country))'))).toEqual(
      sorted([
        { country: 'FR', c: 2 },
        { country: 'FR', c: 2 },
        { country: 'DE', c: 1 },
        { country: 'DE', c: 1 },
        { country: null, c: 1 },
        { country: null, c: 1 },
      ]),
    );
  });

  it('groups by an expression inside ROLLUP, named as a GROUP BY names it', async () => {
    const plan = sql('SELECT upper(city), count(*) AS c FROM t GROUP BY ROLLUP(upper(city))');
    expect(columnsAfter(outputColumns(plan), plan.post).map((c) => c.name)).toEqual(['upper(city)', 'c']);
    expect(await rows(plan)).toEqual(
      sorted([
        { 'upper(city)': 'PARIS', c: 1 },
        { 'upper(city)': 'LYON', c: 1 },
        { 'upper(city)': 'BERLIN', c: 1 },
        { 'upper(city)': 'OSLO', c: 1 },
        { 'upper(city)': null, c: 4 },
      ]),
    );
  });

  it('keeps a window grouped beside ROLLUP in every set: append mode emits each closed window with its subtotals', async () => {
    const plan = compileSql(`SET outputMode = append;
SELECT window.start AS at, country, count(*) AS c, grouping(country) AS total
FROM STREAM read_files(schema => 'country STRING, t TIMESTAMP') WATERMARK t DELAY OF INTERVAL 1 MINUTE
GROUP BY window(t, '10 minutes'), ROLLUP(country)`);
    const { rows: out } = await runPlanOnce(plan, [
      { country: 'FR', t: '2026-10-01 12:00:00' },
      { country: 'FR', t: '2026-10-01 12:01:00' },
      { country: 'DE', t: '2026-10-01 12:02:00' },
      // moves the watermark to 12:29: the 12:00 window closes, the 12:30 one does not
      { country: 'DE', t: '2026-10-01 12:30:00' },
    ]);
    const at = '2026-10-01T12:00:00.000Z';
    expect(sorted(out.map((r) => ({ ...r })))).toEqual(
      sorted([
        { at, country: 'FR', c: 2, total: 0 },
        { at, country: 'DE', c: 1, total: 0 },
        { at, country: null, c: 3, total: 1 },
      ]),
    );
    // a window inside the sets (left out of some) has no event-time key in those: refused with the fix
    expect(() =>
      compileSql(
        "SET outputMode = update; SELECT count(*) FROM STREAM read_files(schema => 'country STRING, t TIMESTAMP') GROUP BY ROLLUP(window(t, '10 minutes'), country)",
      ),
    ).toThrow(/window\(\.\.\.\) inside ROLLUP, CUBE or GROUPING SETS is not supported by sluice: group by window\(column, '\.\.\.'\) beside them/);
  });

  it("refuses grouping calls Spark refuses, with Spark's error classes", () => {
    expect(() => sql('SELECT country, grouping(n) FROM t GROUP BY CUBE(country, city)')).toThrow(
      /\[GROUPING_COLUMN_MISMATCH\] Column of grouping \(n\) can't be found in grouping columns country,city/,
    );
    expect(() => sql('SELECT grouping_id(city) FROM t GROUP BY CUBE(country, city)')).toThrow(
      /\[GROUPING_ID_COLUMN_MISMATCH\] Columns of grouping_id \(city\) does not match grouping columns \(country,city\)/,
    );
    expect(() => sql('SELECT country, grouping(country) FROM t GROUP BY country')).toThrow(/\[UNSUPPORTED_GROUPING_EXPRESSION\]/);
    expect(() => input().selectExpr('grouping(country)')).toThrow(/\[UNSUPPORTED_GROUPING_EXPRESSION\]/);
    const thirteen = Array.from({ length: 13 }, (_, i) => `c${i}`);
    expect(() =>
      compileSql(
        `SET outputMode = complete; SELECT count(*) FROM STREAM read_files(schema => '${thirteen.map((c) => `${c} INT`).join(', ')}') GROUP BY CUBE(${thirteen.join(', ')})`,
      ),
    ).toThrow(/\[GROUPING_SIZE_LIMIT_EXCEEDED\] Grouping sets size cannot be greater than 4096/);
    expect(() => sql('SELECT count(*) FROM t GROUP BY ROLLUP(country, ROLLUP(city))')).toThrow(/inside another is not supported/);
    expect(() =>
      compileSql(
        "SET outputMode = complete; SELECT count(*) FROM STREAM read_files(schema => 'city STRING, t TIMESTAMP') GROUP BY ROLLUP(city, window(t, '10 minutes'))",
      ),
    ).toThrow(/\[UNSUPPORTED_FEATURE\] window\(\.\.\.\) inside ROLLUP, CUBE or GROUPING SETS is not supported/);
  });
});
