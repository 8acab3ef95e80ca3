/**
 * min and max (and max_by's ordering) of an ARRAY or a STRUCT: Spark's interpreted orderings, an
 * array element by element (a null element first) and then the shorter first, a struct field by
 * field. Expected values worked by hand from Spark's PhysicalArrayType.interpretedOrdering.
 */
import { compileAgg, lessFor } from '../../lib/engine/aggregates';
import type { Json, Row } from '../../lib/engine/ports';
import { type DataType, WINDOW_STRUCT } from '../../lib/engine/schema';
import { aggOutputType } from '../../lib/engine/plan/columns';
import { max, maxBy, min, minBy } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { expr } from '../../lib/engine/query/column';
import { runPlanOnce } from '../helpers/run-plan';

const ARRAY_INT: DataType = { type: 'ARRAY', element: { type: 'INT' } };
const STRUCT: DataType = {
  type: 'STRUCT',
  fields: [
    { name: 'a', type: 'INT' },
    { name: 'b', type: 'STRING' },
  ],
};

function run(fn: 'min' | 'max', t: DataType, values: unknown[]): unknown {
  const agg = compileAgg({ fn, column: 'v', as: 'r' }, t);
  let s = agg.init();
  for (const v of values) s = agg.update(s, { v } as Row);
  return agg.finish(s as Json);
}

describe('min and max of nested values', () => {
  it('orders arrays element by element, a null element first, then by length', () => {
    const values = [[10], [9, 100], [10, null], [null], [10, 5]];
    expect(run('max', ARRAY_INT, values)).toEqual([10, 5]);
    expect(run('min', ARRAY_INT, values)).toEqual([null]);
    expect(run('max', ARRAY_INT, [[10], [9, 100]])).toEqual([10]);
    expect(run('min', ARRAY_INT, [[1, 2], [1], []])).toEqual([]);
  });

  it('orders structs field by field, a null field first', () => {
    const values = [
      { a: 1, b: 'x' },
      { a: null, b: 'z' },
      { a: 1, b: 'y' },
      { a: 0, b: null },
    ];
    expect(run('max', STRUCT, values)).toEqual({ a: 1, b: 'y' });
    expect(run('min', STRUCT, values)).toEqual({ a: null, b: 'z' });
  });

  it('orders strings inside arrays by code point', () => {
    const less = lessFor({ type: 'ARRAY', element: { type: 'STRING' } });
    expect(less(['\uFF21'], ['\u{1F600}'])).toBe(true);
    expect(less(['\u{1F600}'], ['\uFF21'])).toBe(false);
  });
});

describe('ordering checks', () => {
  const source = () => readStream.format('json').schema('d STRING, v STRING, rank ARRAY<INT>, st STRUCT<n: INT, m: MAP<STRING, INT>>').load('s3://b/in/');

  it('refuse min and max of a MAP or of a STRUCT holding one, as Spark does', () => {
    expect(() => source().groupBy('d').agg(max('st')).writeStream.outputMode('update').plan()).toThrow(/INVALID_ORDERING_TYPE\] max\(st\)/);
    expect(() =>
      source()
        .groupBy('d')
        .agg(min(expr('st.m')))
        .writeStream.outputMode('update')
        .plan(),
    ).toThrow(/INVALID_ORDERING_TYPE\] min\(st\.m\): the `min` does not support ordering on type MAP: its input is or holds a MAP/);
    // (an expression's input column is the query's own, `__agg0`: never named to the user)
    expect(() =>
      source()
        .groupBy('d')
        .agg(min(expr('st.m')).alias('x'))
        .writeStream.outputMode('update')
        .plan(),
    ).toThrow(/^(?!.*__agg)\[DATATYPE_MISMATCH\.INVALID_ORDERING_TYPE\] x: /);
  });

  it('let max_by and min_by order by an ARRAY, as Spark does', async () => {
    const plan = source().groupBy('d').agg(maxBy('v', 'rank').alias('best'), minBy('v', 'rank').alias('worst')).writeStream.outputMode('update').plan();
    const { rows } = await runPlanOnce(plan, [
      { d: 'x', v: 'p', rank: [1, 2] },
      { d: 'x', v: 'q', rank: [1, 10] },
      { d: 'x', v: 'r', rank: [null] },
    ]);
    expect(rows).toEqual([{ d: 'x', best: 'q', worst: 'r' }]);
  });
});

describe('min and max of a window column', () => {
  it('order windows by start, then end, and type the result as STRUCT<start, end>', () => {
    const windowColumn = { name: 'window', type: 'TIMESTAMP' as const, window: true };
    const values = [
      { start: 5_000_000, end: 10_000_000 },
      { start: 10_000_000, end: 15_000_000 },
      { start: 0, end: 5_000_000 },
    ];
    expect(run('max', windowColumn, values)).toEqual({ start: 10_000_000, end: 15_000_000 });
    expect(run('min', windowColumn, values)).toEqual({ start: 0, end: 5_000_000 });
    expect(aggOutputType({ fn: 'max', column: 'window', as: 'w' }, [windowColumn])).toEqual(WINDOW_STRUCT);
  });
});

describe('approx_count_distinct of a window column', () => {
  it('hashes each window by its start and end, as a STRUCT', () => {
    const windowColumn = { name: 'window', type: 'TIMESTAMP' as const, window: true };
    const agg = compileAgg({ fn: 'approxCountDistinct', column: 'v', as: 'n' }, windowColumn);
    let s = agg.init();
    for (const start of [0, 5_000_000, 10_000_000, 5_000_000]) s = agg.update(s, { v: { start, end: start + 5_000_000 } } as Row);
    expect(agg.finish(s as Json)).toBe(3);
  });
});
