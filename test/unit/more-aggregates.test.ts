/**
 * The second-moment, boolean and collecting aggregates (more-aggregates.ts): Spark's buffers and
 * merges, their input rules and refusals. Expected figures worked by hand from the definitions
 * (sample variance: squared deviations over n - 1; population: over n).
 */
import { compileAgg, mergeBuffers, type CompiledAgg } from '../../lib/engine/aggregates';
import type { DeadLetter, Json, Row } from '../../lib/engine/ports';
import type { AggFn } from '../../lib/engine/plan/types';
import { expr } from '../../lib/engine/query/column';
import {
  boolAnd,
  collectSet,
  countIf,
  count,
  first,
  last,
  listagg,
  maxBy,
  median,
  minBy,
  mode,
  percentile,
  percentilesAt,
  stddev,
  variance,
  window,
} from '../../lib/engine/query/functions';
import { compileSql } from '../../lib/engine/sql';
import * as F from '../../lib/engine/query/fn';
import { readStream } from '../../lib/engine/query/reader';
import type { DataType } from '../../lib/engine/schema';
import { runPlanOnce } from '../helpers/run-plan';

/** The aggregate over `values` fed in `parts` (each its own buffer, then merged left to right, as batches merge into state). */
function over(fn: AggFn, type: DataType, parts: unknown[][]): unknown {
  const agg: CompiledAgg = compileAgg({ fn, column: 'v', as: 'out' }, type);
  const buffers = parts.map((values) => {
    let s: Json = agg.init();
    for (const v of values) s = agg.update(s, { v } as Row);
    return [s];
  });
  const merged = buffers.reduce((a, b) => mergeBuffers([agg], a, b));
  return agg.finish(merged[0]);
}

const DOUBLE: DataType = { type: 'DOUBLE' };

describe('the second-moment aggregates', () => {
  it('give the sample and population figures, whatever the split into batches', () => {
    for (const parts of [
      [[2, 4, 4, 4, 5, 5, 7, 9]],
      [
        [2, 4, 4],
        [4, 5],
        [5, 7, 9],
      ],
      [[], [2, 4, 4, 4, 5, 5, 7, 9], []],
    ]) {
      // mean 5, squared deviations 32
      expect(over('var_pop', DOUBLE, parts)).toBeCloseTo(4, 12);
      expect(over('stddev_pop', DOUBLE, parts)).toBeCloseTo(2, 12);
      expect(over('variance', DOUBLE, parts)).toBeCloseTo(32 / 7, 12);
      expect(over('stddev', DOUBLE, parts)).toBeCloseTo(Math.sqrt(32 / 7), 12);
    }
  });

  it("give Spark's documented skewness and kurtosis, one pass or merged from parts", () => {
    for (const parts of [[[-10, -20, 100, 1000]], [[-10], [-20, 100], [1000]], [[-10, -20, 100], [1000]]]) {
      expect(over('skewness', DOUBLE, parts)).toBeCloseTo(1.1135657469022011, 12);
      expect(over('kurtosis', DOUBLE, parts)).toBeCloseTo(-0.7014368047529627, 12);
    }
    expect(over('skewness', DOUBLE, [[-1000, -100, 10, 20]])).toBeCloseTo(-1.1135657469022011, 12);
    expect(
      over('kurtosis', DOUBLE, [
        [1, 10],
        [100, 10, 1],
      ]),
    ).toBeCloseTo(0.19432323191699075, 12);
    // all values equal: m2 is 0, where Spark divides by zero (NULL)
    expect(over('skewness', DOUBLE, [[3, 3], [3]])).toBeNull();
    expect(over('kurtosis', DOUBLE, [[]])).toBeNull();
  });

  it('skip nulls; no value gives NULL, one value NULL for the sample figures and 0 for the population ones', () => {
    expect(over('stddev', DOUBLE, [[null, null]])).toBeNull();
    expect(over('var_pop', DOUBLE, [[]])).toBeNull();
    expect(over('stddev_samp', DOUBLE, [[3, null]])).toBeNull();
    expect(over('var_samp', DOUBLE, [[3]])).toBeNull();
    expect(over('stddev_pop', DOUBLE, [[3]])).toBe(0);
  });

  it('read a DECIMAL, a BIGINT beyond 2^53 and a STRING as the DOUBLE Spark casts them to', () => {
    expect(over('var_pop', { type: 'DECIMAL', precision: 10, scale: 2 }, [['1.50', '2.50']])).toBeCloseTo(0.25, 12);
    expect(over('var_pop', { type: 'LONG' }, [[9007199254740993n, 9007199254740993n]])).toBe(0);
    expect(over('variance', { type: 'STRING' }, [['1', '3']])).toBeCloseTo(2, 12);
  });
});

describe('median', () => {
  it("interpolates between the two middle values as Spark's percentile(x, 0.5), counting repeated values, merged from parts", () => {
    // Spark's documented example: median of 0 and 10 is 5.0
    expect(over('median', DOUBLE, [[0, 10]])).toBe(5);
    for (const parts of [[[1, 2, 3, 4]], [[4, 1], [3], [2]], [[], [2, 4, 3, 1]]]) expect(over('median', DOUBLE, parts)).toBe(2.5);
    expect(over('median', { type: 'INT' }, [[5, 1, null], [3]])).toBe(3);
    // position 1.5 of 1, 1, 1, 10 falls between two 1s
    expect(
      over('median', { type: 'INT' }, [
        [1, 1],
        [1, 10],
      ]),
    ).toBe(1);
    expect(over('median', { type: 'DECIMAL', precision: 10, scale: 2 }, [['1.50'], ['10.25', '2.50']])).toBe(2.5);
    expect(over('median', { type: 'LONG' }, [[9007199254740993n]])).toBe(9007199254740992);
    expect(over('median', DOUBLE, [[null]])).toBeNull();
  });
});

describe('mode', () => {
  it("takes the most frequent non-null value, as Spark's examples show, and the lowest of a tie (Spark 4's mode(x, true))", () => {
    const INT: DataType = { type: 'INT' };
    // Spark's examples: mode of 0, 10, 10 is 10; with three nulls besides, still 10; mode(col, true) of -10, 0, 10 is -10
    expect(over('mode', INT, [[0, 10, 10]])).toBe(10);
    expect(
      over('mode', INT, [
        [0, 10],
        [10, null, null, null],
      ]),
    ).toBe(10);
    expect(over('mode', INT, [[10, 0, -10]])).toBe(-10);
    // counts add up across merged parts: 7 twice in the first, once in the second, against 3 three times in the second
    expect(
      over('mode', INT, [
        [7, 7, 3],
        [3, 3, 7, 7],
      ]),
    ).toBe(7);
    expect(over('mode', INT, [[null], []])).toBeNull();
    expect(
      over('mode', { type: 'STRING' }, [
        ['b', 'a'],
        ['b', 'a', 'c'],
      ]),
    ).toBe('a');
    // a DECIMAL by its value, not its text: 9.50 is lower than 10.00
    expect(over('mode', { type: 'DECIMAL', precision: 10, scale: 2 }, [['10.00', '9.50']])).toBe('9.50');
    expect(over('mode', { type: 'LONG' }, [[9007199254740993n, 9007199254740993n, 1]])).toBe(9007199254740993n);
  });

  it('runs in SQL named mode(x), of the column type; counts a STRUCT by its content; refuses a MAP', async () => {
    const plan = compileSql(`SET outputMode = update;
SELECT k, mode(status), mode(code) AS c FROM STREAM read_files(schema => 'k STRING, status STRING, code INT') GROUP BY k`);
    const { rows } = await runPlanOnce(plan, [
      { k: 'a', status: 'ok', code: 1 },
      { k: 'a', status: 'down', code: 2 },
      { k: 'a', status: 'down', code: null },
      { k: 'b', status: null, code: null },
    ]);
    expect(rows).toEqual([
      { k: 'a', 'mode(status)': 'down', c: 1 },
      { k: 'b', 'mode(status)': null, c: null },
    ]);
    const frame = readStream.format('json').schema('k STRING, code INT, at TIMESTAMP').load().groupBy('k').agg(mode('code'), mode('at'));
    expect(frame.columnsNow_().map((c) => [c.name, c.type])).toEqual([
      ['k', 'STRING'],
      ['mode(code)', 'INT'],
      ['mode(at)', 'TIMESTAMP'],
    ]);
    // each row's STRUCT is an object of its own: equal contents are one value, and of a tie the least
    // in Spark's STRUCT order (field by field) wins
    const structs = compileSql(
      `SET outputMode = update; SELECT k, mode(s) AS m FROM STREAM read_files(schema => 'k STRING, s STRUCT<a: INT, b: STRING>') GROUP BY k`,
    );
    const counted = await runPlanOnce(structs, [
      { k: 'x', s: { a: 2, b: 'q' } },
      { k: 'x', s: { a: 1, b: 'z' } },
      { k: 'x', s: { a: 2, b: 'q' } },
      { k: 'y', s: { a: 3, b: 'p' } },
      { k: 'y', s: { a: 1, b: 'z' } },
      { k: 'y', s: null },
    ]);
    expect(counted.rows).toEqual([
      { k: 'x', m: { a: 2, b: 'q' } },
      { k: 'y', m: { a: 1, b: 'z' } },
    ]);
    expect(() => compileSql(`SET outputMode = update; SELECT k, mode(m) FROM STREAM read_files(schema => 'k STRING, m MAP<STRING, INT>') GROUP BY k`)).toThrow(
      /UNEXPECTED_INPUT_TYPE\] mode\(m\): m is or holds a MAP/,
    );
    // a window column reaches a later aggregation as a STRUCT<start, end>, counted by content too
    const windows = readStream
      .format('json')
      .schema('k STRING, at TIMESTAMP')
      .load()
      .withWatermark('at', '10 minutes')
      .groupBy(window('at', '10 minutes'), 'k')
      .agg(count().as('n'));
    const modes = windows.groupBy('k').agg(mode('window'));
    expect(modes.columnsNow_().map((c) => [c.name, c.type])).toEqual([
      ['k', 'STRING'],
      ['mode(window)', 'STRUCT'],
    ]);
  });

  it("takes Spark 4's deterministic flag and WITHIN GROUP, named as Spark names them (its reverse flag printed as the opposite direction)", async () => {
    // Spark's examples: mode() WITHIN GROUP (ORDER BY col) over 0, 10, 10, 20, 20 is 10; with DESC 20;
    // mode(col, true) over -10, 0, 10 is -10; mode(col, false) returns any of them (here the lowest)
    const plan = compileSql(`SET outputMode = update;
SELECT k, mode(v, true), mode(v, false), mode() WITHIN GROUP (ORDER BY v) AS lo, mode() WITHIN GROUP (ORDER BY v DESC), mode() WITHIN GROUP (ORDER BY v + 1) AS e
FROM STREAM read_files(schema => 'k STRING, v INT') GROUP BY k`);
    const { rows } = await runPlanOnce(
      plan,
      [0, 10, 10, 20, 20].map((v) => ({ k: 'a', v })),
    );
    expect(rows).toEqual([
      {
        k: 'a',
        'mode() WITHIN GROUP (ORDER BY v DESC)': 10,
        'mode(v)': 10,
        lo: 10,
        'mode() WITHIN GROUP (ORDER BY v)': 20,
        e: 11,
      },
    ]);
    const frame = readStream.format('json').schema('k STRING, v INT').load().groupBy('k');
    expect(
      frame
        .agg(mode('v', true))
        .columnsNow_()
        .map((c) => c.name),
    ).toEqual(['k', 'mode() WITHIN GROUP (ORDER BY v DESC)']);
    const q = (select: string) => () => compileSql(`SELECT k, ${select} FROM STREAM read_files(schema => 'k STRING, v INT') GROUP BY k`);
    expect(q('mode()')).toThrow(/WITHIN_GROUP_MISSING\] WITHIN GROUP is required for mode\(\)/);
    expect(q('mode() WITHIN GROUP (ORDER BY v, k)')).toThrow(/WRONG_NUM_ORDERINGS\] The function mode requires 1 orderings in WITHIN GROUP but got 2/);
    expect(q('mode(v, k)')).toThrow(/NON_FOLDABLE_INPUT\] mode's second argument, deterministic, must be a constant BOOLEAN/);
    expect(q('mode(v) WITHIN GROUP (ORDER BY v)')).toThrow(/mode takes no argument with WITHIN GROUP/);
  });
});

describe('percentile', () => {
  const pct = (p: number, parts: unknown[][]) => {
    const agg = compileAgg({ fn: 'percentile', column: 'v', as: 'out', percentage: p }, DOUBLE);
    const buffers = parts.map((values) => {
      let s: Json = agg.init();
      for (const v of values) s = agg.update(s, { v } as Row);
      return [s];
    });
    return agg.finish(buffers.reduce((a, b) => mergeBuffers([agg], a, b))[0]);
  };

  it('takes the value at position (n - 1) p, interpolating between neighbours', () => {
    const tens = [
      [0, 1, 2, 3, 4],
      [5, 6, 7, 8, 9, 10],
    ];
    expect(pct(0.9, tens)).toBe(9);
    expect(pct(0, tens)).toBe(0);
    expect(pct(1, tens)).toBe(10);
    // position 0.75 between 1 and 2
    expect(
      pct(0.25, [
        [4, 1],
        [2, 7],
      ]),
    ).toBe(1.75);
  });

  it('is named percentile(x, p, 1) as Spark names it, and refuses a percentage outside [0, 1]', () => {
    const plan = compileSql(`SET outputMode = update;
SELECT d, percentile(n, 0.95), percentile(n * 2, 0.5) FROM STREAM read_files(schema => 'd STRING, n INT') GROUP BY d`);
    const spec = (plan as unknown as { operators: Array<{ spec: { aggs: Array<{ as: string; percentage?: number }> } }> }).operators[0].spec;
    expect(spec.aggs.map((a) => [a.as, a.percentage])).toEqual([
      ['percentile(n, 0.95, 1)', 0.95],
      ['percentile((n * 2), 0.5, 1)', 0.5],
    ]);
    const frame = readStream.format('json').schema('d STRING, n INT').load('s3://b/in/').groupBy('d').agg(percentile('n', 0.9));
    expect(frame.columnsNow_().map((c) => [c.name, c.type])).toEqual([
      ['d', 'STRING'],
      ['percentile(n, 0.9, 1)', 'DOUBLE'],
    ]);
    expect(() =>
      readStream.format('json').schema('d STRING, n INT').load('s3://b/in/').groupBy('d').agg(percentile('n', 1.5)).writeStream.outputMode('update').plan(),
    ).toThrow(/VALUE_OUT_OF_RANGE\] percentile\(n, 1.5\)/);
  });
});

describe('percentile_cont and percentile_disc', () => {
  it("compute Spark 4's inverse distributions over the values sorted as WITHIN GROUP says, named as Spark names them", async () => {
    // Spark's examples: over 0 and 10, percentile_cont(0.25) is 2.5, percentile_disc(0.25) is 0.0
    const spark = compileSql(`SET outputMode = update;
SELECT percentile_cont(0.25) WITHIN GROUP (ORDER BY v), percentile_disc(0.25) WITHIN GROUP (ORDER BY v) FROM STREAM read_files(schema => 'v INT')`);
    expect((await runPlanOnce(spark, [{ v: 0 }, { v: 10 }])).rows).toEqual([
      { 'percentile_cont(0.25) WITHIN GROUP (ORDER BY v)': 2.5, 'percentile_disc(0.25) WITHIN GROUP (ORDER BY v)': 0 },
    ]);
    // worked by hand over 1 2 3 4: cont(0.25) at position 0.75 is 1.75, descending (4 3 2 1) 3.25;
    // disc(0.5) is the first value whose cumulative count reaches 2: 2, descending 3; disc at 0.25 and 0.75: 1 and 3
    const plan = compileSql(`SET outputMode = update;
SELECT percentile_cont(0.25) WITHIN GROUP (ORDER BY v) AS c, percentile_cont(0.25) WITHIN GROUP (ORDER BY v DESC) AS cd,
  percentile_disc(0.5) WITHIN GROUP (ORDER BY v) AS d, percentile_disc(0.5) WITHIN GROUP (ORDER BY v DESC) AS dd,
  percentile_disc(array(0.25, 0.75)) WITHIN GROUP (ORDER BY v), percentile_disc(0.0) WITHIN GROUP (ORDER BY v * 2) AS z
FROM STREAM read_files(schema => 'v INT')`);
    expect((await runPlanOnce(plan, [{ v: 3 }, { v: 1 }, { v: 4 }, { v: 2 }, { v: null }])).rows).toEqual([
      { c: 1.75, cd: 3.25, d: 2, dd: 3, 'percentile_disc(array(0.25, 0.75)) WITHIN GROUP (ORDER BY v)': [1, 3], z: 2 },
    ]);
  });

  it('need WITHIN GROUP with one key, and a constant percentage', () => {
    const q = (select: string) => () => compileSql(`SELECT ${select} FROM STREAM read_files(schema => 'v INT, w INT')`);
    expect(q('percentile_cont(0.5)')).toThrow(/WITHIN_GROUP_MISSING\] WITHIN GROUP is required for percentile_cont/);
    expect(q('percentile_disc(0.5) WITHIN GROUP (ORDER BY v, w)')).toThrow(/WRONG_NUM_ORDERINGS\] The function percentile_disc requires 1 orderings/);
    expect(q('percentile_cont(w) WITHIN GROUP (ORDER BY v)')).toThrow(/WRONG_NUM_ARGS\] percentile_cont takes one constant percentage/);
  });
});

describe("percentile's frequency", () => {
  // worked by hand: v 1 three times, 5 once (10 has frequency 0, 8 a null frequency, a null v is
  // left out): the values 1 1 1 5; the median's position (4 - 1) x 0.5 = 1.5 falls between two
  // 1s: 1.0; the 90th's, 2.7, between the third 1 and the 5: 0.3 x 1 + 0.7 x 5 = 3.8
  const rows = [
    { k: 'a', v: 1, f: 3 },
    { k: 'a', v: 5, f: 1 },
    { k: 'a', v: 10, f: 0 },
    { k: 'a', v: 8, f: null },
    { k: 'a', v: null, f: 2 },
    { k: 'a', v: 2, f: -1 },
  ];

  it('counts each value its frequency times in SQL, a negative frequency a dead letter that no aggregate of the group counts', async () => {
    const plan = compileSql(`SET outputMode = update;
SELECT k, percentile(v, 0.5, f), percentile(v, 0.9, f) AS p90, percentile(v, 0.5, 1), count(*) AS n FROM STREAM read_files(schema => 'k STRING, v INT, f BIGINT') GROUP BY k`);
    const { rows: out, deadLetters } = await runPlanOnce(plan, rows);
    expect(out).toHaveLength(1);
    expect(out[0]['percentile(v, 0.5, f)']).toBe(1);
    expect(out[0].p90).toBeCloseTo(3.8, 12);
    // the default frequency 1 over the values the negative row leaves: 1 5 10 8 -> (5 + 8) / 2
    expect(out[0]['percentile(v, 0.5, 1)']).toBe(6.5);
    expect(out[0].n).toBe(5);
    const reasons = (deadLetters.all('malformed') as unknown as DeadLetter[]).map((d) => d.reason);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatch(/^\[NEGATIVE_VALUES_IN_FREQUENCY_EXPRESSION\] Found the negative value in `f`: -1/);
  });

  it('refuses a frequency past 2^53 - 1, where its counts would stop being exact', () => {
    const agg = compileAgg({ fn: 'percentile', column: 'v', by: 'f', percentage: 0.5, as: 'p' }, { type: 'INT' }, { type: 'LONG' });
    expect(() => agg.check!({ v: 1, f: 2n ** 60n })).toThrow(/ARITHMETIC_OVERFLOW\] the frequency 1152921504606846976 in `f` is beyond 9007199254740991/);
    expect(() => agg.check!({ v: 1, f: 9007199254740991 })).not.toThrow();
    expect(() => agg.check!({ v: null, f: -4 })).not.toThrow();
  });

  it('is taken by the query API and the F module alike, and must be an integral column', () => {
    const frame = readStream.format('json').schema('k STRING, v INT, f INT, d DOUBLE').load('s3://b/in/').groupBy('k');
    expect(
      frame
        .agg(percentile('v', 0.5, 'f'))
        .columnsNow_()
        .map((c) => c.name),
    ).toEqual(['k', 'percentile(v, 0.5, f)']);
    expect(
      frame
        .agg(F.percentile('v', 0.5, F.col('f')))
        .columnsNow_()
        .map((c) => c.name),
    ).toEqual(['k', 'percentile(v, 0.5, f)']);
    expect(() =>
      frame
        .agg(percentile('v', 0.5, 'd'))
        .writeStream.outputMode('update')
        .plan(),
    ).toThrow(/UNEXPECTED_INPUT_TYPE\] percentile\(v, 0.5, d\): its frequency d is DOUBLE, but percentile's third argument is an integral column/);
    expect(() => compileSql(`SELECT k, percentile(v, 0.5, d) FROM STREAM read_files(schema => 'k STRING, v INT, d DOUBLE') GROUP BY k`)).toThrow(
      /its frequency d is DOUBLE/,
    );
  });
});

describe('listagg and string_agg', () => {
  const COLS = 'k STRING, name STRING, n INT, tags ARRAY<STRING>';
  // worked by hand from Spark's ListAgg: the non-null values as STRING, joined by the delimiter
  // (none by default), NULL over no value; WITHIN GROUP sorts by the keys (descending: nulls
  // last; ascending: nulls first), a stable sort; without it, the order the rows came
  const rows = [
    { k: 'a', name: 'b', n: 2 },
    { k: 'a', name: 'a', n: 3 },
    { k: 'a', name: null, n: 1 },
    { k: 'a', name: 'c', n: null },
    { k: 'b', name: null, n: 1 },
  ];

  it('join the values in SQL, sorted by WITHIN GROUP, named as Spark names them', async () => {
    const plan = compileSql(`SET outputMode = update;
SELECT k, listagg(name), string_agg(name, ', ') AS s, listagg(name, '|') WITHIN GROUP (ORDER BY n DESC), listagg(n) WITHIN GROUP (ORDER BY n) AS ns,
  listagg(name, '-') WITHIN GROUP (ORDER BY upper(name) DESC NULLS FIRST, n) AS two, listagg(name) FILTER (WHERE n > 1) AS f,
  listagg(name, NULL) WITHIN GROUP (ORDER BY n NULLS LAST) AS nl
FROM STREAM read_files(schema => '${COLS}') GROUP BY k`);
    const { rows: out } = await runPlanOnce(plan, rows);
    expect(out).toEqual([
      {
        k: 'a',
        'listagg(name, NULL)': 'bac',
        s: 'b, a, c',
        "listagg(name, '|') WITHIN GROUP (ORDER BY n DESC NULLS LAST)": 'a|b|c',
        ns: '123',
        two: 'c-b-a',
        f: 'ba',
        nl: 'bac',
      },
      {
        k: 'b',
        'listagg(name, NULL)': null,
        s: null,
        "listagg(name, '|') WITHIN GROUP (ORDER BY n DESC NULLS LAST)": null,
        ns: '1',
        two: null,
        f: null,
        nl: null,
      },
    ]);
  });

  it('are taken by the query API and the F module, with the same names', () => {
    const frame = readStream.format('json').schema(COLS).load('s3://b/in/').groupBy('k');
    const names = (b: Parameters<typeof frame.agg>[0]) =>
      frame
        .agg(b)
        .columnsNow_()
        .map((c) => [c.name, c.type]);
    expect(names(listagg('name', ', ', [{ key: 'n', desc: true }]))).toEqual([
      ['k', 'STRING'],
      ["listagg(name, ', ') WITHIN GROUP (ORDER BY n DESC NULLS LAST)", 'STRING'],
    ]);
    expect(names(F.string_agg('name'))).toEqual([
      ['k', 'STRING'],
      ['listagg(name, NULL)', 'STRING'],
    ]);
    expect(names(F.listagg('name', "it's", ['n']))[1][0]).toBe("listagg(name, 'it\\'s') WITHIN GROUP (ORDER BY n ASC NULLS FIRST)");
  });

  it('refuse DISTINCT, a delimiter that is not a constant string, a value of a nested type, and WITHIN GROUP elsewhere', () => {
    const q = (select: string) => () => compileSql(`SELECT k, ${select} FROM STREAM read_files(schema => '${COLS}') GROUP BY k`);
    expect(q('listagg(DISTINCT name)')).toThrow(/listagg\(DISTINCT \.\.\.\) is not supported on a stream/);
    expect(q('listagg(name, k)')).toThrow(/NON_FOLDABLE_INPUT\] listagg's delimiter must be a constant STRING or NULL/);
    expect(q('listagg(tags)')).toThrow(/UNEXPECTED_INPUT_TYPE\] listagg\(tags, NULL\): tags is ARRAY, but listagg takes a STRING/);
    expect(q('sum(n) WITHIN GROUP (ORDER BY n)')).toThrow(/FUNCTION_WITH_UNSUPPORTED_SYNTAX\] sum does not take WITHIN GROUP here/);
    expect(() => readStream.format('json').schema(COLS).load('s3://b/in/').select(expr('upper(name) WITHIN GROUP (ORDER BY n)'))).toThrow(
      /FUNCTION_WITH_UNSUPPORTED_SYNTAX\] The function upper does not support WITHIN GROUP/,
    );
  });
});

describe('count_if, bool_and and bool_or', () => {
  it('count the true values, and are NULL over no non-null value', () => {
    expect(
      over('count_if', { type: 'BOOLEAN' }, [
        [true, null],
        [false, true],
      ]),
    ).toBe(2);
    expect(over('bool_and', { type: 'BOOLEAN' }, [[true, null], [true]])).toBe(true);
    expect(over('every', { type: 'BOOLEAN' }, [[true], [false, null]])).toBe(false);
    expect(over('bool_or', { type: 'BOOLEAN' }, [[false], [null, true]])).toBe(true);
    expect(over('any', { type: 'BOOLEAN' }, [[null], [null]])).toBeNull();
    expect(over('count_if', { type: 'BOOLEAN' }, [[]])).toBe(0);
  });
});

describe('collect_list and collect_set', () => {
  it('keep the non-null values in arrival order; the set keeps each once (NaN as java.lang.Double.equals: one value)', () => {
    expect(over('collect_list', DOUBLE, [[1, null, 1], [2]])).toEqual([1, 1, 2]);
    expect(
      over('collect_set', DOUBLE, [
        [1, Number.NaN, 0],
        [Number.NaN, 1, 3],
      ]),
    ).toEqual([1, Number.NaN, 0, 3]);
    expect(over('collect_set', { type: 'STRUCT', fields: [{ name: 'a', type: 'INT' }] }, [[{ a: 1 }], [{ a: 1 }, { a: 2 }]])).toEqual([{ a: 1 }, { a: 2 }]);
  });
});

describe('in a query', () => {
  const source = () => readStream.format('json').schema('k STRING, x DOUBLE, flag BOOLEAN, t TIMESTAMP, s STRING').load('s3://b/in/');

  it('refuses a non-numeric input of a second-moment aggregate and a non-BOOLEAN one of the boolean aggregates', () => {
    expect(() => source().groupBy('k').agg(stddev('t')).writeStream.outputMode('update').plan()).toThrow(
      /DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE\] stddev\(t\): t is TIMESTAMP/,
    );
    expect(() =>
      source()
        .groupBy('k')
        .agg(boolAnd('x' as never))
        .writeStream.outputMode('update')
        .plan(),
    ).toThrow(/DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE\] bool_and\(x\): x is DOUBLE, but bool_and takes a BOOLEAN/);
    expect(() =>
      source()
        .groupBy('k')
        .agg(median('s' as never))
        .writeStream.outputMode('update')
        .plan(),
    ).toThrow(/DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE\] median\(s\): s is STRING, but median takes a numeric column/);
  });

  it("makes a STRING that is not a number a dead letter that no aggregate of the group counts (Spark's ANSI cast)", async () => {
    const plan = source()
      .groupBy('k')
      .agg(count().as('n'), variance('s' as never).as('v'), countIf('flag').as('c'), collectSet('s').as('set'))
      .writeStream.outputMode('update')
      .plan();
    const { rows, deadLetters } = await runPlanOnce(plan, [
      { k: 'a', s: '1', flag: true },
      { k: 'a', s: 'x', flag: true },
      { k: 'a', s: '3', flag: false },
    ]);
    expect(rows).toEqual([{ k: 'a', n: 2, v: 2, c: 1, set: ['1', '3'] }]);
    expect((deadLetters.all('malformed') as unknown as DeadLetter[]).map((d) => d.reason.slice(0, 21))).toEqual(['[CAST_INVALID_INPUT] ']);
  });
});

describe('max_by and min_by', () => {
  const source = () => readStream.format('json').schema('d STRING, n INT, status STRING, m MAP<STRING, INT>').load('s3://b/in/');

  it("take the value of the row with the largest (smallest) ordering, an expression too, under Spark's names", async () => {
    const plan = source()
      .groupBy('d')
      .agg(maxBy('status', 'n'), minBy(expr('upper(status)'), expr('n * -1')), maxBy('status', expr('n % 2')).as('odd'))
      .writeStream.outputMode('update')
      .plan();
    const { rows } = await runPlanOnce(plan, [
      { d: 'x', n: 1, status: 'a' },
      { d: 'x', n: 3, status: 'b' },
      { d: 'x', n: 2, status: 'c' },
      { d: 'x', n: null, status: 'z' },
    ]);
    // n % 2: 1, 1, 0 (null skipped): the first row with 1 wins the tie
    expect(rows).toEqual([{ d: 'x', 'max_by(status, n)': 'b', 'min_by(upper(status), (n * -1))': 'B', odd: 'a' }]);
  });

  it('are named and read in SQL, and refuse an ordering column sluice cannot order', async () => {
    const plan = compileSql(`SET outputMode = update;
SELECT d, max_by(status, n), min_by(status, n * -1) AS s FROM STREAM read_files(schema => 'd STRING, n INT, status STRING') GROUP BY d`);
    // the ordering expression is read whole: n * -1 is smallest on the row with the largest n
    const { rows } = await runPlanOnce(plan, [
      { d: 'x', n: 1, status: 'a' },
      { d: 'x', n: 3, status: 'b' },
      { d: 'x', n: 2, status: 'c' },
    ]);
    expect(rows).toEqual([{ d: 'x', 'max_by(status, n)': 'b', s: 'b' }]);
    const spec = (plan as unknown as { operators: Array<{ spec: { aggs: Array<{ fn: string; as: string; by?: string }> } }> }).operators[0].spec;
    expect(spec.aggs.map((a) => [a.fn, a.as])).toEqual([
      ['max_by', 'max_by(status, n)'],
      ['min_by', 's'],
    ]);
    expect(() => source().groupBy('d').agg(maxBy('status', 'm')).writeStream.outputMode('update').plan()).toThrow(
      /INVALID_ORDERING_TYPE\] max_by\(status, m\): m is MAP/,
    );
    expect(() => compileSql("SELECT d, max_by(status) FROM STREAM read_files(schema => 'd STRING, status STRING') GROUP BY d")).toThrow(/WRONG_NUM_ARGS/);
  });
});

describe('any_value', () => {
  it("gives the first row's value, null or not, as Spark's examples show, named any_value(x)", async () => {
    const plan = compileSql(`SET outputMode = update;
SELECT k, any_value(col), any_value(col * 2) AS twice FROM STREAM read_files(schema => 'k STRING, col INT') GROUP BY k`);
    // Spark's examples: any_value(col) over (10), (5), (20) is 10; over (NULL), (5), (20) NULL
    const { rows } = await runPlanOnce(plan, [
      { k: 'a', col: 10 },
      { k: 'b', col: null },
      { k: 'a', col: 5 },
      { k: 'b', col: 5 },
      { k: 'a', col: 20 },
      { k: 'b', col: 20 },
    ]);
    expect(rows).toEqual([
      { k: 'a', 'any_value(col)': 10, twice: 20 },
      { k: 'b', 'any_value(col)': null, twice: null },
    ]);
  });
});

describe('percentile_approx', () => {
  /** percentile_approx over `values` at each percentage (the buffer merged from one part a value, as batches merge). */
  const approx = (values: unknown[], p: number, accuracy?: number, type: DataType = { type: 'INT' }) => {
    const agg = compileAgg({ fn: 'percentile_approx', column: 'v', percentage: p, ...(accuracy === undefined ? {} : { accuracy }), as: 'out' }, type);
    const buffers = values.map((v) => [agg.update(agg.init(), { v } as Row)]);
    return agg.finish(buffers.reduce((a, b) => mergeBuffers([agg], a, b), [agg.init()])[0]);
  };

  it("gives Spark's documented values: a value of the column at rank ceil(p n), the least near 0 and the greatest near 1", () => {
    // Spark's examples: percentile_approx(col, array(0.5, 0.4, 0.1), 100) over 0, 1, 2, 10 is [1, 1, 0]
    expect([0.5, 0.4, 0.1].map((p) => approx([0, 1, 2, 10], p, 100))).toEqual([1, 1, 0]);
    // percentile_approx(col, 0.5, 100) over 0, 6, 7, 9, 10 is 7
    expect(approx([10, 0, 9, 6, 7], 0.5, 100)).toBe(7);
    // rank ceil(0.25 × 8) = 2 of 1..8 (not interpolated), repeated values counted each
    expect(approx([8, 7, 6, 5, 4, 3, 2, 1], 0.25)).toBe(2);
    expect(approx([1, 1, 1, 5], 0.75)).toBe(1);
    // within 1/accuracy of 0 or 1: the least or the greatest value
    expect(approx([3, 1, 2], 0.005, 100)).toBe(1);
    expect(approx([3, 1, 2], 0.995, 100)).toBe(3);
    expect(approx([null, null], 0.5)).toBeNull();
  });

  it('keeps the type of its column: a DECIMAL its text, a DATE and a TIMESTAMP their values', () => {
    expect(approx(['1.50', '10.00', '2.25'], 0.5, undefined, { type: 'DECIMAL', precision: 10, scale: 2 })).toBe('2.25');
    expect(approx(['2026-10-02', '2026-09-30', '2026-10-01'], 0.9, undefined, { type: 'DATE' })).toBe('2026-10-02');
  });

  it('is named as Spark names it in SQL, with its accuracy, and refuses what Spark refuses', async () => {
    const plan = compileSql(`SET outputMode = update;
SELECT k, percentile_approx(v, 0.5), approx_percentile(v, 0.25, 100), percentile_approx(v * 2, 0.5) FROM STREAM read_files(schema => 'k STRING, v INT') GROUP BY k`);
    const { rows } = await runPlanOnce(
      plan,
      [0, 6, 7, 9, 10].map((v) => ({ k: 'a', v })),
    );
    expect(rows).toEqual([
      { k: 'a', 'percentile_approx(v, 0.5, 10000)': 7, 'approx_percentile(v, 0.25, 100)': 6, 'percentile_approx((v * 2), 0.5, 10000)': 14 },
    ]);
    const schema = "read_files(schema => 'k STRING, v INT, s STRING')";
    expect(() => compileSql(`SET outputMode = update; SELECT k, percentile_approx(v, 1.5) FROM STREAM ${schema} GROUP BY k`)).toThrow(
      /VALUE_OUT_OF_RANGE.*between 0.0 and 1.0/,
    );
    expect(() => compileSql(`SET outputMode = update; SELECT k, percentile_approx(v, 0.5, 0) FROM STREAM ${schema} GROUP BY k`)).toThrow(
      /accuracy must be a positive integer/,
    );
    expect(() => compileSql(`SET outputMode = update; SELECT k, percentile_approx(s, 0.5) FROM STREAM ${schema} GROUP BY k`)).toThrow(/s is STRING/);
    expect(() => compileSql(`SET outputMode = update; SELECT k, percentile_approx(v) FROM STREAM ${schema} GROUP BY k`)).toThrow(/WRONG_NUM_ARGS/);
  });
});

describe('percentile and percentile_approx at an array of percentages', () => {
  it("give an ARRAY of the figures, as Spark's examples show, named with the array", async () => {
    const plan = compileSql(`SET outputMode = update;
SELECT k, percentile(col, array(0.25, 0.75)), percentile_approx(col, ARRAY(0.5, 0.4, 0.1), 100), approx_percentile(col * 2, array(0.5)) AS twice
FROM STREAM read_files(schema => 'k STRING, col INT') GROUP BY k`);
    const { rows } = await runPlanOnce(plan, [
      { k: 'a', col: 0 },
      { k: 'a', col: 10 },
      { k: 'b', col: 0 },
      { k: 'b', col: 1 },
      { k: 'b', col: 2 },
      { k: 'b', col: 10 },
    ]);
    // Spark's examples: percentile(col, array(0.25, 0.75)) over 0, 10 is [2.5, 7.5]; percentile_approx(col, array(0.5, 0.4, 0.1), 100) over 0, 1, 2, 10 is [1, 1, 0]
    expect(rows.find((r) => r.k === 'a')!['percentile(col, array(0.25, 0.75), 1)']).toEqual([2.5, 7.5]);
    expect(rows.find((r) => r.k === 'b')).toEqual({
      k: 'b',
      'percentile(col, array(0.25, 0.75), 1)': [0.75, 4],
      'percentile_approx(col, array(0.5, 0.4, 0.1), 100)': [1, 1, 0],
      twice: [2],
    });
    const out = plan.operators.find((o) => o.spec.kind === 'aggregate')!;
    expect(out.spec.kind === 'aggregate' && out.spec.aggs.map((a) => a.percentage)).toEqual([[0.25, 0.75], [0.5, 0.4, 0.1], [0.5]]);
    expect(() =>
      compileSql(`SET outputMode = update; SELECT k, percentile(col, array(0.5, 2)) FROM STREAM read_files(schema => 'k STRING, col INT') GROUP BY k`),
    ).toThrow(/VALUE_OUT_OF_RANGE\] percentile\(col, array\(0.5, 2\)\)/);
  });

  it('are typed ARRAY<DOUBLE> (percentile) and an ARRAY of the column type (percentile_approx)', () => {
    const frame = readStream
      .format('json')
      .schema('k STRING, col INT, d DATE')
      .load()
      .groupBy('k')
      .agg(
        percentilesAt('percentile', 'col', [0.5]).as('p').toSpec(),
        percentilesAt('percentile_approx', 'd', [0.5]).as('q').toSpec(),
        percentile('col', 0.5).as('one'),
      );
    expect(frame.columnsNow_().map((c) => [c.name, c.type, c.element?.type])).toEqual([
      ['k', 'STRING', undefined],
      ['p', 'ARRAY', 'DOUBLE'],
      ['q', 'ARRAY', 'DATE'],
      ['one', 'DOUBLE', undefined],
    ]);
  });
});

describe('first, last and any_value with ignoreNulls', () => {
  it("skip null values, as Spark's examples show, named first(x, true)", async () => {
    const plan = compileSql(`SET outputMode = update;
SELECT k, first(col, true), first_value(col, true), last(col, true), any_value(col, true), first(col, false), last(col) FROM STREAM read_files(schema => 'k STRING, col INT') GROUP BY k`);
    // Spark's examples: first(col, true) over NULL, 5, 20 is 5; last(col, true) over 10, 5, NULL is 5
    const { rows } = await runPlanOnce(plan, [
      { k: 'a', col: null },
      { k: 'a', col: 5 },
      { k: 'a', col: 20 },
      { k: 'b', col: 10 },
      { k: 'b', col: 5 },
      { k: 'b', col: null },
    ]);
    expect(rows).toEqual([
      {
        k: 'a',
        'first(col, true)': 5,
        'first_value(col, true)': 5,
        'last(col, true)': 20,
        'any_value(col)': 5,
        'first(col, false)': null,
        'last(col, false)': 20,
      },
      {
        k: 'b',
        'first(col, true)': 10,
        'first_value(col, true)': 10,
        'last(col, true)': 5,
        'any_value(col)': 10,
        'first(col, false)': 10,
        'last(col, false)': null,
      },
    ]);
  });

  it('take IGNORE NULLS after the call (and its FILTER) as the flag true, named as the flag names them; RESPECT NULLS is the default', async () => {
    const plan = compileSql(`SET outputMode = update;
SELECT k, first(col) IGNORE NULLS, last(col) IGNORE NULLS AS l, any_value(col) ignore nulls, first(col) RESPECT NULLS,
  first(col) FILTER (WHERE col > 5) IGNORE NULLS, last(col, true) RESPECT NULLS
FROM STREAM read_files(schema => 'k STRING, col INT') GROUP BY k`);
    const { rows } = await runPlanOnce(plan, [
      { k: 'a', col: null },
      { k: 'a', col: 5 },
      { k: 'a', col: 20 },
      { k: 'a', col: null },
    ]);
    expect(rows).toEqual([
      {
        k: 'a',
        'first(col, true)': 5,
        l: 20,
        'any_value(col)': 5,
        'first(col, false)': null,
        'first(col, true) FILTER (WHERE (col > 5))': 20,
        'last(col, true)': 20,
      },
    ]);
    const schema = "read_files(schema => 'k STRING, col INT')";
    expect(() => compileSql(`SET outputMode = update; SELECT k, sum(col) IGNORE NULLS FROM STREAM ${schema} GROUP BY k`)).toThrow(
      /FUNCTION_WITH_UNSUPPORTED_SYNTAX.*sum does not support IGNORE NULLS/s,
    );
    expect(() => compileSql(`SELECT upper(k) IGNORE NULLS AS u FROM STREAM ${schema}`)).toThrow(
      /FUNCTION_WITH_UNSUPPORTED_SYNTAX.*upper does not support IGNORE NULLS/s,
    );
    // a column may still be named ignore without AS
    expect(compileSql(`SELECT upper(k) ignore FROM STREAM ${schema}`).source).toBeDefined();
  });

  it('carry over batches: a batch of nulls leaves the stored value, the next non-null one is taken', () => {
    const run = (fn: AggFn, parts: unknown[][]) => {
      const agg = compileAgg({ fn, column: 'v', ignoreNulls: true, as: 'out' });
      const buffers = parts.map((values) => [values.reduce<Json>((s, v) => agg.update(s, { v } as Row), agg.init())]);
      return agg.finish(buffers.reduce((a, b) => mergeBuffers([agg], a, b))[0]);
    };
    expect(run('first', [[null], [null, 7], [8]])).toBe(7);
    expect(run('last', [[3], [null], [null]])).toBe(3);
    expect(run('first', [[null], []])).toBeNull();
  });

  it('are named with the flag in the query API, and refuse a flag that is not a literal', () => {
    expect([first('amount', true).name, last(expr('amount + 1'), true).name, first('amount').name]).toEqual([
      'first(amount, true)',
      'last(amount + 1, true)',
      'first(amount, false)',
    ]);
    expect(() => compileSql(`SET outputMode = update; SELECT k, first(col, col > 1) FROM STREAM read_files(schema => 'k STRING, col INT') GROUP BY k`)).toThrow(
      /WRONG_NUM_ARGS.*ignoreNulls flag/s,
    );
  });
});

describe('bit_and, bit_or, bit_xor and product', () => {
  it("give Spark's documented values, of the column's type", () => {
    // Spark's examples: over 3 and 5, bit_and 1, bit_or 7, bit_xor 6; product over 1, 2, 3 is 6.0
    expect(over('bit_and', { type: 'INT' }, [[3, 5]])).toBe(1);
    expect(over('bit_or', { type: 'INT' }, [[3], [5]])).toBe(7);
    expect(over('bit_xor', { type: 'INT' }, [[3, null, 5]])).toBe(6);
    expect(over('product', { type: 'INT' }, [[1, 2], [3]])).toBe(6);
    // no non-null value: NULL
    expect(over('bit_and', { type: 'INT' }, [[null]])).toBeNull();
    expect(over('product', { type: 'DOUBLE' }, [[]])).toBeNull();
    // negative values in two's complement; a TINYINT's xor stays in its range
    expect(over('bit_and', { type: 'INT', bits: 8 }, [[-1, 5]])).toBe(5);
    expect(over('bit_xor', { type: 'INT', bits: 8 }, [[-1, 1]])).toBe(-2);
  });

  it('keep a BIGINT exact beyond 2^53 (64-bit, not the 32 bits of JS operators)', () => {
    expect(over('bit_or', { type: 'LONG' }, [[9007199254740993n, 2]])).toBe(9007199254740995n);
    expect(over('bit_and', { type: 'LONG' }, [[0x100000000, 0x1ffffffff]])).toBe(0x100000000);
    expect(over('bit_xor', { type: 'LONG' }, [[-9223372036854775808n, -1]])).toBe(9223372036854775807n);
  });

  it('are read in SQL under their names, and refuse a column that is not integral (bit_*) or numeric (product)', async () => {
    const plan = compileSql(`SET outputMode = update;
SELECT k, bit_and(v), bit_or(v), bit_xor(v), product(v) FROM STREAM read_files(schema => 'k STRING, v INT') GROUP BY k`);
    const { rows } = await runPlanOnce(
      plan,
      [3, 5].map((v) => ({ k: 'a', v })),
    );
    expect(rows).toEqual([{ k: 'a', 'bit_and(v)': 1, 'bit_or(v)': 7, 'bit_xor(v)': 6, 'product(v)': 15 }]);
    const schema = "read_files(schema => 'k STRING, v INT, d DOUBLE, b BOOLEAN')";
    expect(() => compileSql(`SET outputMode = update; SELECT k, bit_or(d) FROM STREAM ${schema} GROUP BY k`)).toThrow(
      /bit_or\(d\): d is DOUBLE, but bit_or takes an integral column/,
    );
    expect(() => compileSql(`SET outputMode = update; SELECT k, product(b) FROM STREAM ${schema} GROUP BY k`)).toThrow(
      /product\(b\): b is BOOLEAN, which cannot be multiplied/,
    );
  });
});
