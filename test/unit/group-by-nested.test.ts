/**
 * Grouping by an ARRAY or a STRUCT: equal values are one group, as Spark compares grouping keys by
 * content, with a DOUBLE's -0.0 inside made 0.0 (NormalizeFloatingNumbers), NaN one value and not
 * null. Expected groups worked by hand.
 */
import { count, sum } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { groupingKey, stateId } from '../../lib/engine/operators/state-id';
import { runPlanOnce } from '../helpers/run-plan';

describe('grouping by nested values', () => {
  it('puts equal arrays and structs in one group', async () => {
    const plan = readStream
      .format('json')
      .schema('tags ARRAY<STRING>, pt STRUCT<x: DOUBLE>, v INT')
      .load('s3://b/in/')
      .groupBy('tags', 'pt')
      .agg(count('*').alias('n'), sum('v').alias('total'))
      .writeStream.outputMode('update')
      .plan();
    const { rows } = await runPlanOnce(plan, [
      { tags: ['a', 'b'], pt: { x: -0 }, v: 1 },
      { tags: ['a', 'b'], pt: { x: 0 }, v: 2 },
      { tags: ['b', 'a'], pt: { x: 0 }, v: 4 },
      { tags: ['a', null], pt: null, v: 8 },
      { tags: ['a', null], pt: null, v: 16 },
    ]);
    expect(rows.map((r) => [r.tags, r.n, r.total])).toEqual([
      [['a', 'b'], 2, 3],
      [['b', 'a'], 1, 4],
      [['a', null], 2, 24],
    ]);
  });

  it('keys NaN inside a value apart from null, and -0.0 as 0.0', () => {
    expect(groupingKey([Number.NaN])).not.toEqual(groupingKey([null]));
    expect(groupingKey([-0])).toEqual(groupingKey([0]));
    expect(groupingKey({ x: Number.POSITIVE_INFINITY })).not.toEqual(groupingKey({ x: null }));
    expect(stateId([[Number.NaN, 1] as never])).not.toEqual(stateId([[null, 1]]));
    expect(groupingKey('s')).toBe('s');
  });
});
