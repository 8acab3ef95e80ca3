/**
 * The numeric slots (lib/engine/operators/numeric-slots.ts) stand in for initBuffer and
 * updateBuffer when every aggregation is count, sum or avg: the buffers they give must be the
 * very ones the generic path gives, bit for bit (-0, NaN, strings cast to numbers, nulls).
 */
import { compileAgg, initBuffer, updateBuffer, type CompiledAgg } from '../../lib/engine/aggregates';
import { NumericSlots } from '../../lib/engine/operators/numeric-slots';
import type { Row } from '../../lib/engine/ports';
import type { AggSpec } from '../../lib/engine/plan/types';
import { max, sum } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { runPlanOnce } from '../helpers/run-plan';

const specs: AggSpec[] = [
  { fn: 'count', as: 'rows' },
  { fn: 'count', column: 'x', as: 'xs' },
  { fn: 'sum', column: 'x', as: 'total' },
  { fn: 'avg', column: 'x', as: 'mean' },
  { fn: 'sum', column: 'y', as: 'ys' },
];

/** A deterministic stream of numbers in [0, 1). */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

// (text that is not a number, 'abc' or '', is a row error of a STRING column's cast, checked before any add: aggregates.ts `check`)
const values: unknown[] = [null, undefined, 0, -0, 1.5, -2, 1e300, NaN, Infinity, ' 3 ', '1.5d', 'inf', true, { a: 1 }];

describe('NumericSlots', () => {
  it('is only for count, sum and avg', () => {
    expect(NumericSlots.of(specs.map((a) => compileAgg(a)))).not.toBeNull();
    expect(NumericSlots.of([compileAgg({ fn: 'max', column: 'x', as: 'm' })])).toBeNull();
    expect(NumericSlots.of([compileAgg({ fn: 'count', as: 'n' }), compileAgg({ fn: 'first', column: 'x', as: 'f' })])).toBeNull();
  });

  it('gives the buffers initBuffer and updateBuffer give, over many groups and rows (growing past its first size)', () => {
    const aggs: CompiledAgg[] = specs.map((a) => compileAgg(a));
    const slots = NumericSlots.of(aggs)!;
    const rand = lcg(7);
    const groups = 3000;
    const expected = new Map<number, ReturnType<typeof initBuffer>>();
    for (let step = 0; step < 20_000; step++) {
      const slot = Math.floor(rand() * groups);
      if (!expected.has(slot)) {
        expected.set(slot, initBuffer(aggs));
        slots.reset(slot);
      }
      const row: Row = {};
      const x = values[Math.floor(rand() * values.length)];
      const y = values[Math.floor(rand() * values.length)];
      if (x !== undefined) row.x = x as Row[string];
      if (y !== undefined) row.y = y as Row[string];
      updateBuffer(aggs, expected.get(slot)!, row);
      slots.add(slot, row);
    }
    for (const [slot, buffer] of expected) expect(slots.buffer(slot)).toEqual(buffer);
    // toEqual does not tell -0 from 0: Object.is does
    for (const [slot, buffer] of expected) {
      const got = slots.buffer(slot);
      buffer.forEach((v, i) => {
        if (typeof v === 'number') expect(Object.is(got[i], v)).toBe(true);
      });
    }
  });

  it('gives 0.0 as the sum and the average of -0.0 alone (Spark adds to 0.0), and null as the sum of nothing', () => {
    const aggs = [compileAgg({ fn: 'sum', column: 'x', as: 's' }), compileAgg({ fn: 'avg', column: 'x', as: 'a' })];
    const slots = NumericSlots.of(aggs)!;
    slots.reset(0);
    slots.add(0, { x: -0 });
    slots.add(0, { x: -0 });
    const generic = initBuffer(aggs);
    updateBuffer(aggs, generic, { x: -0 });
    updateBuffer(aggs, generic, { x: -0 });
    for (const buffer of [slots.buffer(0), generic]) {
      expect(Object.is(buffer[0], 0)).toBe(true);
      expect(Object.is((buffer[1] as number[])[0], 0)).toBe(true);
      expect(Object.is(aggs[1].finish(buffer[1]), 0)).toBe(true);
    }
    slots.reset(1);
    slots.add(1, { x: null });
    expect(slots.buffer(1)).toEqual([null, [0, 0]]);
  });

  it('emits 0.0 for a group whose DOUBLE values are all -0.0, with the numeric slots and without', async () => {
    for (const agg of [[sum('v').as('s')], [sum('v').as('s'), max('v').as('m')]]) {
      const plan = readStream
        .format('json')
        .schema('k STRING, v DOUBLE')
        .load()
        .groupBy('k')
        .agg(...agg)
        .writeStream.outputMode('update')
        .plan();
      const { rows } = await runPlanOnce(plan, '{"k":"a","v":-0.0}\n{"k":"a","v":-0.0}\n');
      expect(rows).toHaveLength(1);
      expect(Object.is(rows[0].s, 0)).toBe(true);
    }
  });

  it('starts a group over on reset', () => {
    const slots = NumericSlots.of(specs.map((a) => compileAgg(a)))!;
    slots.reset(5);
    slots.add(5, { x: 2, y: 3 });
    slots.reset(5);
    expect(slots.buffer(5)).toEqual(initBuffer(specs.map((a) => compileAgg(a))));
  });

  it('tells the first touch of a group in a batch (and resets it then) from the next ones, past its first size too', () => {
    const aggs = [compileAgg({ fn: 'count', as: 'n' })];
    const slots = NumericSlots.of(aggs)!;
    for (const slot of [0, 3, 5000]) {
      expect(slots.touch(slot, 0)).toBe(true);
      slots.add(slot, {});
      expect(slots.touch(slot, 0)).toBe(false);
      slots.add(slot, {});
      expect(slots.buffer(slot)).toEqual([2]);
      // the next batch starts the group over
      expect(slots.touch(slot, 1)).toBe(true);
      slots.add(slot, {});
      expect(slots.buffer(slot)).toEqual([1]);
    }
    // a new group in a slot, or every group afresh: touched again even in the same batch
    slots.unmark(3);
    expect(slots.touch(3, 1)).toBe(true);
    expect(slots.buffer(3)).toEqual([0]);
    expect(slots.touch(5000, 1)).toBe(false);
    slots.unmarkAll();
    expect(slots.touch(5000, 1)).toBe(true);
    expect(slots.touch(0, 1)).toBe(true);
  });
});
