/**
 * corr, covar_pop, covar_samp and the regr_* aggregates (more-aggregates.ts, aggregates.ts): the
 * figures Spark prints, their NULLs, names, types and refusals. The figures are Spark's own:
 * its linear-regression.sql golden file (rows (k, y, x) = (1, 10, null), (2, 10, 11), (2, 20, 22),
 * (2, 25, null), (2, 30, 35), (2, null, 40)) and the examples of its function docs.
 */
import { compileAgg, mergeBuffers, type CompiledAgg } from '../../lib/engine/aggregates';
import type { DeadLetter, Json, Row } from '../../lib/engine/ports';
import type { AggFn } from '../../lib/engine/plan/types';
import { corr, covarSamp, regrAvgx, regrCount, regrSlope } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { compileSql } from '../../lib/engine/sql';
import type { DataType } from '../../lib/engine/schema';
import { runPlanOnce } from '../helpers/run-plan';

const INT: DataType = { type: 'INT' };

/** The aggregate of (y, x) over `parts` of rows, each part its own buffer, merged left to right (as batches merge into state). */
function over(fn: AggFn, parts: Array<Array<[number | null, number | null]>>, yType: DataType = INT, xType: DataType = INT): unknown {
  const agg: CompiledAgg = compileAgg({ fn, column: 'y', by: 'x', as: 'out' }, yType, xType);
  const buffers = parts.map((rows) => {
    let s: Json = agg.init();
    for (const [y, x] of rows) s = agg.update(s, { y, x } as Row);
    return [s];
  });
  return agg.finish(buffers.reduce((a, b) => mergeBuffers([agg], a, b))[0]);
}

/** k = 2 of the golden file's table, one row a part: Spark's test spreads the rows over partitions, whose buffers its final aggregation merges. */
const K2: Array<Array<[number | null, number | null]>> = [[[10, 11]], [[20, 22]], [[25, null]], [[30, 35]], [[null, 40]]];

describe('the aggregates of number pairs', () => {
  it("give the figures of Spark's golden file to the last bit, from the same merges", () => {
    expect(over('regr_count', K2)).toBe(3);
    expect(over('corr', K2)).toBe(0.9988445981121533);
    expect(over('regr_r2', K2)).toBe(0.997690531177829);
    expect(over('regr_avgx', K2)).toBe(22.666666666666668);
    expect(over('regr_avgy', K2)).toBe(20);
    expect(over('regr_sxx', K2)).toBe(288.6666666666667);
    expect(over('regr_sxy', K2)).toBe(240);
    expect(over('regr_syy', K2)).toBe(200);
    expect(over('regr_slope', K2)).toBe(0.8314087759815242);
    expect(over('regr_intercept', K2)).toBe(1.1547344110854496);
  });

  it('give the same figures, to doubles rounding, however the rows fall into batches', () => {
    for (const parts of [[K2.flat()], [K2[0], [...K2[1], ...K2[2], ...K2[3]], K2[4]], [[], K2.flat(), []]]) {
      expect(over('corr', parts)).toBeCloseTo(0.9988445981121533, 12);
      expect(over('regr_slope', parts)).toBeCloseTo(0.8314087759815242, 12);
      expect(over('regr_intercept', parts)).toBeCloseTo(1.1547344110854496, 12);
      expect(over('regr_sxx', parts)).toBeCloseTo(288.6666666666667, 10);
    }
  });

  it("give the examples of Spark's function docs", () => {
    expect(
      over('corr', [
        [
          [3, 2],
          [3, 3],
          [6, 4],
        ],
      ]),
    ).toBeCloseTo(0.8660254037844387, 14);
    expect(
      over('covar_pop', [
        [
          [1, 1],
          [2, 2],
          [3, 3],
        ],
      ]),
    ).toBeCloseTo(0.6666666666666666, 14);
    expect(
      over('covar_samp', [
        [
          [1, 1],
          [2, 2],
          [3, 3],
        ],
      ]),
    ).toBe(1);
    expect(
      over('regr_slope', [
        [
          [1, 1],
          [2, 2],
          [3, 3],
        ],
      ]),
    ).toBe(1);
    expect(
      over('regr_intercept', [
        [
          [1, 1],
          [2, 2],
          [3, 3],
        ],
      ]),
    ).toBe(0);
    expect(
      over('regr_avgx', [
        [
          [1, 2],
          [2, 2],
          [2, 3],
          [2, 4],
        ],
      ]),
    ).toBe(2.75);
    expect(
      over('regr_avgy', [
        [
          [1, 2],
          [2, null],
          [null, 3],
          [2, 4],
        ],
      ]),
    ).toBe(1.5);
    expect(
      over('regr_r2', [
        [
          [1, 2],
          [2, 2],
          [2, 3],
          [2, 4],
        ],
      ]),
    ).toBeCloseTo(0.2727272727272727, 14);
    expect(
      over('regr_sxy', [
        [
          [1, 2],
          [2, null],
          [2, 3],
          [2, 4],
        ],
      ]),
    ).toBe(1);
    expect(
      over('regr_syy', [
        [
          [1, 2],
          [2, null],
          [2, 3],
          [2, 4],
        ],
      ]),
    ).toBeCloseTo(0.6666666666666666, 14);
  });

  it('are NULL without a pair, and where Spark divides by zero', () => {
    for (const fn of ['corr', 'covar_pop', 'covar_samp', 'regr_avgx', 'regr_sxx', 'regr_sxy', 'regr_slope', 'regr_intercept', 'regr_r2'] as AggFn[])
      expect(
        over(fn, [
          [
            [10, null],
            [null, 3],
          ],
        ]),
      ).toBeNull();
    expect(over('regr_count', [[[10, null]]])).toBe(0);
    // one pair: the sample covariance and the correlation divide by zero
    expect(over('covar_samp', [[[1, 2]]])).toBeNull();
    expect(over('corr', [[[1, 2]]])).toBeNull();
    expect(over('covar_pop', [[[1, 2]]])).toBe(0);
    // x does not vary: no slope, no intercept, no correlation (SPARK-58213); regr_r2 is 1 (Spark's RegrR2), NULL when y does not vary
    const flatX: Array<Array<[number, number]>> = [[[1, 5]], [[2, 5]]];
    expect(over('regr_slope', flatX)).toBeNull();
    expect(over('regr_intercept', flatX)).toBeNull();
    expect(over('corr', flatX)).toBeNull();
    expect(over('regr_r2', flatX)).toBe(1);
    expect(over('regr_r2', [[[5, 1]], [[5, 2]]])).toBeNull();
  });

  it('read a DECIMAL and a STRING as the DOUBLE Spark casts them to; regr_avgx of a DECIMAL stays exact', () => {
    const dec: DataType = { type: 'DECIMAL', precision: 10, scale: 2 };
    // y 1.5, 2.5, 4 and x 2, 4, 5: Sxy 11/3, Sxx 14/3, Syy 19/6 (worked by hand)
    const r = 11 / 3 / Math.sqrt((14 / 3) * (19 / 6));
    expect(over('corr', [[['1.50', '2'] as never, ['2.50', '4'] as never, ['4.00', '5'] as never]], dec, { type: 'STRING' })).toBeCloseTo(r, 12);
    expect(over('regr_avgx', [[['1', '0.10'] as never, ['2', '0.20'] as never]], INT, dec)).toBe('0.150000');
  });
});

describe('the pair aggregates in a query', () => {
  it('run in SQL, named as Spark names them, over the golden table', async () => {
    const plan = compileSql(`SET outputMode = update;
SELECT k, regr_count(y, x), corr(y, x), regr_slope(y, x), regr_intercept(y, x), covar_samp(y, x * 2) FROM STREAM read_files(schema => 'k INT, y INT, x INT') GROUP BY k`);
    const { rows } = await runPlanOnce(plan, [
      { k: 1, y: 10, x: null },
      { k: 2, y: 10, x: 11 },
      { k: 2, y: 20, x: 22 },
      { k: 2, y: 25, x: null },
      { k: 2, y: 30, x: 35 },
      { k: 2, y: null, x: 40 },
    ]);
    const byK = new Map(rows.map((r) => [r.k, r]));
    expect(Object.keys(byK.get(2)!)).toEqual(['k', 'regr_count(y, x)', 'corr(y, x)', 'regr_slope(y, x)', 'regr_intercept(y, x)', 'covar_samp(y, (x * 2))']);
    expect(byK.get(1)).toEqual({
      k: 1,
      'regr_count(y, x)': 0,
      'corr(y, x)': null,
      'regr_slope(y, x)': null,
      'regr_intercept(y, x)': null,
      'covar_samp(y, (x * 2))': null,
    });
    const k2 = byK.get(2)!;
    expect(k2['regr_count(y, x)']).toBe(3);
    expect(k2['corr(y, x)']).toBeCloseTo(0.9988445981121533, 12);
    expect(k2['regr_slope(y, x)']).toBeCloseTo(0.8314087759815242, 12);
    expect(k2['regr_intercept(y, x)']).toBeCloseTo(1.1547344110854496, 12);
    // covariance of (y, 2x): twice that of (y, x), whose sxy is 240 over 3 pairs
    expect(k2['covar_samp(y, (x * 2))']).toBeCloseTo(240, 10);
  });

  it('send a row whose STRING does not cast to DOUBLE to the dead letters, as a sum of it does', async () => {
    const plan = compileSql(`SET outputMode = update;
SELECT k, corr(y, s), count(*) AS n FROM STREAM read_files(schema => 'k INT, y INT, s STRING') GROUP BY k`);
    const { rows, deadLetters } = await runPlanOnce(plan, [
      { k: 1, y: 1, s: '1.5' },
      { k: 1, y: 2, s: 'x' },
      { k: 1, y: 3, s: '2.5' },
    ]);
    expect(rows).toEqual([{ k: 1, 'corr(y, s)': expect.closeTo(1, 12), n: 2 }]);
    expect((deadLetters.all('malformed') as unknown as DeadLetter[]).map((d) => d.reason)).toEqual([expect.stringMatching(/^\[CAST_INVALID_INPUT\]/)]);
  });

  it("cast both STRING columns as Spark's `y IS NULL OR x IS NULL` does: a bad y whatever x is, a bad x unless y is null", async () => {
    const plan = compileSql(`SET outputMode = update;
SELECT k, regr_avgx(y, x), regr_count(y, x), corr(y, x), count(*) AS n FROM STREAM read_files(schema => 'k INT, y STRING, x STRING') GROUP BY k`);
    const { rows, deadLetters } = await runPlanOnce(plan, [
      { k: 1, y: '1', x: '2' },
      // a bad y with a null x: regr_avgx does not average x here, but Spark casts y first
      { k: 1, y: 'bad-y', x: null },
      // a null y: the test stops there, x is never cast
      { k: 1, y: null, x: 'bad-x' },
      { k: 1, y: '3', x: 'bad-x' },
      { k: 1, y: '5', x: '4' },
    ]);
    // the rows (1, 2), (null, 'bad-x') and (5, 4): avg of x over the two pairs, two pairs, three rows
    expect(rows).toEqual([{ k: 1, 'regr_avgx(y, x)': 3, 'regr_count(y, x)': 2, 'corr(y, x)': 1, n: 3 }]);
    const reasons = (deadLetters.all('malformed') as unknown as DeadLetter[]).map((d) => d.reason);
    expect(reasons).toEqual([
      expect.stringMatching(
        /^\[CAST_INVALID_INPUT\].*'bad-y'.*in regr_avgx\(y, x\) AS regr_avgx\(y, x\) of the group where k is 1, with this row's y = "bad-y", x = null/s,
      ),
      expect.stringMatching(/^\[CAST_INVALID_INPUT\].*'bad-x'.*in regr_avgx\(y, x\).*with this row's y = "3", x = "bad-x"/s),
    ]);
  });

  it('type their outputs as Spark does: regr_count BIGINT, regr_avgx avg of x, the others DOUBLE', () => {
    const frame = readStream
      .format('json')
      .schema('k STRING, y INT, x DECIMAL(10,2)')
      .load()
      .groupBy('k')
      .agg(regrCount('y', 'x'), corr('y', 'x'), regrAvgx('y', 'x'), covarSamp('y', 'x').as('c'), regrSlope('y', 'x'));
    expect(frame.columnsNow_().map((c) => [c.name, c.type, c.precision, c.scale])).toEqual([
      ['k', 'STRING', undefined, undefined],
      ['regr_count(y, x)', 'LONG', undefined, undefined],
      ['corr(y, x)', 'DOUBLE', undefined, undefined],
      ['regr_avgx(y, x)', 'DECIMAL', 14, 6],
      ['c', 'DOUBLE', undefined, undefined],
      ['regr_slope(y, x)', 'DOUBLE', undefined, undefined],
    ]);
  });

  it('are refused with one argument, or a column that is not a number', () => {
    const schema = "read_files(schema => 'k STRING, y INT, x INT, s STRUCT<a: INT>, t TIMESTAMP')";
    expect(() => compileSql(`SET outputMode = update; SELECT k, corr(y) FROM STREAM ${schema} GROUP BY k`)).toThrow(
      /WRONG_NUM_ARGS.*corr takes two arguments \(y and x\)/s,
    );
    expect(() => compileSql(`SET outputMode = update; SELECT k, regr_slope(y, s) FROM STREAM ${schema} GROUP BY k`)).toThrow(
      /DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\] regr_slope\(y, s\): s is STRUCT/,
    );
    expect(() => compileSql(`SET outputMode = update; SELECT k, covar_pop(t, x) FROM STREAM ${schema} GROUP BY k`)).toThrow(
      /covar_pop\(t, x\): t is TIMESTAMP/,
    );
    expect(() => compileSql(`SET outputMode = update; SELECT k, corr(y, nope) FROM STREAM ${schema} GROUP BY k`)).toThrow(/nope/);
  });
});

describe('an aggregate with FILTER (WHERE ...)', () => {
  const table = [
    { k: 1, y: 10, x: null },
    { k: 2, y: 10, x: 11 },
    { k: 2, y: 20, x: 22 },
    { k: 2, y: 25, x: null },
    { k: 2, y: 30, x: 35 },
    { k: 2, y: null, x: 40 },
  ];

  it("takes the rows where the condition is true, named as Spark's golden file names it", async () => {
    const plan = compileSql(`SET outputMode = update;
SELECT k, count(*) FILTER (WHERE x IS NOT NULL), avg(x) FILTER (WHERE x IS NOT NULL AND y IS NOT NULL), corr(y, x) FILTER (WHERE x IS NOT NULL),
  sum(y) FILTER (WHERE x > 20) AS big, max_by(y, x) FILTER (WHERE x < 30) AS below, first(y, true) FILTER (WHERE x IS NULL) AS unpaired
FROM STREAM read_files(schema => 'k INT, y INT, x INT') GROUP BY k`);
    const { rows } = await runPlanOnce(plan, table);
    const byK = new Map(rows.map((r) => [r.k, r]));
    // linear-regression.sql.out: k 1 and 2 count 0 and 4; avg 22.666666666666668 for k 2, NULL for k 1
    expect(Object.keys(byK.get(2)!)).toEqual([
      'k',
      'count(1) FILTER (WHERE (x IS NOT NULL))',
      'avg(x) FILTER (WHERE ((x IS NOT NULL) AND (y IS NOT NULL)))',
      'corr(y, x) FILTER (WHERE (x IS NOT NULL))',
      'big',
      'below',
      'unpaired',
    ]);
    expect(byK.get(1)).toEqual({
      k: 1,
      'count(1) FILTER (WHERE (x IS NOT NULL))': 0,
      'avg(x) FILTER (WHERE ((x IS NOT NULL) AND (y IS NOT NULL)))': null,
      'corr(y, x) FILTER (WHERE (x IS NOT NULL))': null,
      big: null,
      below: null,
      unpaired: 10,
    });
    const k2 = byK.get(2)!;
    expect(k2['count(1) FILTER (WHERE (x IS NOT NULL))']).toBe(4);
    expect(k2['avg(x) FILTER (WHERE ((x IS NOT NULL) AND (y IS NOT NULL)))']).toBeCloseTo(22.666666666666668, 12);
    expect(k2['corr(y, x) FILTER (WHERE (x IS NOT NULL))']).toBeCloseTo(0.9988445981121533, 12);
    // y where x > 20: 20 + 30 (the row with x 40 has no y); max_by over x < 30: y of x 22; the first y whose x is null: 25
    expect([k2.big, k2.below, k2.unpaired]).toEqual([50, 20, 25]);
  });

  it('keeps a null value of a row it takes in first, last and any_value without ignoreNulls', async () => {
    const plan = compileSql(`SET outputMode = update;
SELECT k, first(y) FILTER (WHERE x > 1), last(y) FILTER (WHERE x > 1) AS l, any_value(y) FILTER (WHERE x > 1) AS a, first(y) FILTER (WHERE x > 1) + 1 AS f1
FROM STREAM read_files(schema => 'k INT, y INT, x INT') GROUP BY k`);
    const { rows } = await runPlanOnce(plan, [
      { k: 1, y: 7, x: 0 }, // not taken
      { k: 1, y: null, x: 2 }, // the first row taken: its y is null
      { k: 1, y: 9, x: 3 }, // the last row taken
      { k: 1, y: 4, x: 1 }, // not taken
      { k: 2, y: 5, x: 0 }, // k 2: no row taken
    ]);
    expect(rows).toEqual([
      { k: 1, 'first(y, false) FILTER (WHERE (x > 1))': null, l: 9, a: null, f1: null },
      { k: 2, 'first(y, false) FILTER (WHERE (x > 1))': null, l: null, a: null, f1: null },
    ]);
    const { rows: more } = await runPlanOnce(plan, [
      { k: 1, y: 3, x: 2 },
      { k: 1, y: null, x: 5 },
    ]);
    // first takes 3; last takes the null of the last row the filter takes
    expect(more).toEqual([{ k: 1, 'first(y, false) FILTER (WHERE (x > 1))': 3, l: null, a: 3, f1: 4 }]);
  });

  it('is refused on a nested aggregate, and on a function that is not an aggregate', () => {
    const from = "FROM STREAM read_files(schema => 'k INT, y INT, x INT') GROUP BY k";
    expect(() => compileSql(`SET outputMode = update; SELECT k, sum(y) FILTER (WHERE sum(x) > 1) ${from}`)).toThrow(/NESTED_AGGREGATE_FUNCTION/);
    expect(() => compileSql(`SET outputMode = update; SELECT k, sum(abs(y) FILTER (WHERE x > 1)) ${from}`)).toThrow(/abs does not support FILTER/);
  });
});
