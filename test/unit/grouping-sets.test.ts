/**
 * rollup and cube (lib/engine/query/grouping-sets.ts): each grouping set's groups, a left-out key
 * null, a subtotal kept apart from a group whose key is null in the data, as Spark's Expand +
 * Aggregate gives them. Expected rows are written out by hand from the input below.
 */
import { columnsAfter } from '../../lib/engine/plan/columns';
import { outputColumns } from '../../lib/engine/plan/chain';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { readStream, sum } from '../../lib/api/query';
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

  it('refuses what it does not build, saying how to write it', () => {
    expect(() => compileSql(`SET outputMode = complete; SELECT country, sum(n) ${from} GROUP BY country, ROLLUP(city)`)).toThrow(
      /\[UNSUPPORTED_FEATURE\] GROUP BY with ROLLUP beside other grouping expressions/,
    );
    expect(() => compileSql(`SET outputMode = complete; SELECT sum(n) ${from} GROUP BY CUBE(upper(country))`)).toThrow(/CUBE takes column names in sluice/);
  });
});
