/**
 * NaN and the infinities, as Spark has them: a group of their own each (apart from null), the
 * top of the order of doubles for NaN (max is NaN, min passes it over), and values that survive
 * being stored as text.
 */
import { compileAgg } from '../../lib/engine/aggregates';
import { stateId } from '../../lib/engine/operators/state-id';
import type { Json } from '../../lib/engine/ports';
import { count, max, min, sum } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { decodeStateJson, encodeStateJson } from '../../lib/engine/state-json';
import { createTestRunner } from './engine-factories';

describe('state values as text', () => {
  it('reads back NaN and the infinities wherever they are', () => {
    const values: Json[] = [
      NaN,
      -Infinity,
      [NaN, 1, null, 'NaN'],
      { k: [[0, 1], Infinity], b: [null, [NaN, 3]], s: 'null' },
      { '~': 'NaN', n: [[['~'], 'NaN']], x: -Infinity },
    ];
    for (const v of values) expect(decodeStateJson(encodeStateJson(v))).toEqual(v);
  });

  it('writes values without them as plain JSON, which reads as before', () => {
    const values: Json[] = [null, 0, -0, 'x', '~', [1, null, 'null'], { a: { b: [true, 'NaN'] } }];
    for (const v of values) {
      expect(encodeStateJson(v)).toBe(JSON.stringify(v));
      expect(decodeStateJson(JSON.stringify(v))).toEqual(JSON.parse(JSON.stringify(v)));
    }
  });
});

describe('grouping ids', () => {
  it('keep NaN, Infinity, -Infinity and null apart, and are JSON otherwise', () => {
    const ids = [NaN, Infinity, -Infinity, null].map((v) => stateId([[0, 600_000], v]));
    expect(new Set(ids).size).toBe(4);
    const kv = [[0, 600_000], 'a"b', 1.5, -0, true, null];
    expect(stateId(kv)).toBe(JSON.stringify(kv));
  });
});

describe('min and max', () => {
  const fold = (fn: 'min' | 'max', values: unknown[]) => {
    const agg = compileAgg({ fn, column: 'v', as: fn });
    let s = agg.init();
    for (const v of values) s = agg.update(s, { v });
    return agg.finish(s);
  };

  it('put NaN above every other double, Infinity included', () => {
    expect(fold('max', [1, NaN, Infinity, null])).toBeNaN();
    expect(fold('min', [NaN, 3, -Infinity, 2])).toBe(-Infinity);
    expect(fold('min', [NaN, 3, NaN])).toBe(3);
    expect(fold('min', [NaN, null])).toBeNaN();
    expect(fold('max', [null, null])).toBeNull();
  });

  it('merge the same way', () => {
    const agg = compileAgg({ fn: 'max', column: 'v', as: 'max' });
    expect(agg.merge(5, NaN)).toBeNaN();
    expect(agg.merge(NaN, 5)).toBeNaN();
    const lo = compileAgg({ fn: 'min', column: 'v', as: 'min' });
    expect(lo.merge(NaN, 5)).toBe(5);
    expect(lo.merge(null, NaN)).toBeNaN();
  });
});

describe('a query grouped by a DOUBLE column holding NaN, the infinities and null', () => {
  it('keeps one group for each across scheduled runs (each run a fresh executor, reading its state back)', async () => {
    const plan = readStream
      .format('json')
      .schema('x DOUBLE, v DOUBLE')
      .load()
      .groupBy('x')
      .agg(count().as('n'), sum('v').as('total'), max('v').as('hi'), min('v').as('lo'))
      .writeStream.outputMode('update')
      .trigger({ availableNow: true })
      .queryName('non-finite-groups')
      .plan();
    const t = createTestRunner(plan);
    // JSON has no NaN: the lines spell it as Spark reads it, a string. Group k gets k + 1 rows in
    // the first run (so that groups mixed up in the state would show in the counts), then two.
    const keys = ['"NaN"', '"Infinity"', '"-Infinity"', 'null', '1'];
    t.drop(keys.flatMap((x, k) => Array.from({ length: k + 1 }, () => `{"x":${x},"v":2}`)).join('\n'));
    await t.run();
    t.drop(keys.flatMap((x) => [`{"x":${x},"v":"NaN"}`, `{"x":${x},"v":10}`]).join('\n'));
    const second = await t.run();
    const rows = second.batches.flatMap((b) => b.rows);
    // (output rows spell a non-finite double as Spark's JSON writer does: "NaN", "Infinity")
    const got = Object.fromEntries(rows.map((r) => [String(r.x), { n: r.n, total: r.total, hi: r.hi, lo: r.lo }]));
    expect(got).toEqual(Object.fromEntries(['NaN', 'Infinity', '-Infinity', 'null', '1'].map((x, k) => [x, { n: k + 3, total: 'NaN', hi: 'NaN', lo: 2 }])));
  });
});
