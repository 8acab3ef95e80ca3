/**
 * try_sum and try_avg (aggregates.ts tryAgg): sum and avg whose overflow makes the group's
 * aggregate NULL, for good, instead of a dead letter. Expectations from Spark's function docs
 * (try_sum of 5, 10, 15 is 30; of NULL, 10, 15 is 25; of NULL, NULL is NULL; of
 * 9223372036854775807L and 1L is NULL; try_avg of 1, 2, 3 is 2.0; of NULL, 1, 2 is 1.5) and by hand
 * from the type ranges (BIGINT up to 2^63 − 1; a DECIMAL(38,0) sum is DECIMAL(38,0), its avg
 * DECIMAL(38,4), which holds 34 integer digits).
 */
import { compileAgg, mergeBuffers } from '../../lib/engine/aggregates';
import type { DeadLetter, Json, Row } from '../../lib/engine/ports';
import type { AggFn } from '../../lib/engine/plan/types';
import { readStream } from '../../lib/engine/query/reader';
import { trySum, tryAvg } from '../../lib/engine/query/functions';
import { compileSql } from '../../lib/engine/sql';
import type { DataType } from '../../lib/engine/schema';
import { runPlanOnce } from '../helpers/run-plan';

const LONG: DataType = { type: 'LONG' };
const MAX_LONG = '9223372036854775807';

/** The aggregate over `parts`, each part one batch's buffer, merged in order (as batches merge into state). */
function over(fn: AggFn, type: DataType, parts: unknown[][]): unknown {
  const agg = compileAgg({ fn, column: 'v', as: 'out' }, type);
  const buffers = parts.map((values) => [values.reduce<Json>((s, v) => agg.update(s, { v } as Row), agg.init())]);
  return agg.finish(buffers.reduce((a, b) => mergeBuffers([agg], a, b))[0]);
}

describe('try_sum and try_avg', () => {
  it("give Spark's documented results, NULL where the sum overflows", async () => {
    const plan = compileSql(`SET outputMode = update;
SELECT k, try_sum(v), try_avg(v), try_sum(n) FROM STREAM read_files(schema => 'k STRING, v INT, n BIGINT') GROUP BY k`);
    const lines = [
      '{"k":"a","v":5,"n":1}',
      '{"k":"a","v":10,"n":2}',
      '{"k":"a","v":15,"n":3}',
      '{"k":"b","v":null,"n":null}',
      '{"k":"b","v":10,"n":null}',
      '{"k":"b","v":15,"n":null}',
      '{"k":"c","v":null,"n":9223372036854775807}',
      '{"k":"c","v":null,"n":1}',
    ].join('\n');
    const { rows, deadLetters } = await runPlanOnce(plan, lines);
    const byK = Object.fromEntries(rows.map((r) => [r.k, r]));
    expect(byK.a).toEqual({ k: 'a', 'try_sum(v)': 30, 'try_avg(v)': 10, 'try_sum(n)': 6 });
    expect(byK.b).toEqual({ k: 'b', 'try_sum(v)': 25, 'try_avg(v)': 12.5, 'try_sum(n)': null });
    // the BIGINT sum passes 2^63 − 1: NULL, and no row is refused
    expect(byK.c).toEqual({ k: 'c', 'try_sum(v)': null, 'try_avg(v)': null, 'try_sum(n)': null });
    expect(deadLetters.all('malformed')).toEqual([]);
  });

  it('keep an overflowed sum NULL in later batches, whatever they add', () => {
    expect(over('try_sum', LONG, [[BigInt(MAX_LONG)], [1], [-5]])).toBeNull();
    expect(over('try_sum', LONG, [[BigInt(MAX_LONG)], [-5]])).toBe(BigInt(MAX_LONG) - 5n);
    expect(over('try_sum', LONG, [[BigInt(MAX_LONG), 1, -5]])).toBeNull();
    expect(over('try_avg', LONG, [[1, 2], [null], [3]])).toBe(2);
  });

  it('make a DECIMAL sum beyond 38 digits, and an avg beyond its type, NULL', () => {
    const dec: DataType = { type: 'DECIMAL', precision: 38, scale: 0 };
    const nines = '9'.repeat(38);
    expect(over('try_sum', dec, [[nines], ['1']])).toBeNull();
    expect(over('try_sum', dec, [[nines], ['-1']])).toBe(`${'9'.repeat(37)}8`);
    // avg is DECIMAL(38,4): 34 integer digits, so the avg of 37-digit values does not fit
    expect(over('try_avg', dec, [['1'.repeat(37), '1'.repeat(37)]])).toBeNull();
    expect(over('try_avg', dec, [['1', '2']])).toBe('1.5000');
  });

  it('still send a STRING that is not a number to the dead letters, and a sum beside them still refuses its overflowing row', async () => {
    const plan = compileSql(`SET outputMode = update;
SELECT k, try_sum(s), count(*) AS n FROM STREAM read_files(schema => 'k STRING, s STRING') GROUP BY k`);
    const { rows, deadLetters } = await runPlanOnce(plan, [
      { k: 'a', s: '1.5' },
      { k: 'a', s: 'x' },
    ]);
    expect(rows).toEqual([{ k: 'a', 'try_sum(s)': 1.5, n: 1 }]);
    expect((deadLetters.all('malformed') as unknown as DeadLetter[]).map((d) => d.reason)).toEqual([expect.stringMatching(/^\[CAST_INVALID_INPUT\]/)]);

    const both = compileSql(`SET outputMode = update;
SELECT k, sum(n), try_sum(n) FROM STREAM read_files(schema => 'k STRING, n BIGINT') GROUP BY k`);
    const run = await runPlanOnce(both, ['{"k":"a","n":9223372036854775807}', '{"k":"a","n":1}'].join('\n'));
    // sum refuses the row that overflows it, and no aggregate of the group counts it
    expect(run.rows).toEqual([{ k: 'a', 'sum(n)': MAX_LONG, 'try_sum(n)': MAX_LONG }]);
    expect((run.deadLetters.all('malformed') as unknown as DeadLetter[]).map((d) => d.reason)).toEqual([expect.stringMatching(/^\[ARITHMETIC_OVERFLOW\]/)]);
  });

  it("type and name their outputs as sum's and avg's", () => {
    const frame = readStream
      .format('json')
      .schema('k STRING, i INT, d DECIMAL(10,2)')
      .load()
      .groupBy('k')
      .agg(trySum('i'), tryAvg('i'), trySum('d'), tryAvg('d'));
    expect(frame.columnsNow_().map((c) => [c.name, c.type, c.precision, c.scale])).toEqual([
      ['k', 'STRING', undefined, undefined],
      ['try_sum(i)', 'LONG', undefined, undefined],
      ['try_avg(i)', 'DOUBLE', undefined, undefined],
      ['try_sum(d)', 'DECIMAL', 20, 2],
      ['try_avg(d)', 'DECIMAL', 14, 6],
    ]);
    expect(() => compileSql(`SET outputMode = update; SELECT k, try_sum(t) FROM STREAM read_files(schema => 'k STRING, t TIMESTAMP') GROUP BY k`)).toThrow(
      /UNEXPECTED_INPUT_TYPE\] try_sum\(t\): t is TIMESTAMP, which cannot be summed/,
    );
  });
});
