/**
 * Spark's na.replace (PySpark's replace) on a frame (query/column-ops.ts replaceStep): the values
 * of one kind replaced in the columns of that kind, each cast to the column's type first.
 * Expectations worked by hand from Spark's replaceCol: CASE c WHEN CAST(k AS T) THEN CAST(v AS T)
 * ... ELSE c END.
 */
import { outputColumns } from '../../lib/engine/plan/chain';
import { readStream } from '../../lib/api/query';
import { runPlanOnce } from '../helpers/run-plan';

const input = () => readStream.format('json').schema('name STRING, code STRING, n INT, x DOUBLE, price DECIMAL(6,2), ok BOOLEAN').load();
const ROW = { name: 'N/A', code: 'N/A', n: 1, x: 1.5, price: 1.0, ok: false };

async function rowsOf(frame: ReturnType<typeof input>, rows: Array<Record<string, unknown>> = [ROW]) {
  return (await runPlanOnce(frame.writeStream.plan(), rows)).rows;
}

describe('replace', () => {
  it('replaces a string in every STRING column, and only there', async () => {
    expect(await rowsOf(input().replace('N/A', 'unknown'))).toEqual([{ ...ROW, name: 'unknown', code: 'unknown', price: '1.00' }]);
  });

  it('limits the replacement to subset, matched in any case', async () => {
    expect(await rowsOf(input().replace('N/A', null, ['NAME' as never]))).toEqual([{ ...ROW, name: null, price: '1.00' }]);
  });

  it('replaces a number in every numeric column, cast to each column type', async () => {
    // 1 matches n = 1, x is 1.5 (no match), price 1.00 matches; 9.5 into the INT column is 9
    expect(await rowsOf(input().replace(1, 9.5))).toEqual([{ ...ROW, n: 9, x: 1.5, price: '9.50' }]);
    // 1.5 cast to INT is 1: it matches n too, as in Spark
    expect(await rowsOf(input().replace(1.5, 0))).toEqual([{ ...ROW, n: 0, x: 0, price: '1.00' }]);
  });

  it('takes lists of values and replacements, and one replacement for a list', async () => {
    const rows = [
      { ...ROW, name: 'a', code: 'b' },
      { ...ROW, name: 'b', code: 'c' },
    ];
    expect((await rowsOf(input().replace(['a', 'b'], ['A', 'B']), rows)).map((r) => [r.name, r.code])).toEqual([
      ['A', 'B'],
      ['B', 'c'],
    ]);
    expect((await rowsOf(input().replace(['a', 'b'], '-'), rows)).map((r) => [r.name, r.code])).toEqual([
      ['-', '-'],
      ['-', 'c'],
    ]);
  });

  it('takes an object of string replacements, or a Map for numbers and booleans, with subset second', async () => {
    expect(await rowsOf(input().replace({ 'N/A': '?' }, ['code']))).toEqual([{ ...ROW, code: '?', price: '1.00' }]);
    expect(
      await rowsOf(
        input().replace(
          new Map([
            [1, 2],
            [2, 3],
          ]),
          ['n'],
        ),
      ),
    ).toEqual([{ ...ROW, n: 2, price: '1.00' }]);
    expect(await rowsOf(input().replace(new Map([[false, true]])))).toEqual([{ ...ROW, ok: true, price: '1.00' }]);
  });

  it("replaces NaN in DOUBLE columns (NaN equals NaN in Spark's comparisons) and leaves the other numeric columns", async () => {
    const plan = input().selectExpr('n', "CAST('NaN' AS DOUBLE) AS x").replace(Number.NaN, 0).writeStream.plan();
    expect(outputColumns(plan).map((c) => c.name)).toEqual(['n', 'x']);
    expect((await runPlanOnce(plan, [ROW])).rows).toEqual([{ n: 1, x: 0 }]);
  });

  it('leaves nulls and unmatched values as they are', async () => {
    expect(await rowsOf(input().replace('zzz', 'y'), [{ ...ROW, name: null }])).toEqual([{ ...ROW, name: null, price: '1.00' }]);
  });

  it('refuses mixed kinds, lists of different lengths, a missing replacement and an unknown subset column', () => {
    expect(() => input().replace(['a', 1] as never, 'b')).toThrow(/mixed kinds of values/);
    expect(() => input().replace('a', 1 as never)).toThrow(/mixed kinds of values.*one call per kind/);
    expect(() => input().replace(['a', 'b'], ['A'])).toThrow(/same length \(2 and 1\)/);
    // @ts-expect-error a value to match needs its replacement
    expect(() => input().replace('a')).toThrow(/give one replacement/);
    expect(() => input().replace('a', 'b', ['nope' as never])).toThrow(/subset names "nope", which is no column/);
    expect(() => input().replace({ a: 'b' }, 'x' as never)).toThrow(/the second argument is the subset/);
    expect(() => input().replace([], [])).toThrow(/nothing to replace/);
  });
});
